// fuse_conv_depthwise: a channels-last 1×1 Conv and the depthwise Conv that alone reads its output become
// one FusedConvDepthwise node (Note [pointwise-depthwise fusion], runtime/ir/fusion.h), for the pairs the
// caller names; fusable_depthwise_convs lists the candidates. Which pairs to fuse is the planner's choice,
// by timing (Note [timed depthwise fusion], optimizer/plan_model.cc).
#include <algorithm>
#include <optional>
#include <set>

#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn::optimizer {

namespace {

bool is_constant(const ir::Graph& graph, const ir::Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != ir::kNoValue && graph.value(node.inputs[i]).constant.has_value();
}

// An optional input that is absent or constant.
bool absent_or_constant(const ir::Graph& graph, const ir::Node& node, size_t i) {
  return i >= node.inputs.size() || node.inputs[i] == ir::kNoValue || is_constant(graph, node, i);
}

// A channels-last 4-D Conv with constant weights and bias and no residual input: its window over X.
std::optional<WindowGeometry> plain_conv_window(const ir::Graph& graph, const ir::Node& node) {
  if (node.op != OpKind::kConv || !ir::is_channels_last(node) || node.inputs.size() > ir::kConvResidualInput ||
      !is_constant(graph, node, 1) || !absent_or_constant(graph, node, 2))
    return std::nullopt;
  const Shape& x = graph.value(node.inputs[0]).shape;  // [N, H, W, C]
  const Shape& w = graph.value(node.inputs[1]).shape;  // [M, R, S, C/group]
  if (x.size() != 4 || w.size() != 4) return std::nullopt;
  auto geometry = compute_window_geometry(node.attrs, {x[1], x[2]}, {w[1], w[2]}, /*ceil_mode=*/false);
  if (!geometry) return std::nullopt;
  return *geometry;
}

int64_t group_of(const ir::Node& node) { return node.attrs.has("group") ? node.attrs.get_int("group") : 1; }

// The 1×1 Conv whose output only `dw` reads, when `dw` is a depthwise Conv oneDNN could fuse after it
// (square window, equal strides, equal leading pads, no dilation); nullopt otherwise.
std::optional<ir::NodeId> fusable_pointwise(const ir::Graph& graph, const std::vector<int>& uses, ir::NodeId dw_id) {
  const ir::Node& dw = graph.nodes[dw_id];
  const auto dw_window = plain_conv_window(graph, dw);
  if (!dw_window) return std::nullopt;
  const Shape& w_dw = graph.value(dw.inputs[1]).shape;
  const int64_t channels = graph.value(dw.inputs[0]).shape[3];
  if (group_of(dw) != channels || w_dw[0] != channels || w_dw[3] != 1) return std::nullopt;
  const WindowGeometry& g = *dw_window;
  if (g.kernel[0] != g.kernel[1] || g.stride[0] != g.stride[1] || g.pad_begin[0] != g.pad_begin[1] ||
      g.dilation[0] != 1 || g.dilation[1] != 1)
    return std::nullopt;
  const ir::ValueId between = dw.inputs[0];
  const ir::NodeId pw_id = graph.value(between).producer;
  if (pw_id < 0 || uses[between] != 1 || is_graph_output(graph, between)) return std::nullopt;
  const ir::Node& pw = graph.nodes[pw_id];
  const auto pw_window = plain_conv_window(graph, pw);
  if (!pw_window || group_of(pw) != 1) return std::nullopt;
  const WindowGeometry& p = *pw_window;
  const bool pointwise = p.kernel == std::vector<int64_t>{1, 1} && p.stride == std::vector<int64_t>{1, 1} &&
                         p.dilation == std::vector<int64_t>{1, 1} && p.pad_begin == std::vector<int64_t>{0, 0} &&
                         p.pad_end == std::vector<int64_t>{0, 0};
  if (!pointwise) return std::nullopt;
  return pw_id;
}

void copy_attr(const ir::Node& from, const char* name, ir::Node& to, const char* as) {
  if (from.attrs.has(name)) to.attrs.set(as, from.attrs.all().at(name));
}

}  // namespace

std::vector<std::string> fusable_depthwise_convs(const ir::Graph& graph) {
  const std::vector<int> uses = count_uses(graph);
  std::vector<std::string> names;
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (fusable_pointwise(graph, uses, static_cast<ir::NodeId>(n))) names.push_back(graph.nodes[n].name);
  return names;
}

Status fuse_conv_depthwise(ir::Graph& graph, PassStats* stats, const std::vector<std::string>& depthwise) {
  std::set<std::string> wanted(depthwise.begin(), depthwise.end());
  const std::vector<int> uses = count_uses(graph);
  std::vector<bool> remove(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size() && !wanted.empty(); ++n) {
    const ir::Node& dw = graph.nodes[n];
    if (dw.op != OpKind::kConv || wanted.count(dw.name) == 0) continue;
    const std::optional<ir::NodeId> pw_id = fusable_pointwise(graph, uses, static_cast<ir::NodeId>(n));
    if (!pw_id) continue;  // named below as not fusable
    wanted.erase(dw.name);
    const ir::Node& pw = graph.nodes[*pw_id];
    const WindowGeometry g = *plain_conv_window(graph, dw);
    ir::Node fused;
    fused.name = dw.name;  // what runtime::Plan::fused_depthwise lists
    fused.op = OpKind::kFusedConvDepthwise;
    fused.opset = dw.opset;
    auto input = [](const ir::Node& node, size_t i) { return i < node.inputs.size() ? node.inputs[i] : ir::kNoValue; };
    fused.inputs = {pw.inputs[0], pw.inputs[1], input(pw, 2), dw.inputs[1], input(dw, 2)};
    fused.outputs = dw.outputs;
    fused.attrs.set(ir::kChannelsLastAttr, int64_t{1});
    fused.attrs.set(ir::kDepthwiseStridesAttr, g.stride);
    std::vector<int64_t> pads = g.pad_begin;
    pads.insert(pads.end(), g.pad_end.begin(), g.pad_end.end());
    fused.attrs.set(ir::kDepthwisePadsAttr, std::move(pads));
    copy_attr(pw, ir::kFusedActivationAttr, fused, ir::kFusedActivationAttr);
    copy_attr(pw, ir::kFusedActivationMinAttr, fused, ir::kFusedActivationMinAttr);
    copy_attr(pw, ir::kFusedActivationMaxAttr, fused, ir::kFusedActivationMaxAttr);
    copy_attr(dw, ir::kFusedActivationAttr, fused, ir::kDepthwiseActivationAttr);
    copy_attr(dw, ir::kFusedActivationMinAttr, fused, ir::kDepthwiseActivationMinAttr);
    copy_attr(dw, ir::kFusedActivationMaxAttr, fused, ir::kDepthwiseActivationMaxAttr);
    remove[*pw_id] = true;
    graph.nodes[n] = std::move(fused);  // the pair's place: after the 1×1's inputs, before Y's readers
    ++stats->depthwise_fused;
  }
  if (!wanted.empty())
    return invalid_argument("fuse_conv_depthwise: '" + *wanted.begin() +
                            "' is not a depthwise Conv after a 1x1 Conv of this graph that could be fused");
  remove_nodes(graph, remove);
  return Status::ok();
}

}  // namespace ucudnn::optimizer
