// Gelu (its descriptor: runtime/ops/activations.cc), lowered at import (Note [lowered ops],
// runtime/ops/lowered_ops.h) into the elementwise ops of its formula, which fuse_pointwise joins into one
// program (the "GELU" pattern of the report):
//   approximate "none": Mul(Mul(X, Add(Erf(Div(X, √2)), 1)), 0.5) — the form PyTorch's TorchScript
//                       exporter writes for nn.GELU, so both exporters' models compute the same;
//   approximate "tanh": Mul(Mul(X, Add(Tanh(Mul(Add(X, Mul(Mul(X, Mul(X, X)), 0.044715)), √(2/π))), 1)), 0.5).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every Gelu of `graph` (shapes inferred).
Status lower_gelus(ir::Graph& graph);

}  // namespace ucudnn
