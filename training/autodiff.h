// Reverse-mode automatic differentiation over the IR (docs/TRAINING.md).
#pragma once

#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn::training {

// Appends to `graph` the nodes computing d(loss)/d(wrt[k]) for every k, where the
// gradient flowing into value seeds[j].first is seeds[j].second (a value of the same
// dtype and shape; for a scalar loss, a constant 1). Walks the nodes that exist now in
// reverse order, calling each one's gradient rule (OpDescriptor::gradient); contributions
// to a value used several times are summed (Add). Returns one gradient value per wrt
// entry (a zero constant when the loss does not depend on it). Unsupported naming the
// node when an op on the way has no rule or a rule refuses its attributes.
struct GradientSeed {
  ir::ValueId value = ir::kNoValue;
  ir::ValueId grad = ir::kNoValue;
};
Expected<std::vector<ir::ValueId>> append_gradients(ir::Graph& graph, const std::vector<GradientSeed>& seeds,
                                                    const std::vector<ir::ValueId>& wrt);

}  // namespace ucudnn::training
