// plan_gradient_buckets (see buckets.h).
#include "training/distributed/buckets.h"

#include <string>

namespace ucudnn::distributed {

Expected<std::vector<GradientBucket>> plan_gradient_buckets(const std::vector<size_t>& offsets, size_t total_bytes,
                                                            size_t cap_bytes) {
  if (cap_bytes == 0) return invalid_argument("the gradient bucket size must be at least one byte");
  if (total_bytes % sizeof(float) != 0)
    return invalid_argument("the gradient allocation's " + std::to_string(total_bytes) + " bytes are not whole floats");
  for (size_t k = 0; k < offsets.size(); ++k) {
    const size_t next = k + 1 < offsets.size() ? offsets[k + 1] : total_bytes;
    if ((k == 0 && offsets[k] != 0) || offsets[k] > next || offsets[k] % sizeof(float) != 0)
      return invalid_argument("gradient offset " + std::to_string(offsets[k]) + " of parameter " + std::to_string(k) +
                              " is not float-aligned, increasing from 0 and within the " +
                              std::to_string(total_bytes) + " bytes");
  }
  std::vector<GradientBucket> buckets;
  if (offsets.empty()) return buckets;
  GradientBucket open{offsets.back(), total_bytes, offsets.size() - 1, offsets.size()};
  for (size_t k = offsets.size() - 1; k-- > 0;) {
    if (open.end - offsets[k] > cap_bytes) {  // parameter k would take the open bucket past the cap
      buckets.push_back(open);
      open = {offsets[k], open.begin, k, open.first_parameter};
    } else {
      open.begin = offsets[k];
      open.first_parameter = k;
    }
  }
  buckets.push_back(open);
  return buckets;
}

}  // namespace ucudnn::distributed
