// Naive reference of GridSample (runtime/ops/grid_sample.h), in double, from PyTorch's definition
// (op_reference.cc dispatches here).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/ir/attributes.h"

namespace ucudnn::reference {

// Y [N, C, H_out, W_out] sampled from X [N, C, H, W] at Grid [N, H_out, W_out, 2] by `attrs`.
Tensor grid_sample(const Tensor& x, const Tensor& grid, const ir::Attributes& attrs);

}  // namespace ucudnn::reference
