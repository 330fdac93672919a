// LayerNormalization (opset 17), lowered at import into ops ucudnn already runs (Note [lowered ops],
// runtime/ops/lowered_ops.h).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every LayerNormalization of `graph` (shapes inferred) as, over the axes from `axis` on:
//   Mean = ReduceMean(X), D = X - Mean, Var = ReduceMean(D · D), S = Sqrt(Var + epsilon),
//   Y = D / S · Scale (+ B), InvStdDev = Reciprocal(S)
// — ONNX's reference computation, in float32 (stash_type 1, the only one accepted). Mean and
// InvStdDev are computed where the model names them.
Status lower_layer_norms(ir::Graph& graph);

}  // namespace ucudnn
