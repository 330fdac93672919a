// SingleRankCommunicator and the checks every communicator shares (see communicator.h).
#include "training/distributed/communicator.h"

#include <string>

namespace ucudnn::distributed {

Status check_root(const Communicator& communicator, int root) {
  if (root < 0 || root >= communicator.size())
    return invalid_argument(std::string(communicator.name()) + " broadcast: root rank " + std::to_string(root) +
                            " is outside the " + std::to_string(communicator.size()) + " ranks");
  return Status::ok();
}

Status SingleRankCommunicator::all_reduce_host(double*, size_t count, ReduceOp) {
  if (count > kMaxHostValues)
    return invalid_argument("all_reduce_host takes at most " + std::to_string(kMaxHostValues) + " values, got " +
                            std::to_string(count));
  return Status::ok();
}

Status SingleRankCommunicator::broadcast(void*, size_t, int root) { return check_root(*this, root); }

}  // namespace ucudnn::distributed
