// The update graph: one optimizer step over every parameter (docs/TRAINING.md) — one SgdUpdate
// or AdamWUpdate node per parameter, run after each training step with every parameter's and
// state's input and output bound to the same memory (the kernels update in place).
//
// Inputs, in order: lr (float32 [1]), step (int64 [1], 1 on the first update), then per
// parameter: param, grad, its state tensors (SGD: momentum_buffer; AdamW: m, v). Outputs, in
// order, per parameter: param_out, then its states' new values.
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

// The update graph of parameters with `shapes` (named after `names`); InvalidModel/InvalidArgument
// from the update ops' shape rules for a bad configuration (e.g. nesterov without momentum).
Expected<ir::Graph> build_update_graph(const std::vector<std::string>& names, const std::vector<Shape>& shapes,
                                       const OptimizerConfig& config);

}  // namespace ucudnn::training
