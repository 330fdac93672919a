// Naive CPU references (the test oracle) for the compute-heavy ops: Conv, ConvTranspose,
// BatchNormalization, LRN, MaxPool, AveragePool, GlobalAveragePool,
// GlobalMaxPool, Gemm, MatMul.
//
// Written as straightforward loops with double accumulation, independently of
// the kernels in runtime/cpu/ (including the output-size arithmetic). Each takes
// the node (attributes; absent ones take their spec defaults) and its inputs
// (nullptr for an absent optional input) and returns a new float32 tensor.
// Conv also computes what optimizer/passes fuse into it (Note [fused nodes],
// runtime/ir/fusion.h): a residual fourth input z and the activation "Relu".
// Inputs are assumed valid (the tests only pass shapes the shape rule accepted).
#pragma once

#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn::reference {

Tensor reference_conv(const ir::Node& node, const std::vector<const Tensor*>& src);
Tensor reference_conv_transpose(const ir::Node& node, const std::vector<const Tensor*>& src);
Tensor reference_batch_norm(const ir::Node& node, const std::vector<const Tensor*>& src);
Tensor reference_lrn(const ir::Node& node, const std::vector<const Tensor*>& src);
Tensor reference_max_pool(const ir::Node& node, const std::vector<const Tensor*>& src);
// MaxPool's Indices output (1-D and 2-D windows): the flat index in X of the first tap holding each maximum.
Tensor reference_max_pool_indices(const ir::Node& node, const Tensor& x);
Tensor reference_average_pool(const ir::Node& node, const std::vector<const Tensor*>& src);
Tensor reference_global_average_pool(const ir::Node& node, const std::vector<const Tensor*>& src);
Tensor reference_global_max_pool(const ir::Node& node, const std::vector<const Tensor*>& src);
Tensor reference_gemm(const ir::Node& node, const std::vector<const Tensor*>& src);
Tensor reference_matmul(const ir::Node& node, const std::vector<const Tensor*>& src);

// The reference for node.op (one of the ops above).
Tensor reference_for(const ir::Node& node, const std::vector<const Tensor*>& src);

}  // namespace ucudnn::reference
