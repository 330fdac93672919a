// Naive reference of Einsum (onnx_import/lowering/einsum.h): every combination of label values, products summed in
// double (op_reference.cc dispatches here).
#pragma once

#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn::reference {

Tensor einsum(const ir::Node& node, const std::vector<const Tensor*>& in);

}  // namespace ucudnn::reference
