// What the pass tests (tests/passes_*test.cc) share: running a pass, running a
// graph on the CPU (run_on_cpu: the one place that picks the executor), the
// numeric before/after check, the "must be left alone" check, and a reference
// for the constants BatchNormalization folding must produce.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "optimizer/passes/passes.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"
#include "tests/support/graph_builder.h"
#include "tests/support/graph_compare.h"

namespace ucudnn::optimizer {

// Runs `graph` on the CPU with the default plan (every step whole, default algorithm).
Expected<std::vector<Tensor>> run_on_cpu(const ir::Graph& graph, const std::vector<Tensor>& inputs);

// Runs `before` and `after` on the same random float32 inputs; expects the same
// outputs within float32 rounding (a failure names the output and element).
void expect_same_outputs(const ir::Graph& before, const ir::Graph& after);

using Pass = Status (*)(ir::Graph&, PassStats*);
// Runs one pass; a failed status fails the test.
PassStats run_pass(Pass pass, ir::Graph& graph);
// Runs run_inference_passes with `options`; a failed status fails the test.
PassStats run_passes(ir::Graph& graph, const InferencePassOptions& options = {});

// A graph a pass must not rewrite; `why` names the condition that forbids it.
struct UnchangedCase {
  std::string why;
  std::function<ir::Graph()> build;
};
// For each case: builds the graph twice, runs `pass` on one and expects it to be
// the same as the other, with all of the pass's counts 0.
void expect_unchanged(Pass pass, const std::vector<UnchangedCase>& cases);

// BatchNormalization's constant inputs and epsilon.
struct BatchNormParameters {
  Tensor scale, bias, mean, variance;
  float epsilon = 1e-3f;
};
// Random parameters for `channels` channels (scale and variance in [0.5, 1.5)).
BatchNormParameters random_batch_norm(int64_t channels, uint32_t seed);
// A BatchNormalization of `x` with `p` as constants.
ir::ValueId add_batch_norm(ucudnn_test::GraphBuilder& builder, ir::ValueId x, const BatchNormParameters& p);

struct ConvConstants {
  Tensor weight, bias;
};
// The weight and bias of Conv(weight, bias) → BatchNormalization(p) as one Conv,
// computed here in double: W'[k] = W[k]·s[k], b'[k] = (b[k] − μ[k])·s[k] + β[k],
// s = γ/√(σ² + ε). `bias` nullptr: the Conv has none (b = 0).
ConvConstants fold_reference(const Tensor& weight, const Tensor* bias, const BatchNormParameters& p);

}  // namespace ucudnn::optimizer
