// MeanVarianceNormalization's axes, checked by its shape rule (mean_variance_norm.cc) and read by its lowering
// (onnx_import/lowering/mean_variance_norm.h).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/status.h"

namespace ucudnn {

// `axes` normalized into [0, rank), sorted; InvalidArgument for one out of range or repeated.
Expected<std::vector<int64_t>> mean_variance_norm_axes(const std::vector<int64_t>& axes, int64_t rank);

}  // namespace ucudnn
