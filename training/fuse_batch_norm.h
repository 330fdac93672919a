// fuse_batch_norm_activations: the training graph's BatchNormTrain takes in the Relu after it, and a
// ResNet block's ending Add(·, Z) → Relu (Note [batch norm with its activation],
// runtime/ops/batch_norm_train.cc), so that a training step goes over those activations once in the
// forward and its gradient is one fused BatchNormGrad, with no Add, Relu or ActivationGrad nodes.
//
// Patterns, matched by structure (never by names), on a forward graph without the backward yet:
//   BatchNormTrain(X, ...) → Y → Relu → R             becomes BatchNormTrain[activation=Relu] → R
//   BatchNormTrain(X, ...) → Y → Add(Y, Z) → Relu → R  becomes BatchNormTrain[activation=Relu](..., Z) → R
// where Y (and the Add's output) has exactly that one reader and is not a graph output, Z (either Add
// operand) is float32 of exactly X's shape (no broadcasting), and nothing reads the node's statistics
// yet. A BatchNormTrain that already has an activation or a Z is left alone. The fused node keeps the
// BatchNormTrain's name and attributes, writes R (the Relu's output value, so its readers stay wired)
// and takes the Relu's place in the node order (Z may come after the BatchNormTrain: ResNet's
// downsample branch). When both operands of an Add come from BatchNormTrains, the first in node order
// takes it; the other stays unfused and feeds Z.
//
// The removed nodes' outputs (Y, the Add's output) are removed as values, and the values after them
// renumbered (ir::Graph::validate holds after the pass); new_id maps the caller's value ids.
// optimizer/passes' remove_nodes does not fit here: it prunes by the graph's outputs and renumbers
// without saying how, while the training graph's builder holds value ids (parameters, running
// statistics, their updates) that are no outputs yet.
#pragma once

#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn::training {

struct BatchNormFusion {
  int relus = 0;      // BatchNormTrain → Relu fused
  int residuals = 0;  // BatchNormTrain → Add → Relu fused
  std::vector<ir::ValueId> new_id;  // new_id[old id]: the value's id after the pass; kNoValue if removed

  // `id` after the pass (kNoValue stays kNoValue).
  ir::ValueId map(ir::ValueId id) const { return id == ir::kNoValue ? id : new_id[static_cast<size_t>(id)]; }
};

// Fuses every match of the patterns above in `graph`. The fused nodes' shape rules run again; their
// error, naming the node, if one refuses (the graph is then left as it was).
Expected<BatchNormFusion> fuse_batch_norm_activations(ir::Graph& graph);

}  // namespace ucudnn::training
