// The shape checks Conv's and ConvTranspose's shape rules share (conv.cc, conv_transpose.cc), in the
// order both run them: first the operands (dtypes, ranks, the group against X's channels), then each
// op's own channel checks, then the kernel and the bias. The messages are the ops' own, so an error
// reads the same from either rule.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

// The group attribute (1 when absent), after checking that X, W and B (when given) are float32, X has
// rank 3 to 5 ([N, C, spatial...]; more is Unsupported, "<n>-D <what>; ucudnn supports 1-D to 3-D"),
// W has X's rank, and the group is >= 1 and divides X's channels.
Expected<int64_t> checked_conv_group(InferContext& ctx, const char* what);

// W's spatial dims (the kernel), after checking that kernel_shape, when given, equals them and that B,
// when given, is [filters].
Expected<std::vector<int64_t>> checked_conv_kernel(InferContext& ctx, int64_t filters);

}  // namespace ucudnn
