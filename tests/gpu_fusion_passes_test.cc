// Tests of the GPU's conv fusions, fuse_conv_bias and fuse_depthwise_activation (optimizer/passes/
// passes.h), in the style of passes_test.cc: which Conv gives its bias to which node, which
// activation joins a depthwise Conv, what stays, and the same outputs on the CPU before and after.
// Then (on a GPU, skipped without one) the fused graphs in both layouts against the CPU.
#include <cmath>

#include "runtime/ir/fusion.h"
#include "runtime/ir/pointwise_program.h"
#include "tests/support/backend_runner.h"
#include "tests/support/fusion_graphs.h"
#include "tests/support/pass_test_helpers.h"

namespace ucudnn::optimizer {
namespace {

using ir::PointwiseOp;
using ucudnn_test::GraphBuilder;
using ucudnn_test::random_tensor;

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
  ASSERT_EQ(graph.nodes.size(), 1u);  // the CPU's pipeline gives the Conv its SiLU (fuse_any_conv_activation)
  EXPECT_EQ(graph.nodes[0].inputs.size(), 3u);
  EXPECT_EQ(ir::fused_activation(graph.nodes[0]), "SiLU");
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

// ResNet's join, relu(conv3(y) + b3 + downsample(x) + b_ds) with the Add fused into conv3 as its z: the
// downsample gives its bias to conv3, whose bias becomes b3 + b_ds. Not where conv3 has no bias of its own.
ir::Graph resnet_join(bool conv3_bias) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 3, 4, 4});
  const ir::ValueId y = b.relu(conv_1x1(b, x, 4, 3, 1));
  const ir::ValueId c = b.conv(y, b.constant("w3", random_tensor({5, 4, 1, 1}, 3)),
                               conv3_bias ? b.constant("b3", random_tensor({5}, 4)) : ir::kNoValue);
  b.output(b.add(c, conv_1x1(b, x, 5, 3, 5), "Relu"), "out");
  return b.finish();
}

TEST(FuseConvBias, ADownsampleGivesItsBiasToTheConvThatAddsIt) {
  const ir::Graph original = resnet_join(true);
  ir::Graph graph = original;
  const PassStats stats = run_passes(graph);
  EXPECT_EQ(stats.conv_biases_moved, 1);
  const ir::Node* adder = nullptr;  // the Conv that reads the other as z
  for (const ir::Node& n : graph.nodes)
    if (n.op == OpKind::kConv && n.inputs.size() > ir::kConvResidualInput) adder = &n;
  ASSERT_NE(adder, nullptr);
  const ir::Node& giver = graph.nodes[graph.value(adder->inputs[ir::kConvResidualInput]).producer];
  EXPECT_EQ(giver.inputs.size(), 2u);
  EXPECT_EQ(graph.value(adder->inputs[2]).name, "b3+b5");
  expect_same_outputs(original, graph);

  ir::Graph unbiased = resnet_join(false);
  EXPECT_EQ(run_passes(unbiased).conv_biases_moved, 0);
  int biased = 0;
  for (const ir::Node& n : unbiased.nodes)
    if (n.op == OpKind::kConv && n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue) ++biased;
  EXPECT_EQ(biased, 2);  // the first Conv and the downsample keep theirs
}

// ---- fuse_depthwise_activation ----

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
// depthwise Conv read twice keeps it too. (The CPU's pipeline gives any Conv its activation instead:
// cpu_fusion_passes_test.cc.)
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
  GraphBuilder residual;  // Add(Conv(x) + b, x): a FusedPointwise "Bias+Add" (fuse_conv_bias); resnet_join:
                          // the downsample's bias in the Conv that adds it
  const ir::ValueId r = residual.input("x", {2, 4, 5, 5});
  residual.output(binary(residual, OpKind::kAdd, conv_1x1(residual, r, 4, 4, 7), r), "y");
  for (const ir::Graph& original :
       {dense_block(), se.finish(), silu.finish(), dw.finish(), residual.finish(), resnet_join(true)}) {
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
