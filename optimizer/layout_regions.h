// Layout per region (Note [layout regions]): which convolutions of a channels-last
// graph stay NCHW, chosen from their measured times in both layouts with the
// transposes between regions costed.
//
// --layout auto plans the graph in NCHW and in NHWC (plan_model.cc). Each
// convolution then has a predicted time in both. choose_layout_regions labels
// every node NCHW or NHWC so that Σ convolution time + Σ transposes is least and
// returns the Conv nodes labelled NCHW; convert_to_channels_last_except with that list
// gives the mixed graph, which plan_model plans as a third candidate. The
// labelling is exact for its cost model (a minimum s-t cut, min_cut.h):
//   - a Conv costs its NCHW or NHWC time (per call, as planned in that layout);
//   - a node that cannot run channels-last (passes.h: can_run_channels_last) is NCHW,
//     and so are the graph's inputs and outputs;
//   - every 4-D float activation read by a node of the other label than its producer
//     costs one transpose (TransposeCost: a pass over its bytes and a fixed cost per
//     kernel). A value read by several nodes of the other label is transposed once but
//     charged per reader: the model leans towards fewer regions.
// Pools and elementwise nodes are free in either layout; the rewriter then runs each
// by its inputs (channels_last.cc), and plan_model costs the graph it builds, not the
// labelling. It keeps that graph only when predicted kRegionsMargin faster than the
// faster single layout: the predictions sum convolutions timed one at a time, and on
// the H200 smaller predicted gains ran slower (MNASNet 1.0 at batch 128: the regions
// were predicted 2.5 % faster and ran 11 % slower; RegNetY-800MF 1.1 % and 25 %;
// docs/history/PERFORMANCE-2026-12.md, "Layout per region").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/backend/backend.h"
#include "runtime/ir/graph.h"

namespace ucudnn::optimizer {

// Predicted time of one call of each Conv node, by node name.
using ConvTimes = std::map<std::string, double>;

// What a layout Transpose costs on a device, as its backend says (BackendCapabilities::layout_transpose_cost,
// measured there: runtime/cpu/cpu_backend.cc and runtime/cuda/cuda_backend.cc say how).
using TransposeCost = runtime::TransposeCost;

// How much faster than the faster single layout the regions must be predicted to be kept.
inline constexpr double kRegionsMargin = 0.05;

struct LayoutRegions {
  std::vector<std::string> nchw_convs;  // Conv nodes labelled NCHW, in graph order
  int convs = 0;                        // Conv nodes that can run channels-last
  double predicted_ms = 0;              // the labelling's cost: convolutions + transposes
  // Some convolutions NCHW and some NHWC (0 < nchw_convs.size() < convs), and their names
  // are unique (a plan names them): the mixed graph is worth planning.
  bool mixed = false;
};

// The labelling above for `graph` (NCHW, after the inference passes). A Conv missing
// from a map costs 0 in that layout.
LayoutRegions choose_layout_regions(const ir::Graph& graph, const ConvTimes& nchw_ms, const ConvTimes& nhwc_ms,
                                    const TransposeCost& transpose);

// The layout Transposes of `graph` (4-D, NCHW↔NHWC permutations), each priced by `transpose`.
double layout_transposes_ms(const ir::Graph& graph, const TransposeCost& transpose);

}  // namespace ucudnn::optimizer
