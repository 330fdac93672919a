// Tests of the CPU's conv fusions, fuse_any_conv_activation and fuse_conv_any_add (optimizer/passes/
// passes.h), as the CPU's pipeline runs them (run_inference_passes without the GPU's passes): which
// activation and which residual Add join which Conv, what stays, and the same outputs on the CPU
// before and after (the fused Conv then runs oneDNN's post-ops or the Eigen algorithms' epilogue).
#include "runtime/ir/fusion.h"
#include "tests/support/fusion_graphs.h"
#include "tests/support/pass_test_helpers.h"

namespace ucudnn::optimizer {
namespace {

using ucudnn_test::GraphBuilder;
using ucudnn_test::random_tensor;

PassStats run_cpu_passes(ir::Graph& graph) {
  InferencePassOptions options;
  options.gpu_fusions = false;
  return run_passes(graph, options);
}

// A dense 1×1 Conv → SiLU, a depthwise Conv → HardSwish (a lone node) and → Clip(0, 6): each one Conv
// applying its activation, the bias kept in the Conv.
TEST(FuseAnyConvActivation, DenseAndDepthwiseConvsTakeTheirActivation) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 6, 7, 7});
  const ir::ValueId c = conv_1x1(b, x, 6, 6, 1);
  b.output(binary(b, OpKind::kMul, c, unary(b, OpKind::kSigmoid, c)), "silu");
  b.output(unary(b, OpKind::kHardSwish, depthwise(b, x)), "hardswish");
  b.output(b.same_shape(OpKind::kClip, {depthwise(b, x), scalar(b, 0), scalar(b, 6)}), "relu6");
  const ir::Graph original = b.finish();
  ir::Graph graph = original;
  EXPECT_EQ(run_cpu_passes(graph).activations_fused, 3);
  ASSERT_EQ(graph.nodes.size(), 3u);
  for (const ir::Node& n : graph.nodes) {
    EXPECT_EQ(n.op, OpKind::kConv);
    EXPECT_EQ(n.inputs.size(), 3u) << "the bias stays in the Conv";
  }
  EXPECT_EQ(ir::fused_activation(graph.nodes[0]), "SiLU");
  EXPECT_EQ(ir::fused_activation(graph.nodes[1]), "HardSwish");
  EXPECT_EQ(ir::fused_activation(graph.nodes[2]), "Clip");
  expect_same_outputs(original, graph);
}

// A Conv read twice keeps its activation apart, and so does one whose activation the Conv cannot apply
// (Tanh).
TEST(FuseAnyConvActivation, AConvReadTwiceOrAnotherActivationStaysApart) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 6, 7, 7});
  const ir::ValueId c = conv_1x1(b, x, 6, 6, 1);
  b.output(unary(b, OpKind::kHardSwish, c), "hardswish");
  b.output(unary(b, OpKind::kSigmoid, c), "sigmoid");
  b.output(unary(b, OpKind::kTanh, conv_1x1(b, x, 6, 6, 2)), "tanh");
  const ir::Graph original = b.finish();
  ir::Graph graph = original;
  EXPECT_EQ(run_cpu_passes(graph).activations_fused, 0);
  for (const ir::Node& n : graph.nodes) EXPECT_TRUE(ir::fused_activation(n).empty()) << n.name;
  expect_same_outputs(original, graph);
}

// MobileNetV3's and EfficientNet's residual: Add(Conv(x) + b, x) without an activation becomes one Conv
// with the residual input x on the CPU; the GPU's pipeline leaves that Add to fuse_conv_bias.
TEST(FuseConvAnyAdd, AnAddWithoutAReluJoinsItsConvOnTheCpu) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {2, 4, 5, 5});
  b.output(binary(b, OpKind::kAdd, conv_1x1(b, x, 4, 4, 7), x), "y");
  const ir::Graph original = b.finish();
  ir::Graph graph = original;
  EXPECT_EQ(run_cpu_passes(graph).residuals_fused, 1);
  ASSERT_EQ(graph.nodes.size(), 1u);
  const ir::Node& conv = graph.nodes[0];
  EXPECT_EQ(conv.op, OpKind::kConv);
  ASSERT_EQ(conv.inputs.size(), 4u);
  EXPECT_EQ(conv.inputs[ir::kConvResidualInput], graph.inputs[0]);
  EXPECT_TRUE(ir::fused_activation(conv).empty());
  expect_same_outputs(original, graph);

  ir::Graph gpu = original;
  EXPECT_EQ(run_passes(gpu).residuals_fused, 0);
}

}  // namespace
}  // namespace ucudnn::optimizer
