// Reverse-mode automatic differentiation over the IR (docs/TRAINING.md).
#pragma once

#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn::training {

// The gradient flowing into `value`: a value of the same dtype and shape (for a scalar loss,
// a constant 1).
struct GradientSeed {
  ir::ValueId value = ir::kNoValue;
  ir::ValueId grad = ir::kNoValue;
};

// Appends to `graph` the nodes computing d(loss)/d(wrt[k]) for every k, given the gradients
// `seeds` flowing into values of the graph. Walks the nodes that exist now in reverse order,
// calling each one's gradient rule (OpDescriptor::gradient, runtime/ops/gradient.h) where a
// gradient flows in and an input needs one; contributions to a value used several times are
// summed (Add). Returns one gradient value per `wrt` entry (a zero constant when the loss does
// not depend on it). Unsupported naming the node when an op on the way has no rule or its rule
// refuses the node's attributes; InvalidArgument for a seed of another dtype or shape.
Expected<std::vector<ir::ValueId>> append_gradients(ir::Graph& graph, const std::vector<GradientSeed>& seeds,
                                                    const std::vector<ir::ValueId>& wrt);

}  // namespace ucudnn::training
