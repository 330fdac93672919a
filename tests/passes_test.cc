// Tests of the inference passes (optimizer/passes/passes.h) in TVM's style:
// build an input graph, run the pass, build by hand the graph the pass must
// make, and compare the two structurally (tests/support/graph_compare.h); where
// a pass changes the numbers (BN folding, fusions) also run both graphs on the
// CPU and compare their outputs. Each pass also gets the patterns it must leave
// alone. Whole pipelines and convert_to_channels_last: passes_pipeline_test.cc.
#include <optional>
#include <utility>
#include <vector>

#include "tests/support/pass_test_helpers.h"

namespace ucudnn::optimizer {
namespace {

using ucudnn_test::GraphBuilder;
using ucudnn_test::random_tensor;
using ucudnn_test::same_graph;

// ---- remove_identities ----

// Pad(x, pads) of a 4-D x; `pads` has 8 values (the begin of each axis, then the end).
ir::ValueId pad(GraphBuilder& b, ir::ValueId x, const std::vector<int64_t>& pads) {
  Shape out = b.shape(x);
  for (size_t d = 0; d < out.size(); ++d) out[d] += pads[d] + pads[d + out.size()];
  ir::Attributes attrs;
  attrs.set("mode", std::string("constant"));
  return b.node(OpKind::kPad, {x, b.constant("pads", Tensor::from_int64s({8}, pads))}, {out}, std::move(attrs))[0];
}

TEST(RemoveIdentities, ReadersReadTheInputDirectly) {
  auto build = [](bool rewritten) {
    GraphBuilder b;
    ir::ValueId x = b.input("x", {1, 2, 4, 4});
    const ir::ValueId w = b.constant("w", random_tensor({3, 2, 1, 1}, 1));
    const ir::ValueId bias = b.constant("b", random_tensor({3}, 2));
    if (!rewritten) x = b.identity(x);
    ir::ValueId c = b.conv(x, w, bias);
    if (!rewritten) c = b.dropout(c, /*mask=*/false)[0];
    if (!rewritten) c = pad(b, c, {0, 0, 0, 0, 0, 0, 0, 0});
    b.output(b.relu(c), "y");
    return b.finish();
  };
  ir::Graph graph = build(false);
  const PassStats stats = run_pass(remove_identities, graph);
  EXPECT_TRUE(same_graph(build(true), graph));
  EXPECT_EQ(stats.identities_removed, 3);
}

TEST(RemoveIdentities, KeepsGraphOutputsAndUsedMasks) {
  expect_unchanged(remove_identities, {
      {"an Identity whose output is a graph output",
       [] {
         GraphBuilder b;
         const ir::ValueId i = b.identity(b.input("x", {2, 3}));
         b.output(b.relu(i), "r");
         b.output(i, "i");
         return b.finish();
       }},
      {"a Dropout whose mask is used",
       [] {
         GraphBuilder b;
         const auto outputs = b.dropout(b.input("x", {2, 3}), /*mask=*/true);
         b.output(b.relu(outputs[0]), "r");
         b.output(outputs[1], "mask");
         return b.finish();
       }},
      {"a Pad that pads",
       [] {
         GraphBuilder b;
         b.output(b.relu(pad(b, b.input("x", {1, 3, 4, 4}), {0, 0, 1, 0, 0, 0, 0, 2})), "y");
         return b.finish();
       }},
  });
}

// ---- global_pool_from_reduce_mean ----

// x → ReduceMean(axes) with keepdims `keepdims` (unset: ONNX's default, 1) → Relu → y.
ir::Graph spatial_mean(const Shape& x_shape, std::vector<int64_t> axes, std::optional<int64_t> keepdims,
                       bool constant_axes = true) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", x_shape);
  const ir::ValueId a = constant_axes
                            ? b.constant("axes", Tensor::from_int64s({static_cast<int64_t>(axes.size())}, axes))
                            : b.input("axes", {static_cast<int64_t>(axes.size())}, DType::kInt64);
  Shape y_shape = x_shape;
  for (int64_t& axis : axes) {
    if (axis < 0) axis += static_cast<int64_t>(x_shape.size());
    y_shape[static_cast<size_t>(axis)] = 1;
  }
  if (keepdims == 0)
    for (auto axis = axes.rbegin(); axis != axes.rend(); ++axis) y_shape.erase(y_shape.begin() + *axis);
  ir::Attributes attrs;
  if (keepdims) attrs.set("keepdims", *keepdims);
  b.output(b.relu(b.node(OpKind::kReduceMean, {x, a}, {y_shape}, std::move(attrs))[0]), "y");
  return b.finish();
}

TEST(GlobalPoolFromReduceMean, AMeanOverHAndWBecomesTheGlobalPool) {
  for (const auto& [axes, keepdims] : std::vector<std::pair<std::vector<int64_t>, std::optional<int64_t>>>{
           {{2, 3}, 1}, {{-1, -2}, std::nullopt}, {{3, 2}, 1}}) {
    SCOPED_TRACE("axes " + ucudnn::shape_to_string(axes));
    const ir::Graph original = spatial_mean({2, 3, 5, 4}, axes, keepdims);
    ir::Graph graph = original;
    const PassStats stats = run_pass(global_pool_from_reduce_mean, graph);
    EXPECT_EQ(stats.reduce_means_made_global_pools, 1);
    GraphBuilder expected;
    expected.output(expected.relu(expected.global_average_pool(expected.input("x", {2, 3, 5, 4}))), "y");
    EXPECT_TRUE(same_graph(expected.finish(), graph));
    expect_same_outputs(original, graph);
  }
}

// Without keepdims the mean is [N, C]: the pool, then Flatten.
TEST(GlobalPoolFromReduceMean, AMeanWithoutKeepdimsBecomesThePoolAndFlatten) {
  const ir::Graph original = spatial_mean({2, 3, 5, 4}, {2, 3}, 0);
  ir::Graph graph = original;
  const PassStats stats = run_pass(global_pool_from_reduce_mean, graph);
  EXPECT_EQ(stats.reduce_means_made_global_pools, 1);
  GraphBuilder expected;
  expected.output(expected.relu(expected.flatten(expected.global_average_pool(expected.input("x", {2, 3, 5, 4})))),
                  "y");
  EXPECT_TRUE(same_graph(expected.finish(), graph));
  expect_same_outputs(original, graph);
}

TEST(GlobalPoolFromReduceMean, LeavesOtherMeansAlone) {
  expect_unchanged(global_pool_from_reduce_mean, {
      {"a mean over C and H", [] { return spatial_mean({2, 3, 5, 4}, {1, 2}, 1); }},
      {"a mean over W alone", [] { return spatial_mean({2, 3, 5, 4}, {3}, 1); }},
      {"a mean over an empty H", [] { return spatial_mean({2, 3, 0, 4}, {2, 3}, 1); }},
      {"a mean over H, W and D of a 5-D X", [] { return spatial_mean({2, 3, 5, 4, 2}, {2, 3, 4}, 1); }},
      {"a 3-D X", [] { return spatial_mean({2, 3, 5}, {1, 2}, 1); }},
      {"axes that are a graph input", [] { return spatial_mean({2, 3, 5, 4}, {2, 3}, 1, false); }},
  });
}

// ---- matmul_to_gemm ----

// x [x_shape] → MatMul(x, W [K, N] constant unless `runtime_w`) → Add(bias of `bias_shape`, on the
// `bias_left` side; none when empty) → Relu → y; with `product_is_output` the MatMul's output is a
// graph output too.
struct LinearGraph {
  Shape x_shape = {2, 3, 4, 5};
  int64_t n = 6;
  Shape bias_shape = {6};
  bool bias_left = false;
  bool runtime_w = false;
  bool product_is_output = false;
};

ir::Graph linear(const LinearGraph& g) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", g.x_shape);
  const Shape w_shape = {g.x_shape.back(), g.n};
  const ir::ValueId w = g.runtime_w ? b.input("w", w_shape) : b.constant("w", random_tensor(w_shape, 7));
  Shape y_shape = g.x_shape;
  y_shape.back() = g.n;
  ir::ValueId y = b.node(OpKind::kMatMul, {x, w}, {y_shape})[0];
  const ir::ValueId product = y;
  if (!g.bias_shape.empty()) {
    const ir::ValueId bias = b.constant("bias", random_tensor(g.bias_shape, 8));
    y = b.node(OpKind::kAdd, {g.bias_left ? bias : y, g.bias_left ? y : bias}, {y_shape})[0];
  }
  b.output(b.relu(y), "y");
  if (g.product_is_output) b.output(product, "product");
  return b.finish();
}

std::vector<OpKind> ops_of(const ir::Graph& graph) {
  std::vector<OpKind> ops;
  for (const ir::Node& node : graph.nodes) ops.push_back(node.op);
  return ops;
}

TEST(MatmulToGemm, ALinearLayerBecomesAGemmWithItsBias) {
  for (const LinearGraph& g : {LinearGraph{}, LinearGraph{.bias_shape = {1, 1, 1, 6}, .bias_left = true},
                               LinearGraph{.x_shape = {7, 5}, .bias_shape = {1, 6}}}) {
    SCOPED_TRACE("x " + shape_to_string(g.x_shape) + ", bias " + shape_to_string(g.bias_shape));
    const ir::Graph original = linear(g);
    ir::Graph graph = original;
    const PassStats stats = run_pass(matmul_to_gemm, graph);
    EXPECT_EQ(stats.matmuls_made_gemms, 1);
    EXPECT_EQ(stats.biases_folded_into_gemms, 1);
    const std::vector<OpKind> want = g.x_shape.size() > 2
                                         ? std::vector<OpKind>{OpKind::kReshape, OpKind::kGemm, OpKind::kReshape,
                                                               OpKind::kRelu}
                                         : std::vector<OpKind>{OpKind::kGemm, OpKind::kRelu};
    EXPECT_EQ(ops_of(graph), want);
    for (const ir::Node& node : graph.nodes) {
      if (node.op == OpKind::kGemm) {
        EXPECT_EQ(node.inputs.size(), 3u);  // the bias is C
        // Every attribute set, as the importer sets them (the CUDA kernel reads them without asking).
        for (const char* name : {"alpha", "beta", "transA", "transB"}) EXPECT_TRUE(node.attrs.has(name)) << name;
      }
    }
    expect_same_outputs(original, graph);
  }
}

TEST(MatmulToGemm, KeepsTheAddWhenTheProductIsReadElsewhere) {
  const ir::Graph original = linear({.product_is_output = true});
  ir::Graph graph = original;
  const PassStats stats = run_pass(matmul_to_gemm, graph);
  EXPECT_EQ(stats.matmuls_made_gemms, 1);
  EXPECT_EQ(stats.biases_folded_into_gemms, 0);
  EXPECT_EQ(ops_of(graph), (std::vector<OpKind>{OpKind::kReshape, OpKind::kGemm, OpKind::kReshape, OpKind::kAdd,
                                                 OpKind::kRelu}));
  expect_same_outputs(original, graph);
}

// An InstanceNormalization's Scale [C] reshaped to [C, 1, 1] after the importer's folding (Note [lowered
// ops]): the Reshape goes, its output becomes a constant, and fuse_pointwise can then take the Mul.
ir::Graph scaled_by_reshaped_constant(bool runtime_scale, bool reshape_is_output) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 3, 4, 4});
  const ir::ValueId scale = runtime_scale ? b.input("scale", {3}) : b.constant("scale", random_tensor({3}, 3));
  const ir::ValueId shape = b.constant("shape", Tensor::from_int64s({3}, std::vector<int64_t>{3, 1, 1}));
  const ir::ValueId reshaped = b.node(OpKind::kReshape, {scale, shape}, {{3, 1, 1}})[0];
  b.output(b.node(OpKind::kMul, {x, reshaped}, {{2, 3, 4, 4}})[0], "y");
  if (reshape_is_output) b.output(reshaped, "reshaped");
  return b.finish();
}

TEST(FoldConstantReshapes, AReshapedConstantBecomesAConstant) {
  const ir::Graph original = scaled_by_reshaped_constant(false, false);
  ir::Graph graph = original;
  const PassStats stats = run_pass(fold_constant_reshapes, graph);
  EXPECT_EQ(stats.constant_reshapes_folded, 1);
  ASSERT_EQ(ops_of(graph), std::vector<OpKind>{OpKind::kMul});
  const ir::Value& folded = graph.value(graph.nodes[0].inputs[1]);
  ASSERT_TRUE(folded.constant.has_value());
  EXPECT_EQ(folded.constant->shape(), (Shape{3, 1, 1}));
  EXPECT_EQ(folded.producer, -1);
  expect_same_outputs(original, graph);
}

TEST(FoldConstantReshapes, LeavesOtherReshapesAlone) {
  expect_unchanged(fold_constant_reshapes, {
      {"its input computed at run time", [] { return scaled_by_reshaped_constant(true, false); }},
      {"its output a graph output", [] { return scaled_by_reshaped_constant(false, true); }},
  });
}

TEST(MatmulToGemm, LeavesOtherMatMulsAlone) {
  expect_unchanged(matmul_to_gemm, {
      {"a weight computed at run time", [] { return linear({.runtime_w = true}); }},
      {"an empty product (K = 0)", [] { return linear({.x_shape = {2, 3, 0}, .bias_shape = {}}); }},
      {"no rows", [] { return linear({.x_shape = {0, 3, 5}}); }},
  });
}

// ---- channel_shuffle_to_gather ----

// x [2, 6, 3, 3] → Reshape [2, groups, 6 / groups, 3, 3] → Transpose(perm) → Reshape `back` → Relu → y;
// with `grouped_is_output` the first Reshape's output is a graph output too.
ir::Graph channel_shuffle(int64_t groups, const std::vector<int64_t>& perm, const Shape& back,
                          bool grouped_is_output = false) {
  GraphBuilder b;
  auto reshape = [&](ir::ValueId v, const Shape& to) {
    const ir::ValueId shape = b.constant("shape", Tensor::from_int64s({static_cast<int64_t>(to.size())}, to));
    ir::Attributes attrs;
    attrs.set("allowzero", int64_t{0});
    return b.node(OpKind::kReshape, {v, shape}, {to}, std::move(attrs))[0];
  };
  const ir::ValueId grouped = reshape(b.input("x", {2, 6, 3, 3}), {2, groups, 6 / groups, 3, 3});
  b.output(b.relu(reshape(b.transpose(grouped, perm), back)), "y");
  if (grouped_is_output) b.output(grouped, "g");
  return b.finish();
}

TEST(ChannelShuffleToGather, TheShuffleBecomesAGatherOfTheChannels) {
  for (const int64_t groups : {2, 3}) {
    SCOPED_TRACE("groups " + std::to_string(groups));
    const ir::Graph original = channel_shuffle(groups, {0, 2, 1, 3, 4}, {2, 6, 3, 3});
    ir::Graph graph = original;
    const PassStats stats = run_pass(channel_shuffle_to_gather, graph);
    EXPECT_EQ(stats.channel_shuffles_made_gathers, 1);
    // Output channel j is input channel (j mod g)·(6/g) + j div g.
    const std::vector<int64_t> indices = groups == 2 ? std::vector<int64_t>{0, 3, 1, 4, 2, 5}
                                                     : std::vector<int64_t>{0, 2, 4, 1, 3, 5};
    GraphBuilder expected;
    ir::Attributes axis;
    axis.set("axis", int64_t{1});
    const ir::ValueId x = expected.input("x", {2, 6, 3, 3});
    const ir::ValueId gathered = expected.node(
        OpKind::kGather, {x, expected.constant("indices", Tensor::from_int64s({6}, indices))}, {{2, 6, 3, 3}},
        std::move(axis))[0];
    expected.output(expected.relu(gathered), "y");
    EXPECT_TRUE(same_graph(expected.finish(), graph));
    expect_same_outputs(original, graph);
  }
}

TEST(ChannelShuffleToGather, LeavesOtherReshapesAlone) {
  expect_unchanged(channel_shuffle_to_gather, {
      {"a Transpose that moves H", [] { return channel_shuffle(2, {0, 2, 3, 1, 4}, {2, 6, 3, 3}); }},
      {"a Reshape back to another shape", [] { return channel_shuffle(2, {0, 2, 1, 3, 4}, {2, 3, 6, 3}); }},
      {"a grouped value that is a graph output",
       [] { return channel_shuffle(2, {0, 2, 1, 3, 4}, {2, 6, 3, 3}, /*grouped_is_output=*/true); }},
  });
}

// ---- fold_pad_into_conv ----

// x [1, 3, 7, 6] → Pad(pads, value) → Conv 3x3 (stride 2, padding conv_pad) → y; with `relu_reads_pad`
// a Relu reads the padded value too (a second output), with `second_conv` a second Conv reads it (an
// output of its own).
ir::Graph pad_conv(const std::vector<int64_t>& pads, int64_t conv_pad, bool relu_reads_pad = false,
                   float value = 0.0f, bool second_conv = false) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {1, 3, 7, 6});
  Shape out = b.shape(x);
  for (size_t d = 0; d < 4; ++d) out[d] += pads[d] + pads[d + 4];
  ir::Attributes attrs;
  attrs.set("mode", std::string("constant"));
  const float values[] = {value};
  const ir::ValueId padded = b.node(OpKind::kPad,
                                    {x, b.constant("pads", Tensor::from_int64s({8}, pads)),
                                     b.constant("value", Tensor::from_floats({}, values))},
                                    {out}, std::move(attrs))[0];
  b.output(b.conv(padded, b.constant("w", random_tensor({4, out[1], 3, 3}, 1)), ir::kNoValue,
                  {.stride = 2, .pad = conv_pad}),
           "y");
  if (relu_reads_pad) b.output(b.relu(padded), "r");
  if (second_conv) b.output(b.conv(padded, b.constant("w2", random_tensor({2, out[1], 3, 3}, 2)), ir::kNoValue), "y2");
  return b.finish();
}

// Folds with `pass` and returns every Conv's pads; fails the test if the Pad is left or the outputs change.
std::vector<std::vector<int64_t>> conv_pads_after(Pass pass, const ir::Graph& original) {
  ir::Graph graph = original;
  const PassStats stats = run_pass(pass, graph);
  EXPECT_EQ(stats.pads_folded, 1);
  std::vector<std::vector<int64_t>> pads;
  for (const ir::Node& node : graph.nodes) {
    EXPECT_EQ(node.op, OpKind::kConv) << "the Pad is left";
    EXPECT_EQ(node.inputs[0], graph.inputs[0]) << "the Conv does not read x";
    pads.push_back(node.attrs.get_ints("pads"));  // top, left, bottom, right
  }
  expect_same_outputs(original, graph);
  return pads;
}

TEST(FoldPadIntoConv, ThePadBecomesTheConvsPadding) {
  using Pads = std::vector<std::vector<int64_t>>;
  // The CPU's pass takes unequal ends; the GPU's where they come out equal.
  EXPECT_EQ(conv_pads_after(fold_any_pad_into_conv, pad_conv({0, 0, 1, 2, 0, 0, 0, 1}, 1)), (Pads{{2, 3, 1, 2}}));
  EXPECT_EQ(conv_pads_after(fold_pad_into_conv, pad_conv({0, 0, 1, 2, 0, 0, 1, 2}, 1)), (Pads{{2, 3, 2, 3}}));
  EXPECT_EQ(conv_pads_after(fold_pad_into_conv, pad_conv({0, 0, 1, 1, 0, 0, 1, 1}, 0, false, 0.0f, true)),
            (Pads{{1, 1, 1, 1}, {1, 1, 1, 1}}));
}

TEST(FoldPadIntoConv, LeavesOtherPadsAlone) {
  for (Pass pass : {fold_pad_into_conv, fold_any_pad_into_conv})
    expect_unchanged(pass, {
        {"a pad on the channels", [] { return pad_conv({0, 1, 0, 0, 0, 0, 0, 0}, 1); }},
        {"a negative pad", [] { return pad_conv({0, 0, 0, 0, 0, 0, -1, 0}, 1); }},
        {"a Relu reads the padded value too", [] { return pad_conv({0, 0, 1, 1, 0, 0, 1, 1}, 0, true); }},
        {"a padding value that is not 0", [] { return pad_conv({0, 0, 1, 1, 0, 0, 1, 1}, 0, false, 1.0f); }},
    });
  expect_unchanged(fold_pad_into_conv, {
      {"unequal ends on the GPU (cuDNN takes one pad per axis)",
       [] { return pad_conv({0, 0, 0, 0, 0, 0, 1, 1}, 0); }},
  });
}

// ---- fold_batch_norm ----

// x → Conv(w1, b1) → BN → Conv(w2) → BN → y: both BNs fold, the bias-less Conv gains a bias.
TEST(FoldBatchNorm, ConvsWithAndWithoutBiasTakeRescaledConstants) {
  const Tensor w1 = random_tensor({4, 3, 3, 3}, 1), b1 = random_tensor({4}, 2), w2 = random_tensor({5, 4, 1, 1}, 3);
  const BatchNormParameters bn1 = random_batch_norm(4, 10), bn2 = random_batch_norm(5, 20);
  GraphBuilder in;
  ir::ValueId y = in.conv(in.input("x", {2, 3, 6, 6}), in.constant("w1", w1), in.constant("b1", b1), {.pad = 1});
  y = add_batch_norm(in, y, bn1);
  y = add_batch_norm(in, in.conv(y, in.constant("w2", w2), ir::kNoValue), bn2);
  in.output(y, "y");
  const ir::Graph original = in.finish();

  ir::Graph graph = original;
  const PassStats stats = run_pass(fold_batch_norm, graph);
  EXPECT_EQ(stats.batch_norms_folded, 2);

  const ConvConstants f1 = fold_reference(w1, &b1, bn1), f2 = fold_reference(w2, nullptr, bn2);
  GraphBuilder expected;
  y = expected.conv(expected.input("x", {2, 3, 6, 6}), expected.constant("w1'", f1.weight),
                    expected.constant("b1'", f1.bias), {.pad = 1});
  y = expected.conv(y, expected.constant("w2'", f2.weight), expected.constant("b2'", f2.bias));
  expected.output(y, "y");
  EXPECT_TRUE(same_graph(expected.finish(), graph));
  expect_same_outputs(original, graph);
}

// Two Convs read one weight; only the first is followed by a BN: the second keeps the original.
TEST(FoldBatchNorm, LeavesASharedInitializerAlone) {
  const Tensor w = random_tensor({4, 2, 3, 3}, 1), bias = random_tensor({4}, 2);
  const BatchNormParameters bn = random_batch_norm(4, 10);
  GraphBuilder in;
  const ir::ValueId x = in.input("x", {1, 2, 5, 5});
  const ir::ValueId w_id = in.constant("w", w), b_id = in.constant("b", bias);
  in.output(add_batch_norm(in, in.conv(x, w_id, b_id), bn), "y1");
  in.output(in.conv(x, w_id, b_id), "y2");
  const ir::Graph original = in.finish();

  ir::Graph graph = original;
  run_pass(fold_batch_norm, graph);

  const ConvConstants folded = fold_reference(w, &bias, bn);
  GraphBuilder expected;
  const ir::ValueId ex = expected.input("x", {1, 2, 5, 5});
  expected.output(expected.conv(ex, expected.constant("w'", folded.weight), expected.constant("b'", folded.bias)), "y1");
  expected.output(expected.conv(ex, expected.constant("w", w), expected.constant("b", bias)), "y2");
  EXPECT_TRUE(same_graph(expected.finish(), graph));
  expect_same_outputs(original, graph);
}

// x → Conv(w, b) → BN, with one thing changed each time that forbids the fold.
ir::Graph conv_batch_norm(bool conv_output_read_twice, bool conv_output_is_output, const std::string& activation,
                          bool mean_is_input, bool weight_is_input) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {1, 2, 4, 4});
  const ir::ValueId w = weight_is_input ? b.input("w", {3, 2, 1, 1}) : b.constant("w", random_tensor({3, 2, 1, 1}, 1));
  const ir::ValueId mean = mean_is_input ? b.input("mean", {3}) : b.constant("mean", random_tensor({3}, 2));
  const ir::ValueId c = b.conv(x, w, b.constant("b", random_tensor({3}, 3)), {.activation = activation});
  const BatchNormParameters p = random_batch_norm(3, 4);
  b.output(b.batch_norm(c, b.constant("scale", p.scale), b.constant("shift", p.bias), mean,
                        b.constant("var", p.variance), p.epsilon), "y");
  if (conv_output_read_twice) b.output(b.relu(c), "r");
  if (conv_output_is_output) b.output(c, "c");
  return b.finish();
}

TEST(FoldBatchNorm, DoesNotFoldWhenItMustNot) {
  // The same builder with nothing forbidding it folds (so each case below differs in one condition).
  ir::Graph foldable = conv_batch_norm(false, false, "", false, false);
  EXPECT_EQ(run_pass(fold_batch_norm, foldable).batch_norms_folded, 1);
  expect_unchanged(fold_batch_norm, {
      {"the Conv's output has a second reader", [] { return conv_batch_norm(true, false, "", false, false); }},
      {"the Conv's output is a graph output", [] { return conv_batch_norm(false, true, "", false, false); }},
      {"the Conv already has a fused Relu", [] { return conv_batch_norm(false, false, "Relu", false, false); }},
      {"the mean is not a constant", [] { return conv_batch_norm(false, false, "", true, false); }},
      {"the weight is not a constant", [] { return conv_batch_norm(false, false, "", false, true); }},
      {"the BatchNormalization does not read a Conv",
       [] {
         GraphBuilder b;
         const BatchNormParameters p = random_batch_norm(3, 4);
         b.output(add_batch_norm(b, b.relu(b.input("x", {1, 3, 2, 2})), p), "y");
         return b.finish();
       }},
  });
}

// ---- fuse_conv_activation ----

TEST(FuseConvActivation, ConvsTakeTheirRelus) {
  const Tensor w1 = random_tensor({4, 3, 3, 3}, 1), b1 = random_tensor({4}, 2), w2 = random_tensor({2, 4, 1, 1}, 3);
  auto build = [&](bool fused) {
    GraphBuilder b;
    const std::string activation = fused ? "Relu" : "";
    ir::ValueId y = b.conv(b.input("x", {2, 3, 5, 5}), b.constant("w1", w1), b.constant("b1", b1),
                           {.pad = 1, .activation = activation});
    if (!fused) y = b.relu(y);
    y = b.conv(y, b.constant("w2", w2), ir::kNoValue, {.activation = activation});
    if (!fused) y = b.relu(y);
    b.output(y, "y");
    return b.finish();
  };
  const ir::Graph original = build(false);
  ir::Graph graph = original;
  EXPECT_EQ(run_pass(fuse_conv_activation, graph).activations_fused, 2);
  EXPECT_TRUE(same_graph(build(true), graph));
  expect_same_outputs(original, graph);
}

// x → Conv → Relu → y, with one thing changed each time that forbids the fusion.
ir::Graph conv_relu(bool conv_output_read_twice, bool conv_output_is_output, bool conv_already_fused) {
  GraphBuilder b;
  const ir::ValueId c = b.conv(b.input("x", {1, 2, 3, 3}), b.constant("w", random_tensor({2, 2, 1, 1}, 1)),
                               ir::kNoValue, {.activation = conv_already_fused ? "Relu" : ""});
  const ir::ValueId r = b.relu(c);
  b.output(conv_output_read_twice ? b.add(r, c) : r, "y");
  if (conv_output_is_output) b.output(c, "c");
  return b.finish();
}

TEST(FuseConvActivation, DoesNotFuseWhenItMustNot) {
  ir::Graph fusable = conv_relu(false, false, false);
  EXPECT_EQ(run_pass(fuse_conv_activation, fusable).activations_fused, 1);
  expect_unchanged(fuse_conv_activation, {
      {"the Conv's output has a second reader", [] { return conv_relu(true, false, false); }},
      {"the Conv's output is a graph output", [] { return conv_relu(false, true, false); }},
      {"the Conv already has a fused Relu", [] { return conv_relu(false, false, true); }},
      {"the Relu reads an Add, not a Conv",
       [] {
         GraphBuilder b;
         const ir::ValueId x = b.input("x", {2, 3});
         b.output(b.relu(b.add(x, x)), "y");
         return b.finish();
       }},
  });
}

// ---- fuse_add_activation ----

TEST(FuseAddActivation, AddTakesTheRelu) {
  auto build = [](bool fused) {
    GraphBuilder b;
    const ir::ValueId sum = b.add(b.input("a", {2, 3, 4}), b.input("b", {2, 3, 4}), fused ? "Relu" : "");
    b.output(fused ? sum : b.relu(sum), "y");
    return b.finish();
  };
  const ir::Graph original = build(false);
  ir::Graph graph = original;
  EXPECT_EQ(run_pass(fuse_add_activation, graph).activations_fused, 1);
  EXPECT_TRUE(same_graph(build(true), graph));
  expect_same_outputs(original, graph);
}

// a + b → Relu → y, with one thing changed each time that forbids the fusion.
ir::Graph add_relu(bool sum_read_twice, bool sum_is_output, DType dtype) {
  GraphBuilder b;
  const ir::ValueId sum = b.add(b.input("a", {2, 3}, dtype), b.input("b", {2, 3}, dtype));
  const ir::ValueId r = b.relu(sum);
  b.output(sum_read_twice ? b.add(r, sum) : r, "y");
  if (sum_is_output) b.output(sum, "sum");
  return b.finish();
}

TEST(FuseAddActivation, DoesNotFuseWhenItMustNot) {
  ir::Graph fusable = add_relu(false, false, DType::kFloat32);
  EXPECT_EQ(run_pass(fuse_add_activation, fusable).activations_fused, 1);
  expect_unchanged(fuse_add_activation, {
      {"the sum has a second reader", [] { return add_relu(true, false, DType::kFloat32); }},
      {"the sum is a graph output", [] { return add_relu(false, true, DType::kFloat32); }},
      {"the sum is not float32", [] { return add_relu(false, false, DType::kInt64); }},
  });
}

// ---- fuse_conv_add ----

TEST(FuseConvAdd, ConvTakesTheSkipAsItsResidualInput) {
  const Tensor w = random_tensor({4, 4, 3, 3}, 1), bias = random_tensor({4}, 2);
  GraphBuilder in;
  const ir::ValueId x = in.input("x", {2, 4, 5, 5});
  in.output(in.add(in.conv(x, in.constant("w", w), in.constant("b", bias), {.pad = 1}), x, "Relu"), "y");
  const ir::Graph original = in.finish();
  ir::Graph graph = original;
  EXPECT_EQ(run_pass(fuse_conv_add, graph).residuals_fused, 1);

  GraphBuilder expected;
  const ir::ValueId ex = expected.input("x", {2, 4, 5, 5});
  expected.output(expected.conv(ex, expected.constant("w", w), expected.constant("b", bias),
                                {.pad = 1, .activation = "Relu", .residual = ex}),
                  "y");
  EXPECT_TRUE(same_graph(expected.finish(), graph));
  expect_same_outputs(original, graph);
}

// Add(downsample, main): the downsample Conv has no bias, so the main Conv — the
// second operand, computed first — absorbs the Add and moves to the Add's place.
TEST(FuseConvAdd, FusedConvTakesTheAddsPlaceInTheOrder) {
  const Tensor w = random_tensor({6, 3, 3, 3}, 1), bias = random_tensor({6}, 2), wd = random_tensor({6, 3, 1, 1}, 3);
  GraphBuilder in;
  const ir::ValueId x = in.input("x", {2, 3, 6, 6});
  const ir::ValueId main = in.conv(x, in.constant("w", w), in.constant("b", bias), {.stride = 2, .pad = 1});
  const ir::ValueId down = in.conv(x, in.constant("wd", wd), ir::kNoValue, {.stride = 2});
  in.output(in.add(down, main, "Relu"), "y");
  const ir::Graph original = in.finish();
  ir::Graph graph = original;
  EXPECT_EQ(run_pass(fuse_conv_add, graph).residuals_fused, 1);

  GraphBuilder expected;
  const ir::ValueId ex = expected.input("x", {2, 3, 6, 6});
  const ir::ValueId ed = expected.conv(ex, expected.constant("wd", wd), ir::kNoValue, {.stride = 2});
  expected.output(expected.conv(ex, expected.constant("w", w), expected.constant("b", bias),
                                {.stride = 2, .pad = 1, .activation = "Relu", .residual = ed}),
                  "y");
  EXPECT_TRUE(same_graph(expected.finish(), graph));
  expect_same_outputs(original, graph);
}

struct ConvAddVariant {
  std::string add_activation = "Relu";
  bool conv_has_bias = true;
  std::string conv_activation;
  bool conv_output_is_output = false;
  bool broadcast_skip = false;  // the other operand is [1, C, 1, 1]
  bool add_conv_to_itself = false;
};

// Add(Conv(x, w, b), skip) [activation=Relu] → y, with one thing changed each time that forbids the fusion.
ir::Graph conv_add(const ConvAddVariant& v) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {1, 2, 3, 3});
  const ir::ValueId bias = v.conv_has_bias ? b.constant("b", random_tensor({2}, 2)) : ir::kNoValue;
  const ir::ValueId c = b.conv(x, b.constant("w", random_tensor({2, 2, 1, 1}, 1)), bias,
                               {.activation = v.conv_activation});
  const ir::ValueId skip = v.broadcast_skip ? b.constant("s", random_tensor({1, 2, 1, 1}, 3)) : x;
  b.output(b.add(c, v.add_conv_to_itself ? c : skip, v.add_activation), "y");
  if (v.conv_output_is_output) b.output(c, "c");
  return b.finish();
}

TEST(FuseConvAdd, DoesNotFuseWhenItMustNot) {
  ir::Graph fusable = conv_add({});
  EXPECT_EQ(run_pass(fuse_conv_add, fusable).residuals_fused, 1);
  expect_unchanged(fuse_conv_add, {
      {"the Add has no fused Relu", [] { return conv_add({.add_activation = ""}); }},
      {"the Conv has no bias", [] { return conv_add({.conv_has_bias = false}); }},
      {"the Conv has its own activation", [] { return conv_add({.conv_activation = "Relu"}); }},
      {"the Conv's output is a graph output", [] { return conv_add({.conv_output_is_output = true}); }},
      {"the Add broadcasts the other operand", [] { return conv_add({.broadcast_skip = true}); }},
      {"the Add adds the Conv's output to itself", [] { return conv_add({.add_conv_to_itself = true}); }},
  });
}

}  // namespace
}  // namespace ucudnn::optimizer
