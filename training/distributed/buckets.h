// Gradient buckets: how data-parallel training cuts the gradients into all-reductions, as PyTorch's
// DistributedDataParallel does (about 25 MiB each, the parameters in reverse order: backward
// produces the last layers' gradients first).
//
// The trainer keeps every gradient in one allocation, parameter k at offsets[k] (increasing, the
// first at 0, each padded up to the next), so a bucket is one contiguous byte range of it.
// A pure function over plain numbers (tests/ddp_test.cc).
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/core/status.h"

namespace ucudnn::distributed {

constexpr size_t kDefaultBucketBytes = size_t{25} << 20;  // PyTorch DDP's bucket_cap_mb

// Bytes [begin, end) of the gradient allocation, holding parameters [first_parameter, end_parameter).
struct GradientBucket {
  size_t begin = 0, end = 0;
  size_t first_parameter = 0, end_parameter = 0;
};

// The buckets of an allocation of `total_bytes` whose parameter k starts at offsets[k] (k's range
// runs to the next offset, the last one's to total_bytes), in the order backward fills them: the
// first ends at total_bytes, each next ends where the one before begins, the last begins at 0.
// A bucket takes parameters while it stays within cap_bytes; a parameter larger than the cap is a
// bucket of its own. No parameters: no buckets. InvalidArgument for offsets that do not start at 0,
// decrease, pass total_bytes or are not float-aligned, and for cap_bytes 0.
Expected<std::vector<GradientBucket>> plan_gradient_buckets(const std::vector<size_t>& offsets, size_t total_bytes,
                                                            size_t cap_bytes = kDefaultBucketBytes);

}  // namespace ucudnn::distributed
