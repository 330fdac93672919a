// convert_to_channels_last: rewrites a graph so its 4-D activations flow
// channels-last (Note [channels-last] in runtime/ir/layout.h).
//
// One walk in topological order, rebuilding the node list. Each value may have
// an NHWC twin (made by a Transpose node, or for a constant a transposed copy);
// each NHWC node output keeps an NCHW twin made on demand for readers that need
// NCHW. A node runs channels-last when
//   - it is a 2-D Conv whose weight is a constant (or, in a training step, a graph input: a
//     parameter, transposed by a Transpose node every run): always (its NCHW input is
//     transposed if no NHWC twin exists yet), unless the caller names it among the Convs to
//     keep NCHW (Note [layout regions], optimizer/layout_regions.h);
//   - it is a 2-D MaxPool/AveragePool, GlobalAveragePool/GlobalMaxPool, a layout-free
//     elementwise op (FusedPointwise and ActivationGrad among them; its concat_axis moves as a
//     Concat's axis does) or Concat: when one of its inputs already is NHWC and every input that
//     is not a single element is 4-D (so broadcasting means the same in both layouts);
//   - in a training step (convert_training_step_to_channels_last), a training op of a 4-D X
//     (ConvGradData, ConvGradFilter, BatchNormTrain, BatchNormGrad, MaxPoolGrad,
//     AveragePoolGrad; docs/TRAINING.md): when one of its inputs already is NHWC; every 4-D input
//     and output is then NHWC (a filter gradient KRSC). Inference graphs keep these NCHW (a
//     ConvTranspose runs as ConvGradData, which the CPU runs NCHW only);
//   - it is a Slice or a Gather with 1-D indices (a channel shuffle, see
//     channel_shuffle_to_gather) of an NHWC X: its axes move as a Concat's axis does (Slice
//     reads a new constant `axes`); or a ReduceSum/ReduceMean of an NHWC X over constant axes
//     (a bias's gradient) whose output keeps its dims' order: its axes move alike;
// otherwise it reads NCHW twins. Flatten(axis 1) and Reshape of an NHWC value
// whose H and W are 1 read it as it is: both layouts hold the same bytes then.
// The graph's outputs keep their NCHW shapes and names (a training graph's weight gradients
// are transposed back), and its inputs are unchanged.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <set>
#include <vector>

#include "optimizer/passes/passes.h"
#include "runtime/plan/plan.h"
#include "runtime/ir/layout.h"
#include "runtime/ir/pointwise_program.h"

namespace ucudnn::optimizer {

namespace {

// Ops whose output element i depends only on the inputs' elements at the same
// (broadcast) index: the same in any layout.
bool is_layout_free_elementwise(OpKind op) {
  switch (op) {
    case OpKind::kRelu: case OpKind::kLeakyRelu: case OpKind::kPRelu: case OpKind::kSigmoid:
    case OpKind::kTanh: case OpKind::kHardSigmoid: case OpKind::kHardSwish: case OpKind::kClip:
    case OpKind::kElu: case OpKind::kErf: case OpKind::kCast: case OpKind::kAdd: case OpKind::kSub:
    case OpKind::kMul: case OpKind::kDiv: case OpKind::kPow: case OpKind::kFusedPointwise:
    case OpKind::kSoftplus: case OpKind::kSqrt: case OpKind::kExp: case OpKind::kLog: case OpKind::kAbs:
    case OpKind::kNeg: case OpKind::kReciprocal: case OpKind::kSoftsign: case OpKind::kCelu: case OpKind::kSelu:
    case OpKind::kThresholdedRelu: case OpKind::kShrink: case OpKind::kFloor: case OpKind::kCeil:
    case OpKind::kRound: case OpKind::kSign: case OpKind::kSin: case OpKind::kCos: case OpKind::kTan:
    case OpKind::kAsin: case OpKind::kAcos: case OpKind::kAtan: case OpKind::kSinh: case OpKind::kCosh:
    case OpKind::kAsinh: case OpKind::kAcosh: case OpKind::kAtanh: case OpKind::kMax: case OpKind::kMin:
    case OpKind::kActivationGrad:
      return true;
    default:
      return false;
  }
}

bool is_4d(const ir::Graph& graph, ir::ValueId id) {
  return id != ir::kNoValue && graph.value(id).shape.size() == 4;
}

bool is_graph_input(const ir::Graph& graph, ir::ValueId id) {
  return std::find(graph.inputs.begin(), graph.inputs.end(), id) != graph.inputs.end();
}

// Conv (4-D weight: a constant, or in a training step a graph input), MaxPool (no Indices),
// AveragePool, the global pools and, in a training step, the training ops on a 4-D float32 X: the
// nodes with a `channels_last` attribute.
bool has_channels_last_kernel(const ir::Graph& graph, const ir::Node& node, bool training = false) {
  if (node.inputs.empty() || !is_4d(graph, node.inputs[0]) || graph.value(node.inputs[0]).dtype != DType::kFloat32)
    return false;
  if (is_training_layout_op(node.op)) {
    if (!training) return false;
    if (node.op == OpKind::kConvGradData || node.op == OpKind::kConvGradFilter)  // (dY, W) and (X, dY)
      return node.inputs.size() >= 2 && is_4d(graph, node.inputs[1]);
    return true;
  }
  switch (node.op) {
    case OpKind::kConv:
      return node.inputs.size() >= 2 && is_4d(graph, node.inputs[1]) &&
             (graph.value(node.inputs[1]).constant || (training && is_graph_input(graph, node.inputs[1])));
    case OpKind::kMaxPool:
      return node.outputs.size() == 1 || node.outputs[1] == ir::kNoValue;  // no Indices output
    case OpKind::kAveragePool:
    case OpKind::kGlobalAveragePool:
    case OpKind::kGlobalMaxPool:
      return true;
    default:
      return false;
  }
}

// Elementwise ops and Concat whose operands are all 4-D or single elements: the same
// computation on NHWC operands.
bool runs_as_is_on_nhwc(const ir::Graph& graph, const ir::Node& node) {
  if (!is_layout_free_elementwise(node.op) && node.op != OpKind::kConcat) return false;
  for (ir::ValueId id : node.inputs) {
    if (id == ir::kNoValue || is_4d(graph, id)) continue;
    if (node.op == OpKind::kConcat || shape_numel(graph.value(id).shape) != 1) return false;
  }
  return true;
}

// Where NCHW axis a of a 4-D value sits in NHWC.
constexpr int64_t kNhwcPosition[4] = {0, 3, 1, 2};

// Slice's axes (input 3, or 0, 1, ... for as many as `starts` has) when they are constants
// within a 4-D X's rank; nullopt otherwise.
std::optional<std::vector<int64_t>> slice_axes(const ir::Graph& graph, const ir::Node& node) {
  if (node.inputs.size() < 3 || !graph.value(node.inputs[1]).constant) return std::nullopt;
  const bool given = node.inputs.size() > 3 && node.inputs[3] != ir::kNoValue;
  std::vector<int64_t> axes(static_cast<size_t>(graph.value(node.inputs[1]).constant->numel()));
  std::iota(axes.begin(), axes.end(), int64_t{0});
  if (given) {
    const auto& constant = graph.value(node.inputs[3]).constant;
    if (!constant) return std::nullopt;
    auto values = constant->to_int64_vector();
    if (!values || values->size() != axes.size()) return std::nullopt;
    axes = std::move(*values);
  }
  for (int64_t a : axes)
    if (a < -4 || a >= 4) return std::nullopt;
  return axes;
}

// Slice, and Gather with 1-D indices, of a 4-D X into a 4-D Y: the same selection of NHWC X
// along the remapped axes.
bool selects_along_axes(const ir::Graph& graph, const ir::Node& node) {
  if (node.inputs.size() < 2 || node.outputs.size() != 1 || !is_4d(graph, node.inputs[0]) ||
      !is_4d(graph, node.outputs[0]))
    return false;
  if (node.op == OpKind::kGather) return graph.value(node.inputs[1]).shape.size() == 1;
  return node.op == OpKind::kSlice && slice_axes(graph, node).has_value();
}

// ReduceSum or ReduceMean of a 4-D X over constant axes (input 1) whose output lists its kept dims in
// the same order in both layouts: keepdims (the output is 4-D too), or only N and C kept. Its axes,
// NCHW ones, in `axes`.
bool reduces_along_axes(const ir::Graph& graph, const ir::Node& node, std::vector<int64_t>* axes = nullptr) {
  if ((node.op != OpKind::kReduceSum && node.op != OpKind::kReduceMean) || node.inputs.size() < 2 ||
      !is_4d(graph, node.inputs[0]) || node.inputs[1] == ir::kNoValue || !graph.value(node.inputs[1]).constant)
    return false;
  auto values = graph.value(node.inputs[1]).constant->to_int64_vector();
  if (!values || values->empty()) return false;
  bool reduced[4] = {false, false, false, false};
  for (int64_t& a : *values) {
    if (a < -4 || a >= 4) return false;
    if (a < 0) a += 4;
    reduced[a] = true;
  }
  const bool keepdims = !node.attrs.has("keepdims") || node.attrs.get_int("keepdims") != 0;
  if (!keepdims && !(reduced[2] && reduced[3])) return false;  // H or W kept: [.., H, W, C] vs [.., C, H, W]
  if (axes != nullptr) *axes = std::move(*values);
  return true;
}

// `t` ([A, B, C, D], any dtype) with dims permuted by `perm`.
Tensor transpose4(const Tensor& t, const std::vector<int64_t>& perm) {
  const Shape& in = t.shape();
  const Shape out = {in[perm[0]], in[perm[1]], in[perm[2]], in[perm[3]]};
  Tensor result = *Tensor::allocate(t.dtype(), out);  // sizes of an existing tensor: cannot fail
  const size_t element = dtype_size(t.dtype());
  const int64_t in_strides[4] = {in[1] * in[2] * in[3], in[2] * in[3], in[3], 1};
  const auto* src = static_cast<const std::byte*>(t.raw());
  auto* dst = static_cast<std::byte*>(result.raw());
  int64_t i = 0;
  for (int64_t a = 0; a < out[0]; ++a)
    for (int64_t b = 0; b < out[1]; ++b)
      for (int64_t c = 0; c < out[2]; ++c)
        for (int64_t d = 0; d < out[3]; ++d, ++i) {
          const int64_t at = a * in_strides[perm[0]] + b * in_strides[perm[1]] + c * in_strides[perm[2]] +
                             d * in_strides[perm[3]];
          std::memcpy(dst + i * element, src + at * element, element);
        }
  return result;
}

class ChannelsLastRewriter {
 public:
  ChannelsLastRewriter(ir::Graph& graph, PassStats* stats, const std::set<std::string>& nchw_convs, bool training)
      : graph_(graph), stats_(stats), nchw_convs_(nchw_convs), training_(training), nhwc_twin_(graph.values.size(), ir::kNoValue),
        nchw_twin_(graph.values.size(), ir::kNoValue), is_nhwc_(graph.values.size(), false),
        nchw_name_(graph.values.size()) {}

  void run() {
    std::vector<ir::Node> old_nodes = std::move(graph_.nodes);
    graph_.nodes.clear();
    for (ir::Node& node : old_nodes) rewrite(std::move(node));
    for (ir::ValueId& id : graph_.outputs) id = nchw(id);
    for (size_t n = 0; n < graph_.nodes.size(); ++n)
      for (ir::ValueId id : graph_.nodes[n].outputs)
        if (id != ir::kNoValue) graph_.value(id).producer = static_cast<ir::NodeId>(n);
    graph_.prune();
  }

 private:
  bool is_4d(ir::ValueId id) const { return ucudnn::optimizer::is_4d(graph_, id); }
  bool nhwc_now(ir::ValueId id) const { return id != ir::kNoValue && is_nhwc_[id]; }

  void rewrite(ir::Node node) {
    const bool has_nhwc_input = std::any_of(node.inputs.begin(), node.inputs.end(),
                                            [&](ir::ValueId id) { return nhwc_now(id); });
    const bool kernel_runs_nhwc = has_channels_last_kernel(graph_, node, training_) &&
                                  (node.op == OpKind::kConv ? nchw_convs_.count(node.name) == 0 : has_nhwc_input);
    if (kernel_runs_nhwc && is_training_layout_op(node.op)) {
      for (ir::ValueId& id : node.inputs)
        if (is_4d(id)) id = nhwc(id);  // a weight: the twin the forward Conv made
      node.attrs.set(ir::kChannelsLastAttr, int64_t{1});
      emit_nhwc(std::move(node));
    } else if (kernel_runs_nhwc) {
      node.inputs[0] = nhwc(node.inputs[0]);
      if (node.op == OpKind::kConv) {
        node.inputs[1] = nhwc(node.inputs[1]);  // a constant: transposed here, once
        if (node.inputs.size() > ir::kConvResidualInput)  // z has Y's shape, so Y's layout
          node.inputs[ir::kConvResidualInput] = nhwc(node.inputs[ir::kConvResidualInput]);
      }
      node.attrs.set(ir::kChannelsLastAttr, int64_t{1});
      emit_nhwc(std::move(node));
    } else if (has_nhwc_input && runs_as_is_on_nhwc(graph_, node)) {
      for (ir::ValueId& id : node.inputs)
        if (is_4d(id)) id = nhwc(id);
      if (node.op == OpKind::kConcat) remap_axis(node, "axis");
      if (node.op == OpKind::kFusedPointwise && node.attrs.get_int(ir::kPointwiseConcatCountAttr) > 0)
        remap_axis(node, ir::kPointwiseConcatAxisAttr);  // its concatenated leaf, as a Concat's
      emit_nhwc(std::move(node));
    } else if (nhwc_now(node.inputs[0]) && reduces_along_axes(graph_, node)) {
      remap_reduce_axes(node);
      emit_nhwc(std::move(node));
    } else if (selects_along_axes(graph_, node) && nhwc_now(node.inputs[0])) {
      if (node.op == OpKind::kGather) remap_axis(node, "axis");
      else remap_slice_axes(node);
      emit_nhwc(std::move(node));
    } else if (has_nhwc_input && reads_same_bytes(node)) {
      graph_.nodes.push_back(std::move(node));  // Flatten/Reshape of an [N, 1, 1, C] value
    } else {
      for (ir::ValueId& id : node.inputs) id = nchw(id);
      graph_.nodes.push_back(std::move(node));
    }
  }

  // Attribute `name`, an NCHW axis of a 4-D value, made the same axis in NHWC.
  static void remap_axis(ir::Node& node, const char* name) {
    int64_t axis = node.attrs.get_int(name);
    if (axis < 0) axis += 4;
    node.attrs.set(name, kNhwcPosition[axis]);
  }

  // A Slice of NHWC X: its axes, NCHW ones, in a new constant of NHWC ones.
  void remap_slice_axes(ir::Node& node) {
    std::vector<int64_t> axes = *slice_axes(graph_, node);  // selects_along_axes checked it
    for (int64_t& a : axes) a = kNhwcPosition[a < 0 ? a + 4 : a];
    const Shape shape = {static_cast<int64_t>(axes.size())};
    const ir::ValueId id =
        add_value({node.name + ".nhwc_axes", DType::kInt64, shape, Tensor::from_int64s(shape, axes), -1});
    if (node.inputs.size() < 4) node.inputs.resize(4, ir::kNoValue);
    node.inputs[3] = id;
  }

  // A ReduceSum/ReduceMean of NHWC X: its axes, NCHW ones, in a new constant of NHWC ones.
  void remap_reduce_axes(ir::Node& node) {
    std::vector<int64_t> axes;
    reduces_along_axes(graph_, node, &axes);  // the caller checked it
    for (int64_t& a : axes) a = kNhwcPosition[a];
    const Shape shape = {static_cast<int64_t>(axes.size())};
    node.inputs[1] = add_value({node.name + ".nhwc_axes", DType::kInt64, shape, Tensor::from_int64s(shape, axes), -1});
  }

  bool reads_same_bytes(const ir::Node& node) const {
    const bool reshape = node.op == OpKind::kReshape || (node.op == OpKind::kFlatten && node.attrs.get_int("axis") == 1);
    if (!reshape || !nhwc_now(node.inputs[0])) return false;
    const Shape& s = graph_.value(node.inputs[0]).shape;  // [N, H, W, C]
    return s[1] == 1 && s[2] == 1;
  }

  // Makes the node's 4-D outputs NHWC: the value is renamed "<name>.nhwc" and
  // reshaped; its NCHW twin (made on demand) takes the original name.
  void emit_nhwc(ir::Node node) {
    for (ir::ValueId id : node.outputs) {
      if (!is_4d(id)) continue;
      ir::Value& v = graph_.value(id);
      nchw_name_[id] = v.name;
      v.name += ".nhwc";
      v.shape = ir::nchw_to_nhwc(v.shape);
      is_nhwc_[id] = true;
    }
    ++stats_->channels_last_nodes;
    graph_.nodes.push_back(std::move(node));
  }

  // The NHWC twin of NCHW value `id` (itself when already NHWC).
  ir::ValueId nhwc(ir::ValueId id) {
    if (id == ir::kNoValue || is_nhwc_[id]) return id;
    if (nhwc_twin_[id] != ir::kNoValue) return nhwc_twin_[id];
    const ir::Value& v = graph_.value(id);
    ir::Value twin_value{v.name + ".nhwc", v.dtype, ir::nchw_to_nhwc(v.shape), std::nullopt, -1};
    if (v.constant) twin_value.constant = transpose4(*v.constant, ir::kNchwToNhwcPerm);
    const bool constant = v.constant.has_value();
    const ir::ValueId twin = add_value(std::move(twin_value));  // `v` is invalid from here
    if (!constant) add_transpose(id, twin, ir::kNchwToNhwcPerm, graph_.value(id).name + ".to_nhwc");
    is_nhwc_[twin] = true;
    nhwc_twin_[id] = twin;
    nchw_twin_[twin] = id;
    return twin;
  }

  // The NCHW twin of NHWC value `id` (itself when already NCHW).
  ir::ValueId nchw(ir::ValueId id) {
    if (id == ir::kNoValue || !is_nhwc_[id]) return id;
    if (nchw_twin_[id] != ir::kNoValue) return nchw_twin_[id];
    const ir::Value& v = graph_.value(id);
    const std::string name = nchw_name_[id];
    const ir::ValueId twin = add_value({name, v.dtype, ir::nhwc_to_nchw(v.shape), std::nullopt, -1});
    add_transpose(id, twin, ir::kNhwcToNchwPerm, name + ".to_nchw");
    nchw_twin_[id] = twin;
    nhwc_twin_[twin] = id;
    return twin;
  }

  ir::ValueId add_value(ir::Value v) {
    const ir::ValueId id = graph_.add_value(std::move(v));
    nhwc_twin_.push_back(ir::kNoValue);
    nchw_twin_.push_back(ir::kNoValue);
    is_nhwc_.push_back(false);
    nchw_name_.emplace_back();
    return id;
  }

  void add_transpose(ir::ValueId from, ir::ValueId to, const std::vector<int64_t>& perm, std::string name) {
    ir::Node t;
    t.name = std::move(name);
    t.op = OpKind::kTranspose;
    t.opset = graph_.opset;
    t.inputs = {from};
    t.outputs = {to};
    t.attrs.set("perm", perm);
    graph_.nodes.push_back(std::move(t));
    ++stats_->layout_transposes;
  }

  ir::Graph& graph_;
  PassStats* stats_;
  const std::set<std::string>& nchw_convs_;
  const bool training_;  // a training step: its parameters' Convs and its training ops too
  std::vector<ir::ValueId> nhwc_twin_, nchw_twin_;
  std::vector<bool> is_nhwc_;
  std::vector<std::string> nchw_name_;  // for NHWC node outputs: the name their NCHW twin takes back
};

}  // namespace

bool is_training_layout_op(OpKind op) {
  switch (op) {
    case OpKind::kConvGradData: case OpKind::kConvGradFilter: case OpKind::kBatchNormTrain:
    case OpKind::kBatchNormGrad: case OpKind::kMaxPoolGrad: case OpKind::kAveragePoolGrad:
      return true;
    default:
      return false;
  }
}

bool can_run_channels_last(const ir::Graph& graph, const ir::Node& node) {
  return has_channels_last_kernel(graph, node) || runs_as_is_on_nhwc(graph, node) || selects_along_axes(graph, node) ||
         reduces_along_axes(graph, node);
}

Status convert_to_channels_last(ir::Graph& graph, PassStats* stats) {
  return convert_to_channels_last_except(graph, stats, {});
}

Status convert_to_channels_last_except(ir::Graph& graph, PassStats* stats, const std::vector<std::string>& nchw_convs) {
  const std::set<std::string> keep(nchw_convs.begin(), nchw_convs.end());
  for (const std::string& name : keep) {
    const bool found = std::any_of(graph.nodes.begin(), graph.nodes.end(), [&](const ir::Node& node) {
      return node.op == OpKind::kConv && node.name == name;
    });
    if (!found) return invalid_argument("the Conv '" + name + "' to keep in NCHW is not a Conv node of the model");
  }
  ChannelsLastRewriter(graph, stats, keep, false).run();
  return graph.validate().with_context("after the channels-last pass");
}

Status convert_training_step_to_channels_last(ir::Graph& graph, PassStats* stats) {
  const std::set<std::string> keep_none;
  ChannelsLastRewriter(graph, stats, keep_none, true).run();
  return graph.validate().with_context("after the channels-last pass over the training step");
}

}  // namespace ucudnn::optimizer
