// Tests of whole pass pipelines against graphs written by hand: run_inference_passes
// on a ResNet block with a downsample branch and on the imported tiny CNN, and
// convert_to_channels_last (Note [channels-last], runtime/ir/layout.h), whose
// NHWC graphs the CPU refuses: their numbers are checked on the GPU
// (tests/cuda_layout_test.cc).
#include "onnx_import/onnx_import.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/ir/layout.h"
#include "tests/support/pass_test_helpers.h"
#include "tests/test_paths.h"

namespace ucudnn::optimizer {
namespace {

using ucudnn_test::GraphBuilder;
using ucudnn_test::random_tensor;
using ucudnn_test::same_graph;

// ---- run_inference_passes ----

// x → Conv(stride 2)-BN-Relu → Conv-BN → Identity ─┐
// x → Conv 1x1(stride 2)-BN (downsample) ───────────┴→ Add → Relu → y
// becomes three Convs: the first with its Relu, the downsample, and the second
// Conv taking the downsample as its residual input z, with the join's Relu; the
// downsample's bias joins the second Conv's (fuse_conv_bias: one bias pass less).
TEST(InferencePasses, ResNetBlockWithDownsampleBecomesThreeConvs) {
  const Tensor w1 = random_tensor({8, 4, 3, 3}, 1), w2 = random_tensor({8, 8, 3, 3}, 2);
  const Tensor wd = random_tensor({8, 4, 1, 1}, 3);
  const BatchNormParameters bn1 = random_batch_norm(8, 10), bn2 = random_batch_norm(8, 20);
  const BatchNormParameters bnd = random_batch_norm(8, 30);
  GraphBuilder in;
  const ir::ValueId x = in.input("x", {2, 4, 8, 8});
  ir::ValueId main = in.conv(x, in.constant("w1", w1), ir::kNoValue, {.stride = 2, .pad = 1});
  main = in.relu(add_batch_norm(in, main, bn1));
  main = add_batch_norm(in, in.conv(main, in.constant("w2", w2), ir::kNoValue, {.pad = 1}), bn2);
  main = in.identity(main);
  const ir::ValueId down =
      add_batch_norm(in, in.conv(x, in.constant("wd", wd), ir::kNoValue, {.stride = 2}), bnd);
  in.output(in.relu(in.add(main, down)), "y");
  const ir::Graph original = in.finish();

  ir::Graph graph = original;
  auto stats = run_inference_passes(graph);
  ASSERT_TRUE(stats.has_value()) << stats.status().to_string();
  EXPECT_EQ(stats->identities_removed, 1);
  EXPECT_EQ(stats->batch_norms_folded, 3);
  EXPECT_EQ(stats->activations_fused, 2);  // the first Conv's Relu and the join's (Add → Relu)
  EXPECT_EQ(stats->residuals_fused, 1);
  EXPECT_EQ(stats->conv_biases_moved, 1);

  const ConvConstants f1 = fold_reference(w1, nullptr, bn1), f2 = fold_reference(w2, nullptr, bn2);
  const ConvConstants fd = fold_reference(wd, nullptr, bnd);
  GraphBuilder expected;
  const ir::ValueId ex = expected.input("x", {2, 4, 8, 8});
  const ir::ValueId first = expected.conv(ex, expected.constant("w1'", f1.weight), expected.constant("b1'", f1.bias),
                                          {.stride = 2, .pad = 1, .activation = "Relu"});
  const ir::ValueId downsample = expected.conv(ex, expected.constant("wd'", fd.weight), ir::kNoValue, {.stride = 2});
  std::vector<float> b2(8);
  for (int64_t k = 0; k < 8; ++k) b2[k] = f2.bias.data<float>()[k] + fd.bias.data<float>()[k];
  expected.output(expected.conv(first, expected.constant("w2'", f2.weight),
                                expected.constant("b2'+bd'", Tensor::from_floats({8}, b2)),
                                {.pad = 1, .activation = "Relu", .residual = downsample}),
                  "y");
  EXPECT_TRUE(same_graph(expected.finish(), graph));
  expect_same_outputs(original, graph);
}

ir::Graph load(const std::string& name, int64_t batch) {
  onnx_import::ImportOptions options;
  options.batch = batch;
  auto graph = onnx_import::load_model(ucudnn_test::source_dir() + "/models/tiny/" + name + "/model.onnx", options);
  EXPECT_TRUE(graph.has_value()) << graph.status().to_string();
  return graph.has_value() ? std::move(*graph) : ir::Graph{};
}

// A model's constants, value shapes and node attributes, by their ONNX names.
struct ModelParts {
  const ir::Graph& graph;
  const Tensor& constant(const std::string& name) const { return *graph.value(graph.find_value(name)).constant; }
  Shape shape(const std::string& value) const { return graph.value(graph.find_value(value)).shape; }
  ir::Attributes attrs(const std::string& node, bool fused_relu = false) const {
    for (const ir::Node& n : graph.nodes) {
      if (n.name != node) continue;
      ir::Attributes attrs = n.attrs;
      if (fused_relu) attrs.set(ir::kFusedActivationAttr, std::string("Relu"));
      return attrs;
    }
    ADD_FAILURE() << "no node '" << node << "'";
    return {};
  }
};

// models/make_tiny_models.py's tiny_cnn: Conv-BN-Relu → MaxPool → Conv-Relu →
// GlobalAveragePool → Flatten → Gemm, as imported (attributes with ONNX defaults).
TEST(InferencePasses, TinyCnnModelFoldsAndFuses) {
  const ir::Graph original = load("tiny_cnn", 3);
  ASSERT_FALSE(original.nodes.empty());
  ir::Graph graph = original;
  ASSERT_TRUE(run_inference_passes(graph).has_value());

  const ModelParts m{original};
  const BatchNormParameters bn{m.constant("bn_scale"), m.constant("bn_bias"), m.constant("bn_mean"),
                               m.constant("bn_var"), m.attrs("bn1").get_float("epsilon")};
  const ConvConstants folded = fold_reference(m.constant("w1"), nullptr, bn);
  GraphBuilder b;
  ir::ValueId y = b.input("input", m.shape("input"));
  y = b.node(OpKind::kConv, {y, b.constant("w1'", folded.weight), b.constant("b1'", folded.bias)}, {m.shape("r1")},
             m.attrs("conv1", /*fused_relu=*/true))[0];
  y = b.node(OpKind::kMaxPool, {y}, {m.shape("p1")}, m.attrs("pool1"))[0];
  y = b.node(OpKind::kConv, {y, b.constant("w2", m.constant("w2")), b.constant("b2", m.constant("b2"))},
             {m.shape("r2")}, m.attrs("conv2", /*fused_relu=*/true))[0];
  y = b.node(OpKind::kGlobalAveragePool, {y}, {m.shape("g")}, m.attrs("gap"))[0];
  y = b.node(OpKind::kFlatten, {y}, {m.shape("f")}, m.attrs("flatten"))[0];
  y = b.node(OpKind::kGemm, {y, b.constant("wf", m.constant("wf")), b.constant("bf", m.constant("bf"))},
             {m.shape("output")}, m.attrs("fc"))[0];
  b.output(y, "output");
  EXPECT_TRUE(same_graph(b.finish(), graph));
  expect_same_outputs(original, graph);
}

// ---- convert_to_channels_last ----

// [K, C, R, S] → [K, R, S, C], written out here rather than with the pass's own transpose.
Tensor weight_to_nhwc(const Tensor& w) {
  const Shape& s = w.shape();
  std::vector<float> out(static_cast<size_t>(w.numel()));
  for (int64_t k = 0; k < s[0]; ++k)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t r = 0; r < s[2]; ++r)
        for (int64_t q = 0; q < s[3]; ++q)
          out[((k * s[2] + r) * s[3] + q) * s[1] + c] = w.data<float>()[((k * s[1] + c) * s[2] + r) * s[3] + q];
  return Tensor::from_floats(ir::nchw_to_nhwc(s), out);
}

// x → Conv[Relu] → MaxPool → (Conv 3x3, Conv 1x1) → Add[Relu] → Concat(Add, Conv 3x3) →
// GlobalAveragePool → Flatten → f, and the Add's output is a second graph output a.
TEST(ChannelsLast, ActivationsStayNhwcBetweenTheInputAndOutputTransposes) {
  const Tensor w1 = random_tensor({4, 3, 3, 3}, 1), b1 = random_tensor({4}, 2);
  const Tensor w2 = random_tensor({6, 4, 3, 3}, 3), b2 = random_tensor({6}, 4);
  const Tensor w3 = random_tensor({6, 4, 1, 1}, 5), b3 = random_tensor({6}, 6);
  GraphBuilder in;
  ir::ValueId y = in.conv(in.input("x", {2, 3, 8, 8}), in.constant("w1", w1), in.constant("b1", b1),
                          {.pad = 1, .activation = "Relu"});
  y = in.max_pool(y, 2, 2);
  const ir::ValueId c2 = in.conv(y, in.constant("w2", w2), in.constant("b2", b2), {.pad = 1});
  const ir::ValueId sum = in.add(c2, in.conv(y, in.constant("w3", w3), in.constant("b3", b3)), "Relu");
  in.output(in.flatten(in.global_average_pool(in.concat({sum, c2}, 1))), "f");
  in.output(sum, "a");
  ir::Graph graph = in.finish();
  const PassStats stats = run_pass(convert_to_channels_last, graph);
  EXPECT_EQ(stats.channels_last_nodes, 7);  // 3 Conv, MaxPool, Add, Concat, GlobalAveragePool
  EXPECT_EQ(stats.layout_transposes, 2);

  GraphBuilder expected;
  const ir::ValueId x = expected.transpose(expected.input("x", {2, 3, 8, 8}), ir::kNchwToNhwcPerm);
  y = expected.conv(x, expected.constant("w1", weight_to_nhwc(w1)), expected.constant("b1", b1),
                    {.pad = 1, .activation = "Relu", .channels_last = true});
  y = expected.max_pool(y, 2, 2, /*channels_last=*/true);
  const ir::ValueId e2 = expected.conv(y, expected.constant("w2", weight_to_nhwc(w2)), expected.constant("b2", b2),
                                       {.pad = 1, .channels_last = true});
  const ir::ValueId e3 = expected.conv(y, expected.constant("w3", weight_to_nhwc(w3)), expected.constant("b3", b3),
                                       {.channels_last = true});
  const ir::ValueId esum = expected.add(e2, e3, "Relu");  // elementwise: the same in both layouts
  const ir::ValueId joined = expected.concat({esum, e2}, 3);  // NCHW's channel axis 1 is NHWC's 3
  // GlobalAveragePool makes [N, 1, 1, C]: the same bytes as NCHW's [N, C, 1, 1], so Flatten reads it as it is.
  expected.output(expected.flatten(expected.global_average_pool(joined, /*channels_last=*/true)), "f");
  expected.output(expected.transpose(esum, ir::kNhwcToNchwPerm), "a");
  EXPECT_TRUE(same_graph(expected.finish(), graph));
  EXPECT_STREQ(ir::graph_layout_name(graph), "nhwc");
}

// A Flatten of an NHWC value whose H and W are not 1 reads its NCHW twin.
TEST(ChannelsLast, FlattenOfAWideValueReadsItInNchw) {
  const Tensor w = random_tensor({4, 3, 1, 1}, 1);
  GraphBuilder in;
  in.output(in.flatten(in.conv(in.input("x", {2, 3, 2, 2}), in.constant("w", w), ir::kNoValue)), "f");
  ir::Graph graph = in.finish();
  run_pass(convert_to_channels_last, graph);

  GraphBuilder expected;
  const ir::ValueId x = expected.transpose(expected.input("x", {2, 3, 2, 2}), ir::kNchwToNhwcPerm);
  const ir::ValueId c = expected.conv(x, expected.constant("w", weight_to_nhwc(w)), ir::kNoValue,
                                      {.channels_last = true});
  expected.output(expected.flatten(expected.transpose(c, ir::kNhwcToNchwPerm)), "f");
  EXPECT_TRUE(same_graph(expected.finish(), graph));
}

TEST(ChannelsLast, LeavesGraphsWithoutNhwcNodesAlone) {
  expect_unchanged(convert_to_channels_last, {
      {"a Conv whose weight is not a constant",
       [] {
         GraphBuilder b;
         const ir::ValueId c = b.conv(b.input("x", {1, 2, 3, 3}), b.input("w", {2, 2, 1, 1}), ir::kNoValue);
         b.output(b.relu(c), "y");
         return b.finish();
       }},
      {"a 1-D Conv (3-D activations)",
       [] {
         GraphBuilder b;
         const ir::ValueId x = b.input("x", {1, 2, 5});
         const ir::ValueId w = b.constant("w", random_tensor({3, 2, 1}, 1));
         ir::Attributes attrs;
         attrs.set("group", int64_t{1});
         b.output(b.node(OpKind::kConv, {x, w}, {{1, 3, 5}}, attrs)[0], "y");
         return b.finish();
       }},
      {"only elementwise ops",
       [] {
         GraphBuilder b;
         const ir::ValueId x = b.input("x", {1, 2, 3, 3});
         b.output(b.add(b.relu(x), x), "y");
         return b.finish();
       }},
  });
}

// x → Conv 1x1 → Gather of the channels (a channel shuffle) → Slice of channels 0..2 → Conv 1x1 → y:
// the Gather and the Slice run on NHWC values, their axes moved (Slice's in a new constant), so the
// only transposes are the input's and the output's.
TEST(ChannelsLast, GatherAndSliceOfChannelsStayNhwc) {
  const Tensor w1 = random_tensor({6, 4, 1, 1}, 1), w2 = random_tensor({2, 3, 1, 1}, 2);
  const std::vector<int64_t> shuffle = {0, 3, 1, 4, 2, 5};
  auto ints = [](GraphBuilder& b, const char* name, const std::vector<int64_t>& values) {
    return b.constant(name, Tensor::from_int64s({static_cast<int64_t>(values.size())}, values));
  };
  ir::Attributes axis;
  axis.set("axis", int64_t{1});
  GraphBuilder in;
  ir::ValueId y = in.conv(in.input("x", {2, 4, 5, 5}), in.constant("w1", w1), ir::kNoValue);
  y = in.node(OpKind::kGather, {y, ints(in, "indices", shuffle)}, {{2, 6, 5, 5}}, axis)[0];
  y = in.node(OpKind::kSlice, {y, ints(in, "starts", {0}), ints(in, "ends", {3}), ints(in, "axes", {1})},
              {{2, 3, 5, 5}})[0];
  in.output(in.conv(y, in.constant("w2", w2), ir::kNoValue), "y");
  const ir::Graph original = in.finish();
  ir::Graph graph = original;
  const PassStats stats = run_pass(convert_to_channels_last, graph);
  EXPECT_EQ(stats.channels_last_nodes, 4);
  EXPECT_EQ(stats.layout_transposes, 2);

  GraphBuilder expected;
  ir::Attributes nhwc_axis;
  nhwc_axis.set("axis", int64_t{3});
  y = expected.conv(expected.transpose(expected.input("x", {2, 4, 5, 5}), ir::kNchwToNhwcPerm),
                    expected.constant("w1", weight_to_nhwc(w1)), ir::kNoValue, {.channels_last = true});
  y = expected.node(OpKind::kGather, {y, ints(expected, "indices", shuffle)}, {{2, 5, 5, 6}}, nhwc_axis)[0];
  y = expected.node(OpKind::kSlice,
                    {y, ints(expected, "starts", {0}), ints(expected, "ends", {3}), ints(expected, "axes", {3})},
                    {{2, 5, 5, 3}})[0];
  y = expected.conv(y, expected.constant("w2", weight_to_nhwc(w2)), ir::kNoValue, {.channels_last = true});
  expected.output(expected.transpose(y, ir::kNhwcToNchwPerm), "y");
  EXPECT_TRUE(same_graph(expected.finish(), graph));
  if (cpu::cpu_runs_channels_last()) expect_same_outputs(original, graph);
}

// The CPU runs a channels-last graph through oneDNN (cpu_layout_test compares the outputs); a
// build without oneDNN refuses it, saying so.
TEST(ChannelsLast, CpuRunsChannelsLastWithOneDnnOrSaysWhyNot) {
  ir::Graph graph = load("tiny_cnn", 2);
  ASSERT_TRUE(run_inference_passes(graph).has_value());
  run_pass(convert_to_channels_last, graph);
  auto outputs = run_on_cpu(graph, {random_tensor(graph.value(graph.inputs[0]).shape, 1)});
  if (cpu::cpu_runs_channels_last()) {
    EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  } else {
    ASSERT_FALSE(outputs.has_value());
    EXPECT_NE(outputs.status().message().find("oneDNN"), std::string::npos) << outputs.status().to_string();
  }
}

}  // namespace
}  // namespace ucudnn::optimizer
