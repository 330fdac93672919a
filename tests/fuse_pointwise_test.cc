// Tests of decompose_batch_norm, fuse_pointwise, fuse_depthwise_activation and fuse_conv_bias
// (optimizer/passes/passes.h; Note [pointwise
// programs], runtime/ir/pointwise_program.h) in the style of passes_test.cc: each input graph's
// rewrite is compared with a graph written by hand — which nodes fuse, the program, leaves and
// their order, the concat leaf, the pattern name — and both graphs run on the CPU with the same
// outputs. Then what must stay unfused, the limits, the channels-last rewrite of a fused node, and
// (on a GPU, skipped without one) the fused graphs in both layouts against the CPU.
#include <cmath>

#include "optimizer/report.h"
#include "runtime/ir/pointwise_program.h"
#include "tests/support/backend_runner.h"
#include "tests/support/pass_test_helpers.h"

namespace ucudnn::optimizer {
namespace {

using ir::PointwiseOp;
using ucudnn_test::GraphBuilder;
using ucudnn_test::random_tensor;
using ucudnn_test::same_graph;

// ---- building graphs ----

Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    out[i] = std::max(da, db);
  }
  return out;
}

ir::ValueId unary(GraphBuilder& b, OpKind op, ir::ValueId x, ir::Attributes attrs = {}) {
  return b.same_shape(op, {x}, std::move(attrs));
}
ir::ValueId binary(GraphBuilder& b, OpKind op, ir::ValueId x, ir::ValueId y) {
  return b.node(op, {x, y}, {broadcast(b.shape(x), b.shape(y))})[0];
}
ir::ValueId scalar(GraphBuilder& b, float value) {
  return b.constant("c" + std::to_string(b.graph().values.size()), Tensor::from_floats({}, std::vector<float>{value}));
}
ir::Attributes float_attrs(std::initializer_list<std::pair<const char*, float>> values) {
  ir::Attributes attrs;
  for (const auto& [name, value] : values) attrs.set(name, value);
  return attrs;
}

// One instruction {opcode, a, b, k}.
struct Ins {
  PointwiseOp op;
  int64_t a = 0, b = 0, k = 0;
};
struct Fused {
  std::vector<Ins> program;
  std::vector<float> constants;
  std::string pattern;
  int64_t concat_count = 0, concat_axis = -1;
};
// The FusedPointwise node fuse_pointwise must make.
ir::ValueId fused(GraphBuilder& b, std::vector<ir::ValueId> inputs, const Shape& shape, const Fused& f) {
  std::vector<int64_t> program;
  for (const Ins& i : f.program) program.insert(program.end(), {static_cast<int64_t>(i.op), i.a, i.b, i.k});
  ir::Attributes attrs;
  attrs.set(ir::kPointwiseProgramAttr, program);
  attrs.set(ir::kPointwiseConstantsAttr, f.constants);
  attrs.set(ir::kPointwiseConcatAxisAttr, f.concat_axis);
  attrs.set(ir::kPointwiseConcatCountAttr, f.concat_count);
  attrs.set(ir::kPointwisePatternAttr, f.pattern);
  return b.node(OpKind::kFusedPointwise, std::move(inputs), {shape}, std::move(attrs))[0];
}

// BatchNormalization's scale and shift [1, C, 1, ..., 1] of rank `rank`, computed here in double.
std::pair<Tensor, Tensor> scale_shift_reference(const BatchNormParameters& p, size_t rank) {
  const int64_t c = p.scale.numel();
  std::vector<float> scale(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) {
    const double s = p.scale.data<float>()[i] / std::sqrt(double{p.variance.data<float>()[i]} + p.epsilon);
    scale[i] = static_cast<float>(s);
    shift[i] = static_cast<float>(p.bias.data<float>()[i] - p.mean.data<float>()[i] * s);
  }
  Shape shape(rank, 1);
  shape[1] = c;
  return {Tensor::from_floats(shape, scale), Tensor::from_floats(shape, shift)};
}

std::vector<const ir::Node*> fused_nodes(const ir::Graph& graph) {
  std::vector<const ir::Node*> nodes;
  for (const ir::Node& n : graph.nodes)
    if (n.op == OpKind::kFusedPointwise) nodes.push_back(&n);
  return nodes;
}

// Runs `pass` on a copy of `original`; expects `expected` and the same outputs.
void expect_rewrite(Pass pass, const ir::Graph& original, const ir::Graph& expected) {
  ir::Graph graph = original;
  run_pass(pass, graph);
  EXPECT_TRUE(same_graph(expected, graph));
  expect_same_outputs(original, graph);
}

// ---- decompose_batch_norm ----

// Relu → BatchNormalization (pre-activation: no Conv to fold into) becomes Relu → Mul → Add.
TEST(DecomposeBatchNorm, UnfoldableBatchNormBecomesScaleAndShift) {
  const BatchNormParameters bn = random_batch_norm(3, 10);
  GraphBuilder in;
  in.output(add_batch_norm(in, in.relu(in.input("x", {2, 3, 4, 5})), bn), "y");
  const auto [scale, shift] = scale_shift_reference(bn, 4);
  GraphBuilder expected;
  const ir::ValueId r = expected.relu(expected.input("x", {2, 3, 4, 5}));
  const ir::ValueId m = binary(expected, OpKind::kMul, r, expected.constant("scale", scale));
  expected.output(binary(expected, OpKind::kAdd, m, expected.constant("shift", shift)), "y");
  ir::Graph graph = in.finish();
  EXPECT_EQ(run_pass(decompose_batch_norm, graph).batch_norms_decomposed, 1);
  expect_rewrite(decompose_batch_norm, in.finish(), expected.finish());
}

TEST(DecomposeBatchNorm, RankTwoInputGetsConstantsOfRankTwo) {
  const BatchNormParameters bn = random_batch_norm(5, 20);
  GraphBuilder in;
  in.output(add_batch_norm(in, in.input("x", {3, 5}), bn), "y");
  const auto [scale, shift] = scale_shift_reference(bn, 2);
  GraphBuilder expected;
  const ir::ValueId m = binary(expected, OpKind::kMul, expected.input("x", {3, 5}), expected.constant("s", scale));
  expected.output(binary(expected, OpKind::kAdd, m, expected.constant("t", shift)), "y");
  expect_rewrite(decompose_batch_norm, in.finish(), expected.finish());
}

TEST(DecomposeBatchNorm, LeavesNonConstantParametersAlone) {
  expect_unchanged(decompose_batch_norm, {
      {"the mean is a graph input",
       [] {
         GraphBuilder b;
         const BatchNormParameters p = random_batch_norm(3, 4);
         b.output(b.batch_norm(b.input("x", {1, 3, 2, 2}), b.constant("scale", p.scale), b.constant("shift", p.bias),
                               b.input("mean", {3}), b.constant("var", p.variance), p.epsilon),
                  "y");
         return b.finish();
       }},
  });
}

// ---- fuse_pointwise: what fuses ----

// x·sigmoid(x): x is one leaf read by both instructions.
TEST(FusePointwise, SiluIsOneNodeWithOneLeaf) {
  GraphBuilder in;
  const ir::ValueId x = in.input("x", {2, 3, 4, 4});
  in.output(binary(in, OpKind::kMul, x, unary(in, OpKind::kSigmoid, x)), "y");
  GraphBuilder expected;
  const ir::ValueId ex = expected.input("x", {2, 3, 4, 4});
  expected.output(fused(expected, {ex}, {2, 3, 4, 4},
                        {.program = {{PointwiseOp::kSigmoid, 0}, {PointwiseOp::kMul, 0, 1}}, .pattern = "SiLU"}),
                  "y");
  ir::Graph graph = in.finish();
  const PassStats stats = run_pass(fuse_pointwise, graph);
  EXPECT_EQ(stats.pointwise_fused, 1);
  EXPECT_EQ(stats.pointwise_nodes_replaced, 2);
  expect_rewrite(fuse_pointwise, in.finish(), expected.finish());
}

// A squeeze-excitation block after a SiLU: the SiLU's output has two readers (the pool and the
// gate), so it is a root of its own; the gate [N, C, 1, 1] stays a leaf (a lone Sigmoid, not
// recomputed per element); the gate Mul, an Add of a scalar (an immediate) and a Relu fuse.
TEST(FusePointwise, SiluAndTheSqueezeExcitationGateAreSeparateTrees) {
  const Tensor w = random_tensor({4, 4, 1, 1}, 1), bias = random_tensor({4}, 2);
  GraphBuilder in;
  const ir::ValueId x = in.input("x", {2, 4, 5, 5});
  const ir::ValueId s = binary(in, OpKind::kMul, x, unary(in, OpKind::kSigmoid, x));
  const ir::ValueId g =
      unary(in, OpKind::kSigmoid, in.conv(in.global_average_pool(s), in.constant("w", w), in.constant("b", bias)));
  in.output(in.relu(binary(in, OpKind::kAdd, binary(in, OpKind::kMul, s, g), scalar(in, 0.5f))), "y");

  GraphBuilder expected;
  const ir::ValueId ex = expected.input("x", {2, 4, 5, 5});
  const ir::ValueId es = fused(expected, {ex}, {2, 4, 5, 5},
                               {.program = {{PointwiseOp::kSigmoid, 0}, {PointwiseOp::kMul, 0, 1}}, .pattern = "SiLU"});
  const ir::ValueId eg = expected.conv(expected.global_average_pool(es), expected.constant("w", w),
                                       expected.constant("b", bias));
  // The gate's Sigmoid at [2, 4, 1, 1] joins, recomputed per element. Registers: s 0, the conv's
  // output 1; sigmoid 2; s·gate 3; 0.5 4; + 5; relu 6.
  expected.output(fused(expected, {es, eg}, {2, 4, 5, 5},
                        {.program = {{PointwiseOp::kSigmoid, 1},
                                     {PointwiseOp::kMul, 0, 2},
                                     {PointwiseOp::kConstant, 0, 0, 0},
                                     {PointwiseOp::kAdd, 3, 4},
                                     {PointwiseOp::kRelu, 5}},
                         .constants = {0.5f},
                         .pattern = "SE gate+Add+Relu"}),
                  "y");
  expect_rewrite(fuse_pointwise, in.finish(), expected.finish());
}

// A squeeze-excitation gate alone: the Sigmoid at [N, C, 1, 1] and the broadcast Mul become one node.
TEST(FusePointwise, GateSigmoidJoinsTheBroadcastMul) {
  GraphBuilder in;
  const ir::ValueId g = unary(in, OpKind::kSigmoid, in.input("g", {2, 3, 1, 1}));
  in.output(binary(in, OpKind::kMul, in.input("x", {2, 3, 4, 4}), g), "y");

  GraphBuilder expected;
  const ir::ValueId eg = expected.input("g", {2, 3, 1, 1}), ex = expected.input("x", {2, 3, 4, 4});
  // Registers: x 0, g 1; sigmoid 2; x·gate 3.
  expected.output(fused(expected, {ex, eg}, {2, 3, 4, 4},
                        {.program = {{PointwiseOp::kSigmoid, 1}, {PointwiseOp::kMul, 0, 2}}, .pattern = "SE gate"}),
                  "y");
  expect_rewrite(fuse_pointwise, in.finish(), expected.finish());
}

// DenseNet's Concat → BatchNormalization → Relu: the whole pipeline makes one node whose leaf 0 is
// the concatenation of the pieces (a negative axis normalised), then the scale and shift.
TEST(FusePointwise, ConcatBatchNormReluIsOneNodeReadingThePieces) {
  const BatchNormParameters bn = random_batch_norm(5, 30);
  GraphBuilder in;
  const ir::ValueId a = in.input("a", {2, 2, 3, 3}), c = in.input("c", {2, 3, 3, 3});
  in.output(in.relu(add_batch_norm(in, in.concat({a, c}, 1), bn)), "y");
  ir::Graph original = in.finish();
  original.nodes[0].attrs.set("axis", int64_t{-3});

  const auto [scale, shift] = scale_shift_reference(bn, 4);
  GraphBuilder expected;
  const ir::ValueId ea = expected.input("a", {2, 2, 3, 3}), ec = expected.input("c", {2, 3, 3, 3});
  // Registers: concat 0, scale 1, shift 2; ·scale 3; +shift 4; relu 5.
  expected.output(
      fused(expected, {ea, ec, expected.constant("scale", scale), expected.constant("shift", shift)}, {2, 5, 3, 3},
            {.program = {{PointwiseOp::kMul, 0, 1}, {PointwiseOp::kAdd, 3, 2}, {PointwiseOp::kRelu, 4}},
             .pattern = "Concat+BN+ReLU",
             .concat_count = 2,
             .concat_axis = 1}),
      "y");
  ir::Graph graph = original;
  const PassStats stats = run_passes(graph);
  EXPECT_EQ(stats.batch_norms_decomposed, 1);
  EXPECT_EQ(stats.pointwise_fused, 1);
  EXPECT_EQ(stats.pointwise_nodes_replaced, 4);  // Concat, Mul, Add, Relu
  EXPECT_TRUE(same_graph(expected.finish(), graph));
  expect_same_outputs(original, graph);
}

// The concat leaf becomes leaf 0 even when the tree meets another leaf first.
TEST(FusePointwise, ConcatLeafMovesToTheFront) {
  GraphBuilder in;
  const ir::ValueId a = in.input("a", {2, 2, 3}), c = in.input("c", {2, 1, 3}), z = in.input("z", {2, 3, 3});
  in.output(in.relu(binary(in, OpKind::kSub, z, in.concat({a, c}, 1))), "y");
  GraphBuilder expected;
  const ir::ValueId ea = expected.input("a", {2, 2, 3}), ec = expected.input("c", {2, 1, 3});
  const ir::ValueId ez = expected.input("z", {2, 3, 3});
  expected.output(fused(expected, {ea, ec, ez}, {2, 3, 3},
                        {.program = {{PointwiseOp::kSub, 1, 0}, {PointwiseOp::kRelu, 2}},
                         .pattern = "Concat+Sub+Relu",
                         .concat_count = 2,
                         .concat_axis = 1}),
                  "y");
  expect_rewrite(fuse_pointwise, in.finish(), expected.finish());
}

// A Concat read twice stays; the scale-shift-Relu after it still fuses, reading it as a leaf.
TEST(FusePointwise, ConcatWithAnotherReaderStaysAConcat) {
  const BatchNormParameters bn = random_batch_norm(4, 40);
  GraphBuilder in;
  const ir::ValueId joined = in.concat({in.input("a", {1, 2, 3, 3}), in.input("c", {1, 2, 3, 3})}, 1);
  in.output(in.relu(add_batch_norm(in, joined, bn)), "y");
  in.output(joined, "joined");
  const ir::Graph original = in.finish();
  ir::Graph graph = original;
  run_passes(graph);
  ASSERT_EQ(graph.nodes.size(), 2u);
  EXPECT_EQ(graph.nodes[0].op, OpKind::kConcat);
  ASSERT_EQ(fused_nodes(graph).size(), 1u);
  const ir::Node& f = *fused_nodes(graph)[0];
  EXPECT_EQ(f.attrs.get_string(ir::kPointwisePatternAttr), "BN+ReLU");
  EXPECT_EQ(f.attrs.get_int(ir::kPointwiseConcatCountAttr), 0);
  EXPECT_EQ(f.inputs[0], graph.nodes[0].outputs[0]);
  expect_same_outputs(original, graph);
}

// GELU as PyTorch exports it, and with the constant multiplied first.
TEST(FusePointwise, GeluInEitherOrderOfTheProducts) {
  for (bool half_first : {false, true}) {
    SCOPED_TRACE(half_first ? "(x·0.5)·(1 + erf)" : "(x·(1 + erf))·0.5");
    GraphBuilder in;
    const ir::ValueId x = in.input("x", {3, 8});
    const ir::ValueId e = unary(in, OpKind::kErf, binary(in, OpKind::kDiv, x, scalar(in, std::sqrt(2.0f))));
    const ir::ValueId one_plus = binary(in, OpKind::kAdd, e, scalar(in, 1.0f));
    const ir::ValueId y = half_first
                              ? binary(in, OpKind::kMul, binary(in, OpKind::kMul, x, scalar(in, 0.5f)), one_plus)
                              : binary(in, OpKind::kMul, binary(in, OpKind::kMul, x, one_plus), scalar(in, 0.5f));
    in.output(y, "y");
    const ir::Graph original = in.finish();
    ir::Graph graph = original;
    run_pass(fuse_pointwise, graph);
    ASSERT_EQ(graph.nodes.size(), 1u);
    EXPECT_EQ(graph.nodes[0].attrs.get_string(ir::kPointwisePatternAttr), "GELU");
    EXPECT_EQ(graph.nodes[0].inputs, std::vector<ir::ValueId>{graph.inputs[0]});
    expect_same_outputs(original, graph);
  }
  // The program itself, for PyTorch's order: registers x 0; √2 1; / 2; erf 3; 1 4; + 5; · 6; 0.5 7; · 8.
  GraphBuilder in;
  const ir::ValueId x = in.input("x", {3, 8});
  const ir::ValueId e = unary(in, OpKind::kErf, binary(in, OpKind::kDiv, x, scalar(in, std::sqrt(2.0f))));
  const ir::ValueId inner = binary(in, OpKind::kMul, x, binary(in, OpKind::kAdd, e, scalar(in, 1.0f)));
  in.output(binary(in, OpKind::kMul, inner, scalar(in, 0.5f)), "y");
  GraphBuilder expected;
  expected.output(fused(expected, {expected.input("x", {3, 8})}, {3, 8},
                        {.program = {{PointwiseOp::kConstant, 0, 0, 0},
                                     {PointwiseOp::kDiv, 0, 1},
                                     {PointwiseOp::kErf, 2},
                                     {PointwiseOp::kConstant, 0, 0, 1},
                                     {PointwiseOp::kAdd, 3, 4},
                                     {PointwiseOp::kMul, 0, 5},
                                     {PointwiseOp::kConstant, 0, 0, 2},
                                     {PointwiseOp::kMul, 6, 7}},
                         .constants = {std::sqrt(2.0f), 1.0f, 0.5f},
                         .pattern = "GELU"}),
                  "y");
  expect_rewrite(fuse_pointwise, in.finish(), expected.finish());
}

// The pattern fuse_pointwise names a tree, and that the tree computes what its nodes did.
void expect_pattern(const std::string& pattern, const std::function<void(GraphBuilder&, ir::ValueId)>& build,
                    const Shape& shape = {2, 3, 4, 4}) {
  SCOPED_TRACE(pattern);
  GraphBuilder in;
  build(in, in.input("x", shape));
  const ir::Graph original = in.finish();
  ir::Graph graph = original;
  run_pass(fuse_pointwise, graph);
  const std::vector<const ir::Node*> nodes = fused_nodes(graph);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0]->attrs.get_string(ir::kPointwisePatternAttr), pattern);
  expect_same_outputs(original, graph);
}

TEST(FusePointwise, NamesThePatterns) {
  expect_pattern("HardSwish", [](GraphBuilder& b, ir::ValueId x) {  // x·clip(x + 3, 0, 6)/6
    const ir::ValueId clip = b.same_shape(
        OpKind::kClip, {binary(b, OpKind::kAdd, x, scalar(b, 3)), scalar(b, 0), scalar(b, 6)});
    b.output(binary(b, OpKind::kDiv, binary(b, OpKind::kMul, x, clip), scalar(b, 6)), "y");
  });
  expect_pattern("HardSwish", [](GraphBuilder& b, ir::ValueId x) {  // x·hardsigmoid(x; 1/6, 1/2)
    const ir::ValueId h = unary(b, OpKind::kHardSigmoid, x, float_attrs({{"alpha", 1.0f / 6}, {"beta", 0.5f}}));
    b.output(binary(b, OpKind::kMul, h, x), "y");
  });
  expect_pattern("ReLU6+Mul", [](GraphBuilder& b, ir::ValueId x) {
    const ir::ValueId clip = b.same_shape(OpKind::kClip, {x, scalar(b, 0), scalar(b, 6)});
    b.output(binary(b, OpKind::kMul, clip, scalar(b, 2)), "y");
  });
  expect_pattern("HardSwish+Tanh", [](GraphBuilder& b, ir::ValueId x) {
    b.output(unary(b, OpKind::kTanh, unary(b, OpKind::kHardSwish, x)), "y");
  });
  expect_pattern("Clip+Elu+LeakyRelu", [](GraphBuilder& b, ir::ValueId x) {  // Clip with only a max
    const ir::ValueId clip = b.same_shape(OpKind::kClip, {x, ir::kNoValue, scalar(b, 0.25f)});
    const ir::ValueId elu = unary(b, OpKind::kElu, clip, float_attrs({{"alpha", 0.7f}}));
    b.output(unary(b, OpKind::kLeakyRelu, elu, float_attrs({{"alpha", 0.1f}})), "y");
  });
  // PRelu's slope [C, 1, 1] becomes a leaf of rank 4; a fused Add[Relu] is Add then Relu.
  expect_pattern("PRelu+Add+Relu", [](GraphBuilder& b, ir::ValueId x) {
    const ir::ValueId p =
        b.same_shape(OpKind::kPRelu, {x, b.constant("slope", random_tensor({3, 1, 1}, 7))});
    b.output(b.add(p, x, "Relu"), "y");
  });
  // A Relu's output read by the BN's Mul alone joins it.
  expect_pattern("Relu+BN", [](GraphBuilder& b, ir::ValueId x) {
    const ir::ValueId r = b.relu(x);
    b.output(binary(b, OpKind::kAdd, binary(b, OpKind::kMul, r, b.constant("s", random_tensor({1, 3, 1, 1}, 8))),
                    b.constant("t", random_tensor({1, 3, 1, 1}, 9))),
             "y");
  });
}

// An existing FusedPointwise is one node like any other: a second run changes nothing, and a
// Relu added after it joins it.
TEST(FusePointwise, ExistingFusedNodesAreStableAndExtend) {
  auto silu = [](bool relu) {
    GraphBuilder b;
    const ir::ValueId x = b.input("x", {2, 6});
    ir::ValueId y = binary(b, OpKind::kMul, x, unary(b, OpKind::kSigmoid, x));
    if (relu) y = b.relu(y);
    b.output(y, "y");
    return b.finish();
  };
  ir::Graph once = silu(false);
  run_pass(fuse_pointwise, once);
  const ir::Graph expected = once;
  EXPECT_EQ(run_pass(fuse_pointwise, once).pointwise_fused, 0);
  EXPECT_TRUE(same_graph(expected, once));

  ir::Graph graph = silu(true);
  run_pass(fuse_pointwise, graph);  // SiLU + Relu in one node already; now add a Tanh after it
  ir::Graph longer = graph;
  const ir::ValueId out = longer.outputs[0];
  const ir::ValueId t = longer.add_value({"t", DType::kFloat32, longer.value(out).shape, std::nullopt,
                                          static_cast<ir::NodeId>(longer.nodes.size())});
  longer.nodes.push_back({"tanh", OpKind::kTanh, 13, {out}, {t}, {}});
  longer.outputs[0] = t;
  const ir::Graph before = longer;
  EXPECT_EQ(run_pass(fuse_pointwise, longer).pointwise_fused, 1);
  ASSERT_EQ(longer.nodes.size(), 1u);
  EXPECT_EQ(longer.nodes[0].attrs.get_string(ir::kPointwisePatternAttr), "SiLU+Relu+Tanh");
  expect_same_outputs(before, longer);
}

// x → SiLU → (Conv, Conv) → Concat → BN → Relu → y: two fused nodes, for the report test.
ir::Graph dense_block_for_report() {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {1, 2, 3, 3});
  const ir::ValueId s = binary(b, OpKind::kMul, x, unary(b, OpKind::kSigmoid, x));
  const ir::ValueId p = b.conv(s, b.constant("w1", random_tensor({2, 2, 1, 1}, 1)), ir::kNoValue);
  const ir::ValueId q = b.conv(s, b.constant("w2", random_tensor({2, 2, 1, 1}, 2)), ir::kNoValue);
  b.output(b.relu(add_batch_norm(b, b.concat({p, q}, 1), random_batch_norm(4, 3))), "y");
  return b.finish();
}

// ---- fuse_pointwise: what stays ----

TEST(FusePointwise, LeavesWhatItMustNotFuseAlone) {
  expect_unchanged(fuse_pointwise, {
      {"a lone Relu", [] {
         GraphBuilder b;
         b.output(b.relu(b.input("x", {2, 3})), "y");
         return b.finish();
       }},
      {"a lone Add with a fused Relu", [] {
         GraphBuilder b;
         b.output(b.add(b.input("x", {2, 3}), b.input("z", {2, 3}), "Relu"), "y");
         return b.finish();
       }},
      {"a lone ReLU6", [] {
         GraphBuilder b;
         b.output(b.same_shape(OpKind::kClip, {b.input("x", {2, 3}), scalar(b, 0), scalar(b, 6)}), "y");
         return b.finish();
       }},
      {"the inner value is a graph output", [] {
         GraphBuilder b;
         const ir::ValueId x = b.input("x", {2, 3});
         const ir::ValueId s = unary(b, OpKind::kSigmoid, x);
         b.output(binary(b, OpKind::kMul, x, s), "y");
         b.output(s, "s");
         return b.finish();
       }},
      {"the inner value has two readers", [] {
         GraphBuilder b;
         const ir::ValueId s = unary(b, OpKind::kSigmoid, b.input("x", {2, 3}));
         b.output(b.relu(s), "r");
         b.output(unary(b, OpKind::kTanh, s), "t");
         return b.finish();
       }},
      {"the Add's other operand is an input of lower rank", [] {
         GraphBuilder b;
         b.output(b.relu(binary(b, OpKind::kAdd, b.input("x", {2, 3, 4}), b.input("z", {4}))), "y");
         return b.finish();
       }},
      {"a binary op on values smaller than the output (only unary ones are recomputed)", [] {
         GraphBuilder b;
         const ir::ValueId g = binary(b, OpKind::kAdd, b.input("g", {2, 3, 1, 1}), b.input("h", {2, 3, 1, 1}));
         b.output(binary(b, OpKind::kMul, b.input("x", {2, 3, 4, 4}), g), "y");
         return b.finish();
       }},
      {"Clip's bound is not a constant", [] {
         GraphBuilder b;
         const ir::ValueId clip = b.same_shape(OpKind::kClip, {b.input("x", {2, 3}), b.input("lo", {})});
         b.output(b.relu(clip), "y");
         return b.finish();
       }},
      {"a rank above the limit", [] {
         GraphBuilder b;
         const ir::ValueId x = b.input("x", Shape(ir::kMaxPointwiseRank + 1, 2));
         b.output(binary(b, OpKind::kMul, x, unary(b, OpKind::kSigmoid, x)), "y");
         return b.finish();
       }},
      {"int64 values", [] {
         GraphBuilder b;
         const ir::ValueId x = b.input("x", {2, 3}, DType::kInt64);
         b.output(b.relu(b.same_shape(OpKind::kAdd, {x, x})), "y");
         return b.finish();
       }},
  });
}

// Trees past pointwise_program.h's limits are cut into several that fit (the shape rule checks).
TEST(FusePointwise, LongChainsAndWideTreesRespectTheLimits) {
  GraphBuilder chain;
  ir::ValueId y = chain.input("x", {2, 5});
  for (int i = 0; i < 45; ++i) y = unary(chain, i % 2 ? OpKind::kTanh : OpKind::kSigmoid, y);
  chain.output(y, "y");
  GraphBuilder wide;
  ir::ValueId sum = wide.input("x0", {2, 5});
  for (int i = 1; i < 24; ++i) sum = binary(wide, OpKind::kAdd, sum, wide.input("x" + std::to_string(i), {2, 5}));
  wide.output(sum, "y");
  for (const ir::Graph& original : {chain.finish(), wide.finish()}) {
    ir::Graph graph = original;
    const PassStats stats = run_pass(fuse_pointwise, graph);
    EXPECT_GE(stats.pointwise_fused, 2);
    EXPECT_LT(graph.nodes.size(), original.nodes.size() / 4);
    for (const ir::Node* n : fused_nodes(graph)) {
      const size_t instructions = n->attrs.get_ints(ir::kPointwiseProgramAttr).size() / ir::kInstructionWidth;
      EXPECT_LE(n->inputs.size(), static_cast<size_t>(ir::kMaxPointwiseLeaves));
      EXPECT_LE(n->inputs.size() + instructions, static_cast<size_t>(ir::kMaxPointwiseRegisters));
    }
    expect_same_outputs(original, graph);
  }
}

// ---- fuse_conv_bias ----

// Conv(x, w, b) → SiLU: the Conv loses b; the fused node reads it as a [1, K, 1, 1] leaf added first.
TEST(FuseConvBias, SiluTakesTheConvBias) {
  GraphBuilder b;
  const ir::ValueId c = b.conv(b.input("x", {2, 3, 5, 5}), b.constant("w", random_tensor({4, 3, 3, 3}, 1)),
                               b.constant("b", random_tensor({4}, 2)), {.pad = 1});
  b.output(binary(b, OpKind::kMul, c, unary(b, OpKind::kSigmoid, c)), "y");
  const ir::Graph original = b.finish();
  ir::Graph graph = original;
  const PassStats stats = run_passes(graph);
  EXPECT_EQ(stats.conv_biases_moved, 1);
  ASSERT_EQ(graph.nodes.size(), 2u);
  EXPECT_EQ(graph.nodes[0].op, OpKind::kConv);
  EXPECT_EQ(graph.nodes[0].inputs.size(), 2u);
  const ir::Node& f = graph.nodes[1];
  ASSERT_EQ(f.inputs.size(), 2u);
  EXPECT_EQ(f.inputs[0], graph.nodes[0].outputs[0]);
  EXPECT_EQ(graph.value(f.inputs[1]).shape, (Shape{1, 4, 1, 1}));
  // add(leaf 0, leaf 1) → r2; sigmoid(r2) → r3; r2 · r3 → r4.
  const std::vector<int64_t> program = {static_cast<int64_t>(PointwiseOp::kAdd), 0, 1, 0,
                                        static_cast<int64_t>(PointwiseOp::kSigmoid), 2, 0, 0,
                                        static_cast<int64_t>(PointwiseOp::kMul), 2, 3, 0};
  EXPECT_EQ(f.attrs.get_ints(ir::kPointwiseProgramAttr), program);
  EXPECT_EQ(f.attrs.get_string(ir::kPointwisePatternAttr), "Bias+SiLU");
  expect_same_outputs(original, graph);
}

// The CPU's sessions keep the bias in the Conv (InferencePassOptions::gpu_fusions).
TEST(FuseConvBias, OffKeepsTheBiasInTheConv) {
  GraphBuilder b;
  const ir::ValueId c = b.conv(b.input("x", {2, 3, 5, 5}), b.constant("w", random_tensor({4, 3, 1, 1}, 1)),
                               b.constant("b", random_tensor({4}, 2)));
  b.output(binary(b, OpKind::kMul, c, unary(b, OpKind::kSigmoid, c)), "y");
  ir::Graph graph = b.finish();
  InferencePassOptions options;
  options.gpu_fusions = false;
  const PassStats stats = run_passes(graph, options);
  EXPECT_EQ(stats.conv_biases_moved, 0);
  EXPECT_EQ(graph.nodes[0].inputs.size(), 3u);
  EXPECT_EQ(fused_nodes(graph)[0]->attrs.get_string(ir::kPointwisePatternAttr), "SiLU");
}

// A 1×1 Conv of x with k filters over c channels and a bias, its constants seeded from `seed`.
ir::ValueId conv_1x1(GraphBuilder& b, ir::ValueId x, int64_t k, int64_t c, uint32_t seed) {
  const std::string n = std::to_string(seed);
  return b.conv(x, b.constant("w" + n, random_tensor({k, c, 1, 1}, seed)),
                b.constant("b" + n, random_tensor({k}, seed + 1)));
}

// Two Convs joined by Add → Sigmoid: both biases move, each added to its own leaf.
TEST(FuseConvBias, EveryConvLeafGivesItsBias) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 3, 4, 4});
  b.output(unary(b, OpKind::kSigmoid, binary(b, OpKind::kAdd, conv_1x1(b, x, 5, 3, 3), conv_1x1(b, x, 5, 3, 5))),
           "y");
  const ir::Graph original = b.finish();
  ir::Graph graph = original;
  const PassStats stats = run_passes(graph);
  EXPECT_EQ(stats.conv_biases_moved, 2);
  for (const ir::Node& n : graph.nodes) {
    if (n.op == OpKind::kConv) {
      EXPECT_EQ(n.inputs.size(), 2u) << n.name;
    }
  }
  ASSERT_EQ(fused_nodes(graph).size(), 1u);
  EXPECT_EQ(fused_nodes(graph)[0]->inputs.size(), 4u);
  expect_same_outputs(original, graph);
}

// A residual join without a Relu, Add(Conv(x) + b, x), becomes a FusedPointwise "Bias+Add" that adds
// the Conv's bias as it adds x; an Add of two other values stays an Add.
TEST(FuseConvBias, ALoneResidualAddTakesTheConvBias) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 3, 4, 4});
  b.output(binary(b, OpKind::kAdd, conv_1x1(b, x, 3, 3, 3), x), "y");
  b.output(binary(b, OpKind::kAdd, x, b.input("z", {2, 3, 4, 4})), "w");
  const ir::Graph original = b.finish();
  ir::Graph graph = original;
  const PassStats stats = run_passes(graph);
  EXPECT_EQ(stats.adds_made_pointwise, 1);
  EXPECT_EQ(stats.conv_biases_moved, 1);
  ASSERT_EQ(graph.nodes.size(), 3u);
  EXPECT_EQ(graph.nodes[0].op, OpKind::kConv);
  EXPECT_EQ(graph.nodes[0].inputs.size(), 2u);
  ASSERT_EQ(graph.nodes[1].op, OpKind::kFusedPointwise);
  EXPECT_EQ(graph.nodes[1].attrs.get_string(ir::kPointwisePatternAttr), "Bias+Add");
  EXPECT_EQ(graph.nodes[2].op, OpKind::kAdd);
  expect_same_outputs(original, graph);
}

// Two Convs with one bias constant: their fused nodes read one reshaped leaf, not a copy each.
TEST(FuseConvBias, ConvsSharingABiasShareItsLeaf) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 3, 4, 4});
  const ir::ValueId bias = b.constant("b", random_tensor({3}, 2));
  for (int i = 0; i < 2; ++i) {
    const ir::ValueId c = b.conv(x, b.constant("w" + std::to_string(i), random_tensor({3, 3, 1, 1}, 3 + i)), bias);
    b.output(binary(b, OpKind::kMul, c, unary(b, OpKind::kSigmoid, c)), "y" + std::to_string(i));
  }
  const ir::Graph original = b.finish();
  ir::Graph graph = original;
  const PassStats stats = run_passes(graph);
  EXPECT_EQ(stats.conv_biases_moved, 2);
  const std::vector<const ir::Node*> fused = fused_nodes(graph);
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_EQ(fused[0]->inputs.back(), fused[1]->inputs.back());
  expect_same_outputs(original, graph);
}

// The bias stays where the Conv's output is also read elsewhere or is a graph output, and where a
// Relu fused into the Conv (cuDNN's fused call adds it).
TEST(FuseConvBias, StaysWhereTheConvHasOtherReaders) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 3, 4, 4});
  const ir::ValueId p = conv_1x1(b, x, 3, 3, 3);
  b.output(unary(b, OpKind::kTanh, unary(b, OpKind::kSigmoid, p)), "y");
  b.output(p, "p");
  b.output(unary(b, OpKind::kTanh, unary(b, OpKind::kSigmoid, b.relu(conv_1x1(b, x, 3, 3, 5)))), "z");
  const ir::Graph original = b.finish();
  ir::Graph graph = original;
  const PassStats stats = run_passes(graph);
  EXPECT_EQ(stats.conv_biases_moved, 0);
  for (const ir::Node& n : graph.nodes) {
    if (n.op == OpKind::kConv) {
      EXPECT_EQ(n.inputs.size(), 3u) << n.name;
    }
  }
  expect_same_outputs(original, graph);
}

// ---- fuse_depthwise_activation ----

// A 3×3 depthwise Conv of x [2, 6, 7, 7] with a bias, padding 1.
ir::ValueId depthwise(GraphBuilder& b, ir::ValueId x) {
  ir::Attributes attrs;
  attrs.set("group", int64_t{6});
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const ir::ValueId w = b.constant("dw", random_tensor({6, 1, 3, 3}, 7));
  return b.node(OpKind::kConv, {x, w, b.constant("db", random_tensor({6}, 8))}, {{2, 6, 7, 7}}, std::move(attrs))[0];
}

// Depthwise Conv → SiLU, → Clip(0, 6) and → x · HardSigmoid(x): one Conv each, its epilogue applying
// the activation (the bias stays in the Conv); the same outputs on the CPU.
TEST(FuseDepthwiseActivation, SiluRelu6AndHardSwishJoinTheDepthwiseConv) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 6, 7, 7});
  const ir::ValueId c = depthwise(b, x);
  b.output(binary(b, OpKind::kMul, c, unary(b, OpKind::kSigmoid, c)), "silu");
  b.output(b.same_shape(OpKind::kClip, {depthwise(b, x), scalar(b, 0), scalar(b, 6)}), "relu6");
  const ir::ValueId h = depthwise(b, x);  // HardSwish as opset 13 exports it: x · HardSigmoid(x)
  b.output(binary(b, OpKind::kMul, h,
                  unary(b, OpKind::kHardSigmoid, h, float_attrs({{"alpha", 1.0f / 6}, {"beta", 0.5f}}))),
           "hardswish");
  const ir::Graph original = b.finish();
  ir::Graph graph = original;
  const PassStats stats = run_passes(graph);
  EXPECT_EQ(stats.activations_fused, 3);
  ASSERT_EQ(graph.nodes.size(), 3u);
  for (const ir::Node& n : graph.nodes) {
    EXPECT_EQ(n.op, OpKind::kConv);
    EXPECT_EQ(n.inputs.size(), 3u) << "the bias stays in the Conv";
  }
  EXPECT_EQ(ir::fused_activation(graph.nodes[0]), "SiLU");
  EXPECT_EQ(ir::fused_activation(graph.nodes[1]), "Clip");
  EXPECT_EQ(graph.nodes[1].attrs.get_float(ir::kFusedActivationMinAttr), 0.0f);
  EXPECT_EQ(graph.nodes[1].attrs.get_float(ir::kFusedActivationMaxAttr), 6.0f);
  EXPECT_EQ(ir::fused_activation(graph.nodes[2]), "HardSwish");
  expect_same_outputs(original, graph);
}

// A Conv that is not depthwise keeps its SiLU as a pointwise node (which takes its bias); a
// depthwise Conv read twice keeps it too; the CPU's passes fuse neither.
TEST(FuseDepthwiseActivation, OnlyADepthwiseConvReadOnceOnTheGpu) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 6, 7, 7});
  const ir::ValueId c = conv_1x1(b, x, 6, 6, 1);
  b.output(binary(b, OpKind::kMul, c, unary(b, OpKind::kSigmoid, c)), "dense");
  const ir::ValueId d = depthwise(b, x);
  b.output(unary(b, OpKind::kHardSwish, d), "hardswish");
  b.output(unary(b, OpKind::kTanh, d), "tanh");
  const ir::Graph original = b.finish();
  ir::Graph graph = original;
  const PassStats stats = run_passes(graph);
  EXPECT_EQ(stats.activations_fused, 0);
  EXPECT_EQ(stats.conv_biases_moved, 1);
  for (const ir::Node& n : graph.nodes) EXPECT_TRUE(ir::fused_activation(n).empty()) << n.name;
  expect_same_outputs(original, graph);

  GraphBuilder single;
  single.output(unary(single, OpKind::kHardSwish, depthwise(single, single.input("x", {2, 6, 7, 7}))), "y");
  ir::Graph cpu = single.finish();
  InferencePassOptions options;
  options.gpu_fusions = false;
  ASSERT_TRUE(run_inference_passes(cpu, options).has_value());
  EXPECT_EQ(cpu.nodes.size(), 2u);
  EXPECT_TRUE(ir::fused_activation(cpu.nodes[0]).empty());
}

// ---- the report ----

// build_report lists the FusedPointwise nodes with their patterns; the text counts them per pattern.
TEST(FusePointwiseReport, CountsTheFusedNodesPerPattern) {
  ir::Graph graph = dense_block_for_report();
  run_passes(graph);
  const ReportData data = build_report(PlanResult{}, graph, "dense");
  ASSERT_EQ(data.fused_pointwise.size(), 2u);
  EXPECT_EQ(data.fused_pointwise[0].pattern, "SiLU");
  EXPECT_EQ(data.fused_pointwise[1].pattern, "Concat+BN+ReLU");

  ReportData d;
  d.fused_pointwise = {{"a", "SiLU"}, {"b", "BN+ReLU"}, {"c", "SiLU"}, {"d", "SE gate+Add"}, {"e", "SiLU"},
                       {"f", "BN+ReLU"}};
  EXPECT_EQ(format_fused_pointwise(d), "6 (SiLU 3, BN+ReLU 2, SE gate+Add 1)");
  EXPECT_NE(report_text(d).find("fused pointwise    6 (SiLU 3, BN+ReLU 2, SE gate+Add 1)"), std::string::npos);
  const nlohmann::json j = report_json(d);
  ASSERT_EQ(j["fused_pointwise"].size(), 6u);
  EXPECT_EQ(j["fused_pointwise"][3]["node"], "d");
  EXPECT_EQ(j["fused_pointwise"][3]["pattern"], "SE gate+Add");
  EXPECT_NE(report_html(d).find("<td>SE gate+Add</td>"), std::string::npos);
  EXPECT_EQ(format_fused_pointwise(ReportData{}), "none");
}

// ---- channels-last ----

// Conv → (Conv, Conv) → Concat → BN → Relu → Conv: after the inference passes and the channels-last
// pass, the fused node runs NHWC (layout-free, as Add is: no channels_last attribute): its pieces are
// the Convs' NHWC outputs, its concat axis 3, its scale and shift [1, 1, 1, C]; no Transpose between
// the Convs.
ir::Graph dense_block() {
  GraphBuilder b;
  const ir::ValueId x = b.conv(b.input("x", {2, 3, 6, 6}), b.constant("w0", random_tensor({4, 3, 3, 3}, 1)),
                               b.constant("b0", random_tensor({4}, 2)), {.pad = 1});
  const ir::ValueId p = b.conv(x, b.constant("w1", random_tensor({2, 4, 1, 1}, 3)), ir::kNoValue);
  const ir::ValueId q = b.conv(x, b.constant("w2", random_tensor({3, 4, 3, 3}, 4)), ir::kNoValue, {.pad = 1});
  const ir::ValueId r = b.relu(add_batch_norm(b, b.concat({p, q}, 1), random_batch_norm(5, 50)));
  b.output(b.conv(r, b.constant("w3", random_tensor({4, 5, 1, 1}, 5)), ir::kNoValue), "y");
  return b.finish();
}

TEST(FusePointwise, FusedConcatRunsChannelsLast) {
  ir::Graph graph = dense_block();
  run_passes(graph);
  const PassStats stats = run_pass(convert_to_channels_last, graph);
  EXPECT_EQ(stats.layout_transposes, 2);  // the graph's input and output only
  ASSERT_EQ(fused_nodes(graph).size(), 1u);
  const ir::Node& f = *fused_nodes(graph)[0];
  EXPECT_EQ(f.attrs.get_int(ir::kPointwiseConcatAxisAttr), 3);
  ASSERT_EQ(f.inputs.size(), 4u);
  EXPECT_EQ(graph.value(f.inputs[0]).shape, (Shape{2, 6, 6, 2}));
  EXPECT_EQ(graph.value(f.inputs[1]).shape, (Shape{2, 6, 6, 3}));
  EXPECT_EQ(graph.value(f.inputs[2]).shape, (Shape{1, 1, 1, 5}));
  EXPECT_EQ(graph.value(f.outputs[0]).shape, (Shape{2, 6, 6, 5}));
}

// On the GPU: the fused graphs, NCHW and channels-last, against the unfused graph on the CPU.
TEST(FusePointwise, FusedGraphsOnTheGpuMatchTheCpuInBothLayouts) {
  const ucudnn_test::BackendConfig* config = nullptr;
  for (const ucudnn_test::BackendConfig& c : ucudnn_test::backend_configs())
    if (c.name == "cuda_fp32") config = &c;
  if (!config) GTEST_SKIP() << "a build without the CUDA backend";
  const ucudnn_test::SharedBackend gpu = ucudnn_test::shared_backend(*config);
  if (!gpu.backend) GTEST_SKIP() << (gpu.skip_reason.empty() ? gpu.error.to_string() : gpu.skip_reason);
  GraphBuilder se;
  const ir::ValueId x = se.input("x", {2, 4, 5, 5});
  const ir::ValueId s = binary(se, OpKind::kMul, x, unary(se, OpKind::kSigmoid, x));
  const ir::ValueId g = unary(se, OpKind::kHardSigmoid, se.global_average_pool(s),
                              float_attrs({{"alpha", 1.0f / 6}, {"beta", 0.5f}}));
  se.output(unary(se, OpKind::kErf, binary(se, OpKind::kMul, s, g)), "y");
  GraphBuilder silu;  // Conv → SiLU: the Conv's bias moves into the fused node (fuse_conv_bias)
  const ir::ValueId c = silu.conv(silu.input("x", {2, 3, 5, 5}), silu.constant("w", random_tensor({8, 3, 3, 3}, 1)),
                                  silu.constant("b", random_tensor({8}, 2)), {.pad = 1});
  silu.output(binary(silu, OpKind::kMul, c, unary(silu, OpKind::kSigmoid, c)), "y");
  GraphBuilder dw;  // depthwise Conv → SiLU: one Conv (fuse_depthwise_activation)
  const ir::ValueId d = depthwise(dw, dw.input("x", {2, 6, 7, 7}));
  dw.output(binary(dw, OpKind::kMul, d, unary(dw, OpKind::kSigmoid, d)), "y");
  GraphBuilder residual;  // Add(Conv(x) + b, x): a FusedPointwise "Bias+Add" (fuse_conv_bias)
  const ir::ValueId r = residual.input("x", {2, 4, 5, 5});
  residual.output(binary(residual, OpKind::kAdd, conv_1x1(residual, r, 4, 4, 7), r), "y");
  for (const ir::Graph& original : {dense_block(), se.finish(), silu.finish(), dw.finish(), residual.finish()}) {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < original.inputs.size(); ++i)
      inputs.push_back(random_tensor(original.value(original.inputs[i]).shape, static_cast<uint32_t>(60 + i)));
    auto expected = run_on_cpu(original, inputs);
    ASSERT_TRUE(expected.has_value()) << expected.status().to_string();
    for (bool nhwc : {false, true}) {
      SCOPED_TRACE(nhwc ? "nhwc" : "nchw");
      ir::Graph graph = original;
      const PassStats stats = run_passes(graph);
      EXPECT_GT(stats.pointwise_fused + stats.activations_fused + stats.adds_made_pointwise, 0) << "nothing fused";
      if (nhwc) run_pass(convert_to_channels_last, graph);
      auto actual = ucudnn_test::run_on_backend(*gpu.backend, graph, inputs);
      ASSERT_TRUE(actual.has_value()) << actual.status().to_string();
      ASSERT_EQ(actual->size(), expected->size());
      for (size_t o = 0; o < expected->size(); ++o)
        for (int64_t i = 0; i < (*expected)[o].numel(); ++i)
          ASSERT_NEAR((*actual)[o].data<float>()[i], (*expected)[o].data<float>()[i],
                      1e-4 * (1 + std::abs((*expected)[o].data<float>()[i])))
              << "output " << o << " element " << i;
    }
  }
}

}  // namespace
}  // namespace ucudnn::optimizer
