// fuse_conv_bias: a Conv with a bias whose output only a FusedPointwise reads gives its bias to that
// node: the Conv loses input B, and the program gains a leaf for B (as [1, K, 1, ...], the output's
// rank) and a first instruction adding it to the Conv's leaf, which every instruction then reads
// instead. EfficientNet's Conv → SiLU: cuDNN adds a bias as its own pass over Y (cudnnAddTensor)
// unless a Relu is fused too; the pointwise kernel adds it while it reads Y anyway.
//
// A lone Add (fuse_pointwise leaves single nodes alone) of two float32 operands of its output's shape,
// without a fused activation, one of them such a Conv's output, first becomes a one-instruction
// FusedPointwise: the residual join of MobileNet's, MNASNet's and EfficientNet's blocks, whose
// projection Conv has a bias and no activation. Its bias pass then disappears into the Add's.
//
// A Conv whose output is only another Conv's residual z (fuse_conv_add: ResNet's downsample beside
// conv3, relu(conv3(x) + b3 + downsample(x') + b_ds)) gives its bias to that Conv instead: b3 + b_ds
// as one constant, added in the call that adds z anyway. The other Conv must have a bias already.
//
// Applies when the Conv has exactly X, W and a float32 constant B of K elements, no fused
// activation, its output is read once (by that FusedPointwise without a concat, or as that z) and is
// not a graph output, and the program has room for one more leaf and two more registers.
#include <map>
#include <span>
#include <string>
#include <vector>

#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"
#include "runtime/ir/pointwise_program.h"

namespace ucudnn::optimizer {

namespace {

// The Conv producing `y` that may give its bias to the one node reading `y`, or -1.
ir::NodeId conv_giving_bias(const ir::Graph& graph, const std::vector<int>& uses, ir::ValueId y) {
  if (y == ir::kNoValue) return -1;
  const ir::NodeId producer = graph.value(y).producer;
  if (producer < 0 || uses[y] != 1 || is_graph_output(graph, y)) return -1;
  const ir::Node& conv = graph.nodes[producer];
  if (conv.op != OpKind::kConv || conv.inputs.size() != 3 || conv.attrs.has(ir::kFusedActivationAttr)) return -1;
  const ir::Value& bias = graph.value(conv.inputs[2]);
  const ir::Value& w = graph.value(conv.inputs[1]);
  if (!bias.constant || bias.dtype != DType::kFloat32 || w.shape.empty() || bias.constant->numel() != w.shape[0])
    return -1;
  return producer;
}

// Whether `node` is an Add that add_as_pointwise may rewrite.
bool is_lone_add(const ir::Graph& graph, const ir::Node& node) {
  if (node.op != OpKind::kAdd || node.inputs.size() != 2 || node.outputs.size() != 1 ||
      node.attrs.has(ir::kFusedActivationAttr))
    return false;
  const ir::Value& out = graph.value(node.outputs[0]);
  for (ir::ValueId id : node.inputs) {
    const ir::Value& in = graph.value(id);
    if (in.dtype != DType::kFloat32 || in.shape != out.shape) return false;
  }
  return out.dtype == DType::kFloat32 && !out.shape.empty() && out.shape.size() <= ir::kMaxPointwiseRank;
}

// `add` as a FusedPointwise of one instruction: register 2 = leaf 0 + leaf 1.
ir::Node add_as_pointwise(const ir::Node& add) {
  PointwiseAttrs attrs;
  attrs.program = {static_cast<int64_t>(ir::PointwiseOp::kAdd), 0, 1, 0};
  attrs.pattern = "Add";
  return make_fused_pointwise(add, add.inputs, std::move(attrs));
}

// Gives the bias of `conv` to `pointwise`, whose input `i` (leaf i) is the Conv's output. `as_leaf`: the
// bias constants already reshaped to a rank, by (bias, rank): Convs sharing a bias share its leaf.
void move_bias(ir::Graph& graph, ir::Node& conv, ir::Node& pointwise, size_t i,
               std::map<std::pair<ir::ValueId, size_t>, ir::ValueId>& as_leaf) {
  const size_t rank = graph.value(pointwise.outputs[0]).shape.size();
  const ir::ValueId bias_id = conv.inputs[2];
  auto [leaf, added] = as_leaf.try_emplace({bias_id, rank}, ir::kNoValue);
  if (added) {
    const ir::Value& bias = graph.value(bias_id);
    Shape shape(rank, 1);
    shape[1] = bias.constant->numel();
    const Tensor& b = *bias.constant;
    Tensor reshaped =
        Tensor::from_floats(shape, std::span<const float>(b.data<float>(), static_cast<size_t>(b.numel())));
    const std::string name = bias.name + ".as_leaf" + (rank == 4 ? "" : std::to_string(rank));
    leaf->second = graph.add_value({name, DType::kFloat32, shape, std::move(reshaped), -1});
  }
  pointwise.inputs.push_back(leaf->second);
  conv.inputs.resize(2);

  const auto leaves = static_cast<int64_t>(pointwise.inputs.size()) - 1;  // before the bias leaf
  const std::vector<int64_t>& old_code = pointwise.attrs.get_ints(ir::kPointwiseProgramAttr);
  // Old register r: leaf i becomes the biased value (register leaves + 1), the other leaves stay,
  // instruction results move up by two (the new leaf, the new instruction).
  auto moved = [&](int64_t r) { return r == static_cast<int64_t>(i) ? leaves + 1 : r < leaves ? r : r + 2; };
  std::vector<int64_t> code = {static_cast<int64_t>(ir::PointwiseOp::kAdd), static_cast<int64_t>(i), leaves, 0};
  for (size_t w = 0; w < old_code.size(); w += ir::kInstructionWidth) {
    const auto op = static_cast<ir::PointwiseOp>(old_code[w]);  // operands it does not read stay 0
    const int64_t a = op == ir::PointwiseOp::kConstant ? old_code[w + 1] : moved(old_code[w + 1]);
    const int64_t b = ir::pointwise_op_is_binary(op) ? moved(old_code[w + 2]) : old_code[w + 2];
    code.insert(code.end(), {old_code[w], a, b, old_code[w + 3]});
  }
  pointwise.attrs.set(ir::kPointwiseProgramAttr, std::move(code));
  pointwise.attrs.set(ir::kPointwisePatternAttr, "Bias+" + pointwise.attrs.get_string(ir::kPointwisePatternAttr));
}

// Whether `conv` reads a residual z and has a float32 constant bias of as many elements as `giver`'s.
bool takes_residual_bias(const ir::Graph& graph, const ir::Node& conv, const ir::Node& giver) {
  if (conv.op != OpKind::kConv || conv.inputs.size() <= ir::kConvResidualInput || conv.inputs[2] == ir::kNoValue)
    return false;
  const ir::Value& bias = graph.value(conv.inputs[2]);
  return bias.constant && bias.dtype == DType::kFloat32 &&
         bias.constant->numel() == graph.value(giver.inputs[2]).constant->numel();
}

// Gives the bias of `giver`, whose output is `conv`'s residual z, to `conv`: its bias becomes the sum.
void add_bias_to_residual_reader(ir::Graph& graph, ir::Node& giver, ir::Node& conv) {
  const ir::Value& own = graph.value(conv.inputs[2]);
  const ir::Value& given = graph.value(giver.inputs[2]);
  std::vector<float> sum(own.constant->data<float>(), own.constant->data<float>() + own.constant->numel());
  for (size_t k = 0; k < sum.size(); ++k) sum[k] += given.constant->data<float>()[k];
  const std::string name = own.name + "+" + given.name;
  const Shape shape = own.shape;
  conv.inputs[2] = graph.add_value({name, DType::kFloat32, shape, Tensor::from_floats(shape, sum), -1});
  giver.inputs.resize(2);
}

}  // namespace

Status fuse_conv_bias(ir::Graph& graph, PassStats* stats) {
  const std::vector<int> uses = count_uses(graph);
  std::map<std::pair<ir::ValueId, size_t>, ir::ValueId> as_leaf;
  for (ir::Node& pointwise : graph.nodes) {
    if (is_lone_add(graph, pointwise) && (conv_giving_bias(graph, uses, pointwise.inputs[0]) >= 0 ||
                                          conv_giving_bias(graph, uses, pointwise.inputs[1]) >= 0)) {
      pointwise = add_as_pointwise(pointwise);
      ++stats->adds_made_pointwise;
    }
    if (pointwise.op != OpKind::kFusedPointwise || pointwise.attrs.get_int(ir::kPointwiseConcatCountAttr) != 0)
      continue;
    for (size_t i = 0; i < pointwise.inputs.size(); ++i) {
      const int64_t registers =
          static_cast<int64_t>(pointwise.inputs.size() +
                               pointwise.attrs.get_ints(ir::kPointwiseProgramAttr).size() / ir::kInstructionWidth);
      if (pointwise.inputs.size() + 1 > static_cast<size_t>(ir::kMaxPointwiseLeaves) ||
          registers + 2 > ir::kMaxPointwiseRegisters)
        break;
      const ir::NodeId conv = conv_giving_bias(graph, uses, pointwise.inputs[i]);
      if (conv < 0) continue;
      move_bias(graph, graph.nodes[conv], pointwise, i, as_leaf);
      ++stats->conv_biases_moved;
    }
  }
  for (ir::Node& conv : graph.nodes) {
    if (conv.op != OpKind::kConv || conv.inputs.size() <= ir::kConvResidualInput) continue;
    const ir::NodeId giver = conv_giving_bias(graph, uses, conv.inputs[ir::kConvResidualInput]);
    if (giver < 0 || !takes_residual_bias(graph, conv, graph.nodes[giver])) continue;
    add_bias_to_residual_reader(graph, graph.nodes[giver], conv);
    ++stats->conv_biases_moved;
  }
  graph.prune();  // the biases no one reads now
  return Status::ok();
}

}  // namespace ucudnn::optimizer
