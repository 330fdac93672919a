// Naive reference implementations of the elementwise, data-movement, shape and
// reduction ops — an oracle of the op table (tests/op_table_test.cc).
//
// Written independently of runtime/cpu: every output element is computed from
// its multi-dimensional index (unravel → map to input index → ravel), in
// double for float math, and output shapes are derived here again from the
// ONNX spec rather than taken from the descriptors' shape rules. Slow on
// purpose; use small shapes.
#pragma once

#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn::reference {

// The outputs of `node` for `inputs` (nullptr = absent optional input).
// `node.attrs` must already hold the spec defaults (as the importer leaves
// them); optional attributes (Softmax axis, Transpose perm, Shape end) may be
// absent. Covers Relu..Elu, Add..Div (with a fused "Relu", Note [fused nodes]),
// Concat..Constant, DepthToSpace, SpaceToDepth, Tile, Sum, Mean, Upsample, the comparisons, the logical
// ops, Where, the Reduce* family but ReduceSum (softmax_loss_reference.cc), ArgMax, ArgMin, Softmax,
// LogSoftmax (those from the comparisons on in reduction_reference.cc); other ops return Unsupported.
Expected<std::vector<Tensor>> elementwise_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs);

// The multi-dimensional index of row-major element `flat` of `shape`.
std::vector<int64_t> unravel(int64_t flat, const Shape& shape);

// Element i of `t` (any dtype a Tensor holds) as a double; NaN for other dtypes.
double element_as_double(const Tensor& t, int64_t i);

}  // namespace ucudnn::reference
