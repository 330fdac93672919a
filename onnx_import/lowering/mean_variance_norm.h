// MeanVarianceNormalization (opsets 9, 13): X normalized to zero mean and unit variance over `axes`
// (default [0, 2, 3]: per channel of an NCHW batch), Y = (X - Mean) / (Sqrt(Var) + 1e-9). Lowered at import
// (Note [lowered ops], runtime/ops/lowered_ops.h) by NormalizationLowering (normalization_lowering.h), with
// the variance taken of the centred X (the spec's function body takes E[X²] - E[X]², which cancels badly).
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every MeanVarianceNormalization of `graph` (shapes inferred).
Status lower_mean_variance_norms(ir::Graph& graph);

}  // namespace ucudnn
