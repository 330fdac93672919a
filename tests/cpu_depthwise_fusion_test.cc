// Tests of the CPU's 1×1 + depthwise fusion (Note [pointwise-depthwise fusion], runtime/ir/fusion.h):
// which pairs fusable_depthwise_convs offers and which it leaves, the FusedConvDepthwise node
// fuse_conv_depthwise makes, its outputs on the CPU against the two Convs it replaces (oneDNN's fused
// primitive), names that are no such pair refused, and the plan file's list of fused pairs.
#include <gtest/gtest.h>

#include "runtime/cpu/conv_algorithms.h"
#include "runtime/executor/plan_json.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"
#include "tests/support/pass_test_helpers.h"

namespace ucudnn::optimizer {
namespace {

using ucudnn_test::GraphBuilder;
using ucudnn_test::random_tensor;

// A Conv's fused activation attributes (name "", "Relu", "Clip", ...); Clip gets the bounds 0 and 6.
void set_activation(ir::Attributes& attrs, const std::string& name) {
  if (name.empty()) return;
  attrs.set(ir::kFusedActivationAttr, name);
  if (name == "Clip") {
    attrs.set(ir::kFusedActivationMinAttr, 0.0f);
    attrs.set(ir::kFusedActivationMaxAttr, 6.0f);
  }
}

struct Pair {
  int64_t size = 8, channels = 4, filters = 12;
  int64_t kernel = 3, stride = 1, pad = 1, dilation = 1;
  std::string pointwise_activation, depthwise_activation;
  bool read_twice = false;          // the 1×1's output is a graph output too
  int64_t first_kernel = 1;         // the Conv before the depthwise: 1×1, or a 3×3 (no pair)
  bool channels_last = true;
};

// x [2, size, size, channels] → Conv(first_kernel, filters) → depthwise Conv(kernel, stride, pad) → y,
// channels-last (or NCHW), constant weights and biases.
ir::Graph pair_graph(const Pair& p) {
  GraphBuilder b;
  const bool cl = p.channels_last;
  const Shape x_shape = cl ? Shape{2, p.size, p.size, p.channels} : Shape{2, p.channels, p.size, p.size};
  const ir::ValueId x = b.input("x", x_shape);
  const Shape w1 = cl ? Shape{p.filters, p.first_kernel, p.first_kernel, p.channels}
                      : Shape{p.filters, p.channels, p.first_kernel, p.first_kernel};
  const ir::ValueId mid =
      b.conv(x, b.constant("w1", random_tensor(w1, 1)), b.constant("b1", random_tensor({p.filters}, 2)),
             {.pad = (p.first_kernel - 1) / 2, .activation = p.pointwise_activation, .channels_last = cl});
  if (p.read_twice) b.output(mid, "mid");
  const int64_t span = (p.kernel - 1) * p.dilation + 1;
  const int64_t out = (p.size + 2 * p.pad - span) / p.stride + 1;
  ir::Attributes attrs;
  attrs.set("group", p.filters);
  attrs.set("pads", std::vector<int64_t>{p.pad, p.pad, p.pad, p.pad});
  attrs.set("strides", std::vector<int64_t>{p.stride, p.stride});
  attrs.set("dilations", std::vector<int64_t>{p.dilation, p.dilation});
  if (cl) attrs.set(ir::kChannelsLastAttr, int64_t{1});
  set_activation(attrs, p.depthwise_activation);
  const Shape w2 = cl ? Shape{p.filters, p.kernel, p.kernel, 1} : Shape{p.filters, 1, p.kernel, p.kernel};
  const Shape y = cl ? Shape{2, out, out, p.filters} : Shape{2, p.filters, out, out};
  const ir::ValueId dw = b.node(OpKind::kConv, {mid, b.constant("w2", random_tensor(w2, 3)),
                                                b.constant("b2", random_tensor({p.filters}, 4))},
                                {y}, std::move(attrs))[0];
  b.output(dw, "y");
  ir::Graph graph = b.finish();
  graph.nodes[graph.value(dw).producer].name = "depthwise";
  return graph;
}

// The pair becomes one FusedConvDepthwise named after the depthwise, reading the 1×1's X, W, B and the
// depthwise's W, B, writing its Y; both activations go along; the CPU computes the same outputs.
TEST(DepthwiseFusion, APairBecomesOneNodeWithTheSameOutputs) {
  if (!cpu::cpu_runs_channels_last()) GTEST_SKIP() << "this build has no oneDNN: no channels-last CPU graphs";
  for (const Pair& p : {Pair{.stride = 1, .pointwise_activation = "Relu", .depthwise_activation = "Relu"},
                        Pair{.stride = 2, .pointwise_activation = "HardSwish", .depthwise_activation = "Clip"},
                        Pair{.size = 16, .channels = 16, .filters = 64, .stride = 2, .pointwise_activation = "Relu"},
                        Pair{.stride = 1, .pointwise_activation = "SiLU", .depthwise_activation = "HardSwish"},
                        // Rows wider than 64: oneDNN 2.6.3's JIT kernel got these wrong on NHWC tensors (Note
                        // [fused depthwise in blocked layouts], runtime/cpu/onednn_conv_depthwise.cc).
                        Pair{.size = 112, .channels = 16, .filters = 64, .stride = 2, .pointwise_activation = "Relu",
                             .depthwise_activation = "Relu"},
                        Pair{.size = 80, .channels = 16, .filters = 32, .stride = 1, .pointwise_activation = "Relu"}}) {
    SCOPED_TRACE("stride " + std::to_string(p.stride) + ", " + p.pointwise_activation + " then " +
                 p.depthwise_activation);
    const ir::Graph original = pair_graph(p);
    EXPECT_EQ(fusable_depthwise_convs(original), std::vector<std::string>{"depthwise"});
    ir::Graph fused = original;
    PassStats stats;
    ASSERT_TRUE(fuse_conv_depthwise(fused, &stats, {"depthwise"}).is_ok());
    EXPECT_EQ(stats.depthwise_fused, 1);
    ASSERT_EQ(fused.nodes.size(), 1u);
    const ir::Node& node = fused.nodes[0];
    EXPECT_EQ(node.op, OpKind::kFusedConvDepthwise);
    EXPECT_EQ(node.name, "depthwise");
    ASSERT_EQ(node.inputs.size(), 5u);
    auto name = [](const ir::Graph& g, ir::ValueId id) { return g.value(id).name; };  // ids are renumbered
    const ir::Node& pw = original.nodes[0];
    const ir::Node& dw = original.nodes[1];
    EXPECT_EQ(name(fused, node.inputs[0]), name(original, pw.inputs[0]));
    EXPECT_EQ(name(fused, node.inputs[1]), name(original, pw.inputs[1]));
    EXPECT_EQ(name(fused, node.inputs[2]), name(original, pw.inputs[2]));
    EXPECT_EQ(name(fused, node.inputs[ir::kDepthwiseWeightInput]), name(original, dw.inputs[1]));
    EXPECT_EQ(name(fused, node.inputs[ir::kDepthwiseBiasInput]), name(original, dw.inputs[2]));
    ASSERT_EQ(node.outputs.size(), 1u);
    EXPECT_EQ(name(fused, node.outputs[0]), name(original, dw.outputs[0]));
    EXPECT_EQ(node.attrs.get_ints(ir::kDepthwiseStridesAttr), (std::vector<int64_t>{p.stride, p.stride}));
    EXPECT_EQ(ir::fused_activation(node), p.pointwise_activation);
    EXPECT_EQ(node.attrs.has(ir::kDepthwiseActivationAttr) ? node.attrs.get_string(ir::kDepthwiseActivationAttr) : "",
              p.depthwise_activation);
    expect_same_outputs(original, fused);
  }
}

// A window whose output oneDNN's depthwise post-op would size otherwise (9 with stride 2) is refused by
// the kernel, naming the node, or computed right: never a wrong answer.
TEST(DepthwiseFusion, AnOddWindowRunsRightOrIsRefused) {
  if (!cpu::cpu_runs_channels_last()) GTEST_SKIP() << "this build has no oneDNN: no channels-last CPU graphs";
  const ir::Graph original = pair_graph(Pair{.size = 9, .stride = 2});
  ir::Graph fused = original;
  PassStats stats;
  ASSERT_TRUE(fuse_conv_depthwise(fused, &stats, {"depthwise"}).is_ok());
  const std::vector<Tensor> inputs = {random_tensor(original.value(original.inputs[0]).shape, 9)};
  auto got = run_on_cpu(fused, inputs);
  if (!got) {
    EXPECT_EQ(got.status().code(), StatusCode::kUnsupported) << got.status().to_string();
    EXPECT_NE(got.status().message().find("fused depthwise output is not Y"), std::string::npos)
        << got.status().to_string();
    return;
  }
  expect_same_outputs(original, fused);
}

TEST(DepthwiseFusion, PairsOneDnnCannotFuseAreNotOffered) {
  const std::vector<std::pair<std::string, Pair>> cases = {
      {"the 1x1's output is read twice", Pair{.read_twice = true}},
      {"a 3x3 Conv before the depthwise", Pair{.first_kernel = 3}},
      {"a dilated depthwise", Pair{.pad = 2, .dilation = 2}},
      {"an NCHW graph", Pair{.channels_last = false}},
  };
  for (const auto& [why, p] : cases) {
    const ir::Graph graph = pair_graph(p);
    EXPECT_TRUE(fusable_depthwise_convs(graph).empty()) << why;
    ir::Graph copy = graph;
    PassStats stats;
    const Status refused = fuse_conv_depthwise(copy, &stats, {"depthwise"});
    EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << why;
    EXPECT_NE(refused.message().find("'depthwise'"), std::string::npos) << refused.to_string();
  }
}

// A plan file names the fused depthwise Convs (layout nhwc only); read back, the list is the same.
TEST(DepthwiseFusion, ThePlanFileNamesTheFusedPairs) {
  const ir::Graph graph = pair_graph(Pair{});
  runtime::Plan plan;
  plan.device = "cpu";
  plan.layout = "nhwc";
  plan.fused_depthwise = {"depthwise"};
  auto read = runtime::plan_from_json(runtime::plan_to_json(plan, graph));
  ASSERT_TRUE(read.has_value()) << read.status().to_string();
  EXPECT_EQ(read->fused_depthwise, plan.fused_depthwise);
  plan.layout = "nchw";
  auto refused = runtime::plan_from_json(runtime::plan_to_json(plan, graph));
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("/fused_depthwise"), std::string::npos) << refused.status().to_string();
}

}  // namespace
}  // namespace ucudnn::optimizer
