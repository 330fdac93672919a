// ConstantOfShape: folded at import, else lowered into an Expand (Note [lowered ops], runtime/ops/lowered_ops.h).
#pragma once

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// The scalar a ConstantOfShape node fills its output with: its `value` attribute's one element (the shape
// rule checks there is one), float32 0 when the attribute is absent.
Tensor constant_of_shape_value(const ir::Node& node);

// Rewrites every ConstantOfShape of `graph` (shapes inferred) as Expand(its value as a scalar constant,
// shape). The importer folds one whose output is at most kMaxFoldBytes (onnx_import/constant_folding.cc);
// this is for the larger ones, which then run on either backend as Expand.
Status lower_constants_of_shape(ir::Graph& graph);

}  // namespace ucudnn
