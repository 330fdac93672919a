// Naive references of the Reduce* family (but ReduceSum: softmax_loss_reference.cc), ArgMax/ArgMin,
// Softmax/LogSoftmax/Hardmax, the comparisons, the logical ops, Where, IsNaN and IsInf, Trilu, CumSum and TopK;
// elementwise_reference dispatches to them.
#pragma once

#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn::reference {

Tensor reduce(OpKind op, const Tensor& x, const Tensor* axes_tensor, const ir::Attributes& attrs);
Tensor arg_extreme(OpKind op, const Tensor& x, const ir::Attributes& attrs);
Tensor softmax(const ir::Node& node, const Tensor& x, bool log);
Tensor hardmax(const ir::Node& node, const Tensor& x);
Tensor logic(OpKind op, const std::vector<const Tensor*>& in);
// IsNaN and IsInf (bool results).
Tensor float_test(const ir::Node& node, const Tensor& x);
// Trilu: the kept triangle of each matrix of the last two dims; CumSum: running sums along the axis.
Tensor trilu(const ir::Node& node, const std::vector<const Tensor*>& in);
Tensor cumsum(const ir::Node& node, const std::vector<const Tensor*>& in);
// TopK's values and indices.
std::vector<Tensor> top_k(const ir::Node& node, const std::vector<const Tensor*>& in);

}  // namespace ucudnn::reference
