// The passes that give a Conv the activation after it (Note [fused nodes]), one per device:
//
// fuse_depthwise_activation (the GPU's): a depthwise Conv whose output only an activation the Conv's
// epilogue can apply reads — a one-input FusedPointwise computing SiLU (Sigmoid, then Mul by the
// input), HardSwish (also as x · HardSigmoid(x)), Sigmoid or Clip, or a lone HardSwish, Sigmoid or Clip
// node (ReLU6) — becomes one Conv with that activation (Note [fused nodes]).
// On the GPU the depthwise kernel (UCUDNN_DEPTHWISE) applies it as it writes Y, so EfficientNet's and
// MobileNetV3's depthwise layers write their output once instead of three times (the Conv, then the
// activation's read and write); cuDNN's algorithms apply it after the convolution, in the pass that
// adds the bias. Depthwise only: for other Convs cuDNN would gain nothing, and fuse_conv_bias gives
// their bias to the pointwise node instead.
//
// Applies when the Conv is 2-D with group = its input channels and one input channel per filter, has
// no residual input and no activation, and its output is not a graph output.
//
// fuse_any_conv_activation (the CPU's) does the same for every Conv without a residual input or an
// activation: oneDNN applies the activation inside the convolution (an eltwise post-op, Note [oneDNN
// epilogue] in runtime/cpu/onednn_conv.cc), so EfficientNet's and MobileNetV3's expansions and
// depthwise layers write Y once instead of reading and writing it again.
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"
#include "runtime/ir/pointwise_program.h"

namespace ucudnn::optimizer {

namespace {

using ir::PointwiseOp;

struct Activation {
  std::string name;
  float min = 0, max = 0;  // Clip's
};

// Clip's bound `i` (1: min, 2: max) when absent or a one-element float32 constant.
std::optional<float> clip_bound(const ir::Graph& graph, const ir::Node& clip, size_t i) {
  if (i >= clip.inputs.size() || clip.inputs[i] == ir::kNoValue)
    return i == 1 ? std::numeric_limits<float>::lowest() : std::numeric_limits<float>::max();
  const ir::Value& v = graph.value(clip.inputs[i]);
  if (!v.constant || v.dtype != DType::kFloat32 || v.constant->numel() != 1) return std::nullopt;
  return v.constant->data<float>()[0];
}

// The activation a lone node computes of its first input (a Clip its data input), or nothing.
std::optional<Activation> activation_node(const ir::Graph& graph, const ir::Node& node) {
  if (node.outputs.size() != 1 || node.attrs.has(ir::kFusedActivationAttr)) return std::nullopt;
  if (node.op == OpKind::kHardSwish) return Activation{"HardSwish"};
  if (node.op == OpKind::kSigmoid) return Activation{"Sigmoid"};
  if (node.op != OpKind::kClip || node.attrs.has("min") || node.attrs.has("max")) return std::nullopt;
  const std::optional<float> min = clip_bound(graph, node, 1), max = clip_bound(graph, node, 2);
  if (!min || !max) return std::nullopt;
  return Activation{"Clip", *min, *max};
}

// The activation `node` (a FusedPointwise of one input, or a lone activation node) computes, or nothing.
std::optional<Activation> activation_of(const ir::Graph& graph, const ir::Node& pointwise) {
  if (pointwise.op != OpKind::kFusedPointwise) return activation_node(graph, pointwise);
  if (pointwise.inputs.size() != 1 || pointwise.attrs.get_int(ir::kPointwiseConcatCountAttr) != 0)
    return std::nullopt;
  const std::vector<int64_t>& code = pointwise.attrs.get_ints(ir::kPointwiseProgramAttr);
  auto op = [&](size_t i) { return static_cast<PointwiseOp>(code[i * ir::kInstructionWidth]); };
  auto reads = [&](size_t i, int64_t a, int64_t b) {
    return code[i * ir::kInstructionWidth + 1] == a && code[i * ir::kInstructionWidth + 2] == b;
  };
  const size_t count = code.size() / ir::kInstructionWidth;
  const std::vector<float>& constants = pointwise.attrs.get_floats(ir::kPointwiseConstantsAttr);
  auto immediates = [&](size_t i, float p0, float p1) {  // exactly: the fused kernel computes the same
    const auto k = static_cast<size_t>(code[i * ir::kInstructionWidth + 3]);
    return k + 1 < constants.size() && constants[k] == p0 && constants[k + 1] == p1;
  };
  // Registers: 0 the input, 1 the first instruction's result, 2 the second's.
  const bool times_input = count == 2 && reads(0, 0, 0) && op(1) == PointwiseOp::kMul &&
                           (reads(1, 0, 1) || reads(1, 1, 0));
  if (times_input && op(0) == PointwiseOp::kSigmoid) return Activation{"SiLU"};
  // HardSwish as older opsets export it, x · HardSigmoid(x) with alpha 1/6 and beta 1/2: eval_pointwise's
  // HardSwish computes x · max(0, min(1, x · (1/6) + 0.5)), the same operations.
  if (times_input && op(0) == PointwiseOp::kHardSigmoid && immediates(0, 1.0f / 6.0f, 0.5f))
    return Activation{"HardSwish"};
  if (count != 1 || !reads(0, 0, 0)) return std::nullopt;
  if (op(0) == PointwiseOp::kHardSwish) return Activation{"HardSwish"};
  if (op(0) == PointwiseOp::kSigmoid) return Activation{"Sigmoid"};
  if (op(0) == PointwiseOp::kClip) {
    const auto k = static_cast<size_t>(code[3]);
    if (k + 1 >= constants.size()) return std::nullopt;
    return Activation{"Clip", constants[k], constants[k + 1]};
  }
  return std::nullopt;
}

// A Conv without a residual input or a fused activation.
bool is_plain_conv(const ir::Graph&, const ir::Node& conv) {
  return conv.op == OpKind::kConv && conv.inputs.size() <= 3 && !conv.attrs.has(ir::kFusedActivationAttr);
}

bool is_depthwise_2d(const ir::Graph& graph, const ir::Node& conv) {
  if (!is_plain_conv(graph, conv)) return false;
  const Shape& x = graph.value(conv.inputs[0]).shape;
  const Shape& w = graph.value(conv.inputs[1]).shape;
  const int64_t group = conv.attrs.has("group") ? conv.attrs.get_int("group") : 1;
  return x.size() == 4 && w.size() == 4 && w[1] == 1 && group == x[1] && group > 1;
}

// Gives each activation whose input only it reads to the Conv that produced it, where `accepts` the Conv.
Status fuse_activations(ir::Graph& graph, PassStats* stats, bool (*accepts)(const ir::Graph&, const ir::Node&)) {
  const std::vector<int> uses = count_uses(graph);
  std::vector<bool> remove(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const std::optional<Activation> activation = activation_of(graph, graph.nodes[n]);
    if (!activation) continue;
    const ir::ValueId y = graph.nodes[n].inputs[0];
    const ir::NodeId producer = graph.value(y).producer;
    if (producer < 0 || uses[y] != 1 || is_graph_output(graph, y)) continue;
    ir::Node& conv = graph.nodes[producer];
    if (!accepts(graph, conv)) continue;
    conv.attrs.set(ir::kFusedActivationAttr, activation->name);
    if (activation->name == "Clip") {
      conv.attrs.set(ir::kFusedActivationMinAttr, activation->min);
      conv.attrs.set(ir::kFusedActivationMaxAttr, activation->max);
    }
    conv.outputs[0] = graph.nodes[n].outputs[0];
    graph.value(conv.outputs[0]).producer = producer;
    remove[n] = true;
    ++stats->activations_fused;
  }
  remove_nodes(graph, remove);
  return Status::ok();
}

}  // namespace

Status fuse_depthwise_activation(ir::Graph& graph, PassStats* stats) {
  return fuse_activations(graph, stats, is_depthwise_2d);
}

Status fuse_any_conv_activation(ir::Graph& graph, PassStats* stats) {
  return fuse_activations(graph, stats, is_plain_conv);
}

}  // namespace ucudnn::optimizer
