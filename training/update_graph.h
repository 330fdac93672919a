// The update graph: one optimizer step over every parameter (docs/TRAINING.md), run after each
// training step with the parameters' and states' inputs and outputs bound to the same memory (the
// kernels update in place).
//
// Note [one update for all parameters]: the trainer keeps the parameters, their gradients and each
// optimizer state in flat buffers with one layout (TrainerEngine::param_layout_), so the graph is a
// single SgdUpdate or AdamWUpdate node over all of them as one float32 vector — a multi-tensor
// update, as PyTorch's foreach/fused optimizers, in one launch instead of one per parameter, with
// each element's arithmetic that of the per-parameter node (the optimizer's hyper-parameters are
// the same for every parameter). The alignment gaps between parameters are zero in every buffer and
// stay zero (a zero gradient, weight and state update to zero).
//
// Inputs, in order: lr (float32 [1]), step (int64 [1], 1 on the first update), parameters,
// parameters/grad, the states (SGD: momentum_buffer; AdamW: m, v), each float32 [elements].
// Outputs: the parameters' and then the states' new values.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn::training {

struct OptimizerConfig {
  enum class Kind { kSgd, kAdamW };
  Kind kind = Kind::kSgd;
  // SGD (torch.optim.SGD)
  double momentum = 0.0, dampening = 0.0;
  bool nesterov = false;
  // AdamW (torch.optim.AdamW)
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double weight_decay = 0.0;  // both
  // State tensors per parameter: 1 (SGD's momentum buffer) or 2 (AdamW's m, v).
  int states() const { return kind == Kind::kSgd ? 1 : 2; }
  // "sgd(momentum=0.9, dampening=0, weight_decay=0.0001, nesterov=0)": for checkpoints and reports.
  std::string describe() const;
};

// The update graph of `elements` floats of parameters; InvalidModel/InvalidArgument from the update
// ops' shape rules for a bad configuration (e.g. nesterov without momentum).
Expected<ir::Graph> build_update_graph(int64_t elements, const OptimizerConfig& config);

}  // namespace ucudnn::training
