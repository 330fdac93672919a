// Naive reference of FusedPointwise (Note [pointwise programs], runtime/ir/pointwise_program.h),
// written independently of its kernels and of runtime/ops/fused_pointwise.cc: the concatenated
// leaf is built element by element, every output element is computed from its multi-dimensional
// index, each opcode's meaning is written again here in double with std:: functions.
#pragma once

#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn::reference {

Expected<std::vector<Tensor>> fused_pointwise_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs);

}  // namespace ucudnn::reference
