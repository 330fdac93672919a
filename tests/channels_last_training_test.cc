// Channels-last training (docs/TRAINING.md): the channels-last pass over a training graph — forward,
// backward and the weights' transposes — and the step it gives against the NCHW step on every backend
// that trains channels-last (the GPU; the CPU trains NCHW only, so there the structural test alone runs).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "optimizer/passes/passes.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/op_descriptor.h"
#include "tests/support/graph_builder.h"
#include "tests/support/training_step_compare.h"
#include "training/training_graph.h"

namespace ucudnn_test {
namespace {

using ucudnn::OpKind;
using ucudnn::Shape;
namespace ir = ucudnn::ir;
namespace training = ucudnn::training;

// A residual CNN with a max pool, imported as inference: Conv (bias) → BN → Relu → MaxPool 2×2/2, then
// Conv → BN and a 1×1 Conv → BN joined by Add → Relu, GlobalAveragePool, Flatten, Gemm: logits [4, 3].
ir::Graph pooled_residual_cnn() {
  GraphBuilder b;
  uint32_t seed = 500;
  auto weight = [&b, &seed](const std::string& name, const Shape& shape, float low = -0.5f, float high = 0.5f) {
    return b.constant(name, random_tensor(shape, seed++, low, high));
  };
  auto batch_norm = [&](const std::string& name, ir::ValueId x) {
    return b.batch_norm(x, weight(name + ".scale", {6}, 0.5f, 1.5f), weight(name + ".bias", {6}),
                        weight(name + ".mean", {6}), weight(name + ".var", {6}, 0.5f, 1.5f), 1e-5f);
  };
  const ir::ValueId x = b.input("x", {4, 3, 8, 8});
  const ir::ValueId r1 = b.max_pool(
      b.relu(batch_norm("bn1", b.conv(x, weight("w1", {6, 3, 3, 3}), weight("b1", {6}), {.pad = 1}))), 2, 2);
  const ir::ValueId y2 = batch_norm("bn2", b.conv(r1, weight("w2", {6, 6, 3, 3}), ir::kNoValue, {.pad = 1}));
  const ir::ValueId yd = batch_norm("bn_down", b.conv(r1, weight("wd", {6, 6, 1, 1}), ir::kNoValue));
  const ir::ValueId pooled = b.flatten(b.global_average_pool(b.relu(b.add(y2, yd))));
  ir::Attributes gemm;
  gemm.set("transB", int64_t{1});
  b.output(b.node(OpKind::kGemm, {pooled, weight("fc.w", {3, 6}), weight("fc.b", {3})}, {{4, 3}}, gemm)[0],
           "logits");
  ir::Graph graph = b.finish();
  for (ir::Node& node : graph.nodes) ucudnn::fill_default_attributes(node);  // as the importer leaves them
  return graph;
}

int count_ops(const ir::Graph& graph, OpKind op) {
  return static_cast<int>(
      std::count_if(graph.nodes.begin(), graph.nodes.end(), [op](const ir::Node& n) { return n.op == op; }));
}

bool is_graph_input(const ir::Graph& graph, ir::ValueId id) {
  return std::find(graph.inputs.begin(), graph.inputs.end(), id) != graph.inputs.end();
}

// The pass over a training step: every convolution (three directions), batch norm (forward and
// gradient) and max pool (forward and gradient) runs channels-last, the graph's interface is unchanged,
// and the Transposes are those a step needs: the batch and each weight in, each weight gradient out,
// and the one gradient the pass keeps NCHW (GlobalAveragePool's Expand).
TEST(ChannelsLastTraining, PassRewritesTheTrainingOps) {
  auto step = training::build_training_graph(pooled_residual_cnn(), {});
  ASSERT_TRUE(step.has_value()) << step.status().to_string();
  const ir::Graph& nchw = step->graph;
  ir::Graph nhwc = nchw;
  ucudnn::optimizer::PassStats stats;
  ASSERT_TRUE(ucudnn::optimizer::convert_training_step_to_channels_last(nhwc, &stats).is_ok());

  for (const ir::Node& node : nhwc.nodes) {
    switch (node.op) {
      case OpKind::kConv: case OpKind::kConvGradData: case OpKind::kConvGradFilter: case OpKind::kBatchNormTrain:
      case OpKind::kBatchNormGrad: case OpKind::kMaxPool: case OpKind::kMaxPoolGrad:
        EXPECT_TRUE(ir::is_channels_last(node)) << node.describe();
        break;
      default:
        break;
    }
  }
  EXPECT_EQ(count_ops(nhwc, OpKind::kConvGradFilter), 3);
  EXPECT_EQ(count_ops(nhwc, OpKind::kMaxPoolGrad), 1);

  ASSERT_EQ(nhwc.inputs.size(), nchw.inputs.size());
  for (size_t i = 0; i < nchw.inputs.size(); ++i) {
    EXPECT_EQ(nhwc.value(nhwc.inputs[i]).name, nchw.value(nchw.inputs[i]).name) << "input " << i;
    EXPECT_EQ(nhwc.value(nhwc.inputs[i]).shape, nchw.value(nchw.inputs[i]).shape) << "input " << i;
  }
  ASSERT_EQ(nhwc.outputs.size(), nchw.outputs.size());
  for (size_t i = 0; i < nchw.outputs.size(); ++i) {
    EXPECT_EQ(nhwc.value(nhwc.outputs[i]).name, nchw.value(nchw.outputs[i]).name) << "output " << i;
    EXPECT_EQ(nhwc.value(nhwc.outputs[i]).shape, nchw.value(nchw.outputs[i]).shape) << "output " << i;
  }

  int from_inputs = 0, to_outputs = 0, inside = 0;
  for (const ir::Node& node : nhwc.nodes) {
    if (node.op != OpKind::kTranspose) continue;
    const bool to_output = std::find(nhwc.outputs.begin(), nhwc.outputs.end(), node.outputs[0]) != nhwc.outputs.end();
    if (is_graph_input(nhwc, node.inputs[0])) ++from_inputs;
    else if (to_output) ++to_outputs;
    else ++inside;
  }
  EXPECT_EQ(from_inputs, 4) << "the batch and the three weights";
  EXPECT_EQ(to_outputs, 3) << "the three weight gradients";
  EXPECT_LE(inside, 1) << "GlobalAveragePool's gradient (Expand) alone runs NCHW";
  EXPECT_EQ(stats.layout_transposes, from_inputs + to_outputs + inside);
}

// The channels-last step computes what the NCHW step does: loss, logits, every gradient (the bias's
// through a ReduceSum over NHWC axes), every running statistic.
TEST(ChannelsLastTraining, StepEqualsTheNchwStep) {
  const ir::Graph inference = pooled_residual_cnn();
  auto step = training::build_training_graph(inference, {});
  ASSERT_TRUE(step.has_value()) << step.status().to_string();
  ir::Graph nhwc = step->graph;
  ucudnn::optimizer::PassStats stats;
  ASSERT_TRUE(ucudnn::optimizer::convert_training_step_to_channels_last(nhwc, &stats).is_ok());
  expect_same_step_everywhere(step->graph, nhwc, training_inputs(inference, step->graph),
                              "the channels-last training step", StepNeeds::kChannelsLast);
}

}  // namespace
}  // namespace ucudnn_test
