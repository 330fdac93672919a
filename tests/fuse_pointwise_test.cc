// Tests of decompose_batch_norm and fuse_pointwise (optimizer/passes/passes.h; Note [pointwise
// programs], runtime/ir/pointwise_program.h) in the style of passes_test.cc: each input graph's
// rewrite is compared with a graph written by hand — which nodes fuse, the program, leaves and
// their order, the concat leaf, the pattern name — and both graphs run on the CPU with the same
// outputs. Then what must stay unfused, the limits, the report and the channels-last rewrite of a
// fused node. The GPU's conv fusions: tests/gpu_fusion_passes_test.cc.
#include <cmath>

#include "optimizer/report.h"
#include "runtime/ir/pointwise_program.h"
#include "tests/support/fusion_graphs.h"
#include "tests/support/pass_test_helpers.h"

namespace ucudnn::optimizer {
namespace {

using ir::PointwiseOp;
using ucudnn_test::GraphBuilder;
using ucudnn_test::random_tensor;
using ucudnn_test::same_graph;

// ---- building graphs ----

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

// A chain far longer than a program's registers (issue 44: a 20,000-Relu model crashed the process with a
// recursion as deep as the chain): trees stop at the register count, so the chain becomes a run of
// programs of at most kMaxPointwiseRegisters - 1 instructions each (one register is the leaf), in order.
TEST(FusePointwise, ALongChainBecomesProgramsOfBoundedSize) {
  constexpr int kChain = 20000;
  GraphBuilder in;
  ir::ValueId v = in.input("x", {1, 4});
  for (int i = 0; i < kChain; ++i) v = in.relu(v);
  in.output(v, "y");
  ir::Graph graph = in.finish();
  const PassStats stats = run_pass(fuse_pointwise, graph);
  EXPECT_EQ(stats.pointwise_nodes_replaced, kChain);
  const int per_program = ucudnn::ir::kMaxPointwiseRegisters - 1;
  EXPECT_EQ(stats.pointwise_fused, (kChain + per_program - 1) / per_program);
  EXPECT_EQ(graph.nodes.size(), static_cast<size_t>(stats.pointwise_fused));
  for (const ir::Node& node : graph.nodes) EXPECT_EQ(node.op, OpKind::kFusedPointwise);
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

}  // namespace
}  // namespace ucudnn::optimizer
