// choose_layout_regions (layout_regions.h): builds the two-label graph (source NCHW, sink NHWC; each
// Conv's two times, each transposable activation's transpose cost) and labels the nodes by its minimum
// cut; and layout_transposes_ms, the predicted time of the layout transposes a graph runs.
#include "optimizer/layout_regions.h"

#include <set>

#include "optimizer/min_cut.h"
#include "optimizer/passes/passes.h"
#include "runtime/core/dtype.h"
#include "runtime/ir/layout.h"

namespace ucudnn::optimizer {

namespace {

// A capacity no cut takes: a node that must stay NCHW.
constexpr double kForced = 1e18;

// Bytes of `id` when a layout transpose could apply to it: a 4-D activation (not a constant).
double transposable_bytes(const ir::Graph& graph, ir::ValueId id) {
  if (id == ir::kNoValue) return 0;
  const ir::Value& v = graph.value(id);
  if (v.constant || v.shape.size() != 4) return 0;
  return static_cast<double>(shape_numel(v.shape)) * static_cast<double>(dtype_size(v.dtype));
}

double time_of(const ConvTimes& times, const std::string& name) {
  auto it = times.find(name);
  return it == times.end() ? 0.0 : it->second;
}

}  // namespace

LayoutRegions choose_layout_regions(const ir::Graph& graph, const ConvTimes& nchw_ms, const ConvTimes& nhwc_ms,
                                    const TransposeCost& transpose) {
  // Nodes 0..n-1 are the graph's; the source is NCHW, the sink NHWC.
  const int n = static_cast<int>(graph.nodes.size());
  const int nchw = n, nhwc = n + 1;
  MinCut cut(n + 2);
  auto pairwise = [&](int a, int b, double ms) {  // charged when a and b take different labels
    cut.add_edge(a, b, ms);
    cut.add_edge(b, a, ms);
  };
  std::vector<bool> conv(n, false);
  for (int i = 0; i < n; ++i) {
    const ir::Node& node = graph.nodes[i];
    if (!can_run_channels_last(graph, node)) {
      cut.add_edge(nchw, i, kForced);
    } else if (node.op == OpKind::kConv) {
      conv[i] = true;
      cut.add_edge(nchw, i, time_of(nhwc_ms, node.name));  // cut when i runs NHWC
      cut.add_edge(i, nhwc, time_of(nchw_ms, node.name));  // cut when i runs NCHW
    }
    for (ir::ValueId id : node.inputs) {
      const double bytes = transposable_bytes(graph, id);
      if (bytes == 0) continue;
      const ir::NodeId producer = graph.value(id).producer;
      pairwise(producer >= 0 ? static_cast<int>(producer) : nchw, i, transpose.of(bytes));
    }
  }
  for (ir::ValueId id : graph.outputs) {
    const ir::NodeId producer = graph.value(id).producer;
    const double bytes = transposable_bytes(graph, id);
    if (producer >= 0 && bytes > 0) pairwise(static_cast<int>(producer), nchw, transpose.of(bytes));
  }
  const std::vector<bool> is_nchw = cut.source_side(nchw, nhwc);

  LayoutRegions regions;
  regions.predicted_ms = cut.cut_capacity();
  std::set<std::string> names;
  bool unique = true;
  for (int i = 0; i < n; ++i) {
    if (!conv[i]) continue;
    ++regions.convs;
    unique = names.insert(graph.nodes[i].name).second && unique;
    if (is_nchw[i]) regions.nchw_convs.push_back(graph.nodes[i].name);
  }
  const int kept = static_cast<int>(regions.nchw_convs.size());
  regions.mixed = unique && kept > 0 && kept < regions.convs;
  return regions;
}

double layout_transposes_ms(const ir::Graph& graph, const TransposeCost& transpose) {
  double ms = 0;
  for (const ir::Node& node : graph.nodes) {
    if (node.op != OpKind::kTranspose || node.inputs.empty() || !node.attrs.has("perm")) continue;
    const std::vector<int64_t>& perm = node.attrs.get_ints("perm");
    if (perm == ir::kNchwToNhwcPerm || perm == ir::kNhwcToNchwPerm)
      ms += transpose.of(transposable_bytes(graph, node.inputs[0]));
  }
  return ms;
}

}  // namespace ucudnn::optimizer
