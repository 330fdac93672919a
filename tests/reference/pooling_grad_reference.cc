// Naive double-precision references of the pooling_grad family: STUB, filled by the family's owner.
#include "tests/reference/training_reference.h"

namespace ucudnn::reference {

Expected<std::vector<Tensor>> pooling_grad_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  (void)inputs;
  return unsupported("no reference for " + node.describe() + " yet");
}

}  // namespace ucudnn::reference
