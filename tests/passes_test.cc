// Tests of the inference passes: the structure they leave (golden counts on the
// tiny CNN and on hand-built graphs where a pass must NOT apply) and that the
// rewritten graph computes what the original computes.
#include <gtest/gtest.h>

#include <random>

#include "onnx_import/onnx_import.h"
#include "optimizer/passes/passes.h"
#include "runtime/executor/cpu_executor.h"
#include "runtime/ir/layout.h"
#include "tests/test_paths.h"

namespace ucudnn::optimizer {
namespace {

std::string model_path(const std::string& name) {
  return ucudnn_test::source_dir() + "/models/tiny/" + name + "/model.onnx";
}

ir::Graph load(const std::string& name, int64_t batch) {
  onnx_import::ImportOptions options;
  options.batch = batch;
  auto graph = onnx_import::load_model(model_path(name), options);
  EXPECT_TRUE(graph.has_value()) << graph.status().to_string();
  return std::move(*graph);
}

int count_ops(const ir::Graph& graph, OpKind op) {
  int n = 0;
  for (const ir::Node& node : graph.nodes) n += node.op == op;
  return n;
}

std::vector<Tensor> run(const ir::Graph& graph, const std::vector<Tensor>& inputs) {
  auto plan = runtime::make_cpu_plan(graph);
  auto executor = runtime::CpuExecutor::create(graph, *plan);
  EXPECT_TRUE(executor.has_value()) << executor.status().to_string();
  auto outputs = (*executor)->run(inputs);
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  return std::move(*outputs);
}

std::vector<Tensor> random_inputs(const ir::Graph& graph) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<Tensor> inputs;
  for (ir::ValueId id : graph.inputs) {
    Tensor t = *Tensor::allocate(DType::kFloat32, graph.value(id).shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    inputs.push_back(t);
  }
  return inputs;
}

void expect_close(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t o = 0; o < a.size(); ++o) {
    ASSERT_EQ(a[o].shape(), b[o].shape());
    for (int64_t i = 0; i < a[o].numel(); ++i)
      EXPECT_NEAR(a[o].data<float>()[i], b[o].data<float>()[i], 1e-4f * (1 + std::abs(a[o].data<float>()[i])));
  }
}

TEST(Passes, TinyCnnFoldsAndFusesAndStillMatches) {
  ir::Graph original = load("tiny_cnn", 3);
  ir::Graph rewritten = load("tiny_cnn", 3);
  ASSERT_EQ(count_ops(original, OpKind::kBatchNormalization), 1);
  ASSERT_EQ(count_ops(original, OpKind::kRelu), 2);
  auto stats = run_inference_passes(rewritten);
  ASSERT_TRUE(stats.has_value()) << stats.status().to_string();
  EXPECT_EQ(stats->batch_norms_folded, 1);
  EXPECT_EQ(stats->activations_fused, 2);
  EXPECT_EQ(count_ops(rewritten, OpKind::kBatchNormalization), 0);
  EXPECT_EQ(count_ops(rewritten, OpKind::kRelu), 0);
  for (const ir::Node& node : rewritten.nodes) {
    if (node.op == OpKind::kConv) {
      EXPECT_EQ(node.attrs.get_string(ir::kFusedActivationAttr), "Relu") << node.name;
    }
  }
  EXPECT_EQ(rewritten.nodes.size(), original.nodes.size() - 3);
  const auto inputs = random_inputs(original);
  expect_close(run(original, inputs), run(rewritten, inputs));
}

TEST(Passes, ResidualBlockMatches) {
  ir::Graph original = load("tiny_residual", 2);
  ir::Graph rewritten = load("tiny_residual", 2);
  auto stats = run_inference_passes(rewritten);
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->activations_fused, 2);  // Conv → Relu and the residual Add → Relu
  EXPECT_EQ(stats->residuals_fused, 1);    // then the second Conv absorbs the Add (input z = the skip)
  EXPECT_EQ(count_ops(rewritten, OpKind::kRelu), 0);
  EXPECT_EQ(count_ops(rewritten, OpKind::kAdd), 0);
  ASSERT_EQ(rewritten.nodes.size(), 2u);
  const ir::Node& second = rewritten.nodes[1];
  EXPECT_EQ(second.op, OpKind::kConv);
  ASSERT_EQ(second.inputs.size(), 4u);
  EXPECT_EQ(second.inputs[3], rewritten.inputs[0]);  // z: the block's input
  EXPECT_EQ(second.attrs.get_string(ir::kFusedActivationAttr), "Relu");
  EXPECT_EQ(second.outputs[0], rewritten.outputs[0]);
  const auto inputs = random_inputs(original);
  expect_close(run(original, inputs), run(rewritten, inputs));
}

// x → Conv → (Relu, and also a graph output): the Conv's output is read twice,
// so neither folding nor fusion may swallow it. Identity feeding an output stays.
TEST(Passes, DoNotApplyWhenConvOutputIsShared) {
  ir::Graph g;
  const ir::ValueId x = g.add_value({"x", DType::kFloat32, {1, 2, 3, 3}, std::nullopt, -1});
  std::vector<float> ones(2 * 2, 0.5f);
  const ir::ValueId w = g.add_value({"w", DType::kFloat32, {2, 2, 1, 1}, Tensor::from_floats({2, 2, 1, 1}, ones), -1});
  const ir::ValueId c = g.add_value({"c", DType::kFloat32, {1, 2, 3, 3}, std::nullopt, 0});
  const ir::ValueId r = g.add_value({"r", DType::kFloat32, {1, 2, 3, 3}, std::nullopt, 1});
  const ir::ValueId i = g.add_value({"i", DType::kFloat32, {1, 2, 3, 3}, std::nullopt, 2});
  g.inputs = {x};
  ir::Node conv{"conv", OpKind::kConv, 13, {x, w}, {c}, {}};
  conv.attrs.set("group", int64_t{1});
  conv.attrs.set("auto_pad", std::string("NOTSET"));
  g.nodes.push_back(conv);
  g.nodes.push_back({"relu", OpKind::kRelu, 13, {c}, {r}, {}});
  g.nodes.push_back({"identity", OpKind::kIdentity, 13, {r}, {i}, {}});
  g.outputs = {c, i};
  ASSERT_TRUE(g.validate().is_ok());
  auto stats = run_inference_passes(g);
  ASSERT_TRUE(stats.has_value()) << stats.status().to_string();
  EXPECT_EQ(stats->activations_fused, 0);
  EXPECT_EQ(stats->identities_removed, 0);
  EXPECT_EQ(g.nodes.size(), 3u);
}

// ---- convert_to_channels_last (Note [channels-last], runtime/ir/layout.h) ----
// The CPU backend runs NCHW only, so these check structure here; the CUDA
// tests (tests/cuda_ops_test.cc) check that NHWC sessions compute the same.

ir::Graph channels_last(const std::string& name, PassStats* stats) {
  ir::Graph g = load(name, 2);
  EXPECT_TRUE(run_inference_passes(g).has_value());
  EXPECT_TRUE(convert_to_channels_last(g, stats).is_ok());
  return g;
}

int count_channels_last(const ir::Graph& g) {
  int n = 0;
  for (const ir::Node& node : g.nodes) n += ir::is_channels_last(node);
  return n;
}

TEST(ChannelsLast, TinyCnnTransposesOnlyTheInput) {
  ir::Graph nchw = load("tiny_cnn", 2);
  ASSERT_TRUE(run_inference_passes(nchw).has_value());
  PassStats stats;
  ir::Graph g = channels_last("tiny_cnn", &stats);
  // Conv, MaxPool, Conv, GlobalAveragePool run NHWC; Flatten reads the [N, 1, 1, C]
  // pooled value as it is, so the input's Transpose is the only one.
  EXPECT_EQ(stats.channels_last_nodes, 4);
  EXPECT_EQ(stats.layout_transposes, 1);
  EXPECT_EQ(count_channels_last(g), 4);
  EXPECT_EQ(count_ops(g, OpKind::kTranspose), 1);
  EXPECT_EQ(g.nodes.front().op, OpKind::kTranspose);
  EXPECT_EQ(g.nodes.front().attrs.get_ints("perm"), ir::kNchwToNhwcPerm);
  EXPECT_STREQ(ir::graph_layout_name(g), "nhwc");
  EXPECT_STREQ(ir::graph_layout_name(nchw), "nchw");
  // The model's interface is unchanged.
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.value(g.inputs[0]).name, nchw.value(nchw.inputs[0]).name);
  EXPECT_EQ(g.value(g.inputs[0]).shape, nchw.value(nchw.inputs[0]).shape);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.value(g.outputs[0]).name, nchw.value(nchw.outputs[0]).name);
  EXPECT_EQ(g.value(g.outputs[0]).shape, nchw.value(nchw.outputs[0]).shape);

  // The first Conv's weight is the NCHW one, transposed to [K, R, S, C].
  const ir::Node* conv_nchw = nullptr;
  const ir::Node* conv_nhwc = nullptr;
  for (const ir::Node& node : nchw.nodes)
    if (node.op == OpKind::kConv && !conv_nchw) conv_nchw = &node;
  for (const ir::Node& node : g.nodes)
    if (node.op == OpKind::kConv && !conv_nhwc) conv_nhwc = &node;
  ASSERT_TRUE(conv_nchw && conv_nhwc);
  const Tensor& w = *nchw.value(conv_nchw->inputs[1]).constant;
  const Tensor& w_t = *g.value(conv_nhwc->inputs[1]).constant;
  const Shape& ws = w.shape();  // [K, C, R, S]
  ASSERT_EQ(w_t.shape(), ir::nchw_to_nhwc(ws));
  for (int64_t k = 0; k < ws[0]; ++k)
    for (int64_t c = 0; c < ws[1]; ++c)
      for (int64_t r = 0; r < ws[2]; ++r)
        for (int64_t s = 0; s < ws[3]; ++s)
          ASSERT_EQ(w.data<float>()[((k * ws[1] + c) * ws[2] + r) * ws[3] + s],
                    w_t.data<float>()[((k * ws[2] + r) * ws[3] + s) * ws[1] + c]);
  // Activations between the convolutions carry NHWC shapes.
  const Shape& x = nchw.value(conv_nchw->inputs[0]).shape;
  EXPECT_EQ(g.value(conv_nhwc->inputs[0]).shape, ir::nchw_to_nhwc(x));
}

TEST(ChannelsLast, ResidualAddRunsNhwcAndTheOutputIsTransposedBack) {
  PassStats stats;
  ir::Graph g = channels_last("tiny_residual", &stats);
  EXPECT_EQ(count_ops(g, OpKind::kTranspose), 2);  // the input in, the output out
  // The second Conv carries the residual join (fuse_conv_add): its z is the NHWC input.
  const ir::Node& joined = g.nodes[g.nodes.size() - 2];
  ASSERT_EQ(joined.inputs.size(), 4u);
  EXPECT_TRUE(ir::is_channels_last(joined));
  EXPECT_EQ(g.value(joined.inputs[3]).shape, ir::nchw_to_nhwc(g.value(g.inputs[0]).shape));
  EXPECT_EQ(g.value(joined.inputs[3]).producer, 0);  // the input's Transpose
  EXPECT_EQ(g.nodes.back().op, OpKind::kTranspose);
  EXPECT_EQ(g.nodes.back().attrs.get_ints("perm"), ir::kNhwcToNchwPerm);
  EXPECT_EQ(g.nodes.back().outputs[0], g.outputs[0]);
}

TEST(ChannelsLast, ConcatAxisFollowsTheChannels) {
  PassStats stats;
  ir::Graph g = channels_last("tiny_branches", &stats);
  int concats = 0;
  for (const ir::Node& node : g.nodes) {
    if (node.op != OpKind::kConcat) continue;
    ++concats;
    EXPECT_EQ(node.attrs.get_int("axis"), 3);  // NCHW's axis 1
    for (ir::ValueId id : node.inputs) EXPECT_EQ(g.value(id).shape.size(), 4u);
  }
  EXPECT_EQ(concats, 1);
  // The AveragePool runs NHWC; its output (H, W > 1) goes back to NCHW before Flatten.
  EXPECT_EQ(count_ops(g, OpKind::kTranspose), 2);
  for (const ir::Node& node : g.nodes) {
    if (node.op != OpKind::kFlatten) continue;
    const ir::NodeId producer = g.value(node.inputs[0]).producer;
    ASSERT_GE(producer, 0);
    EXPECT_EQ(g.nodes[producer].op, OpKind::kTranspose);
    EXPECT_EQ(g.nodes[producer].attrs.get_ints("perm"), ir::kNhwcToNchwPerm);
  }
}

TEST(ChannelsLast, CpuRefusesChannelsLastNodesClearly) {
  PassStats stats;
  ir::Graph g = channels_last("tiny_cnn", &stats);
  auto plan = runtime::make_cpu_plan(g);
  ASSERT_TRUE(plan.has_value());
  auto executor = runtime::CpuExecutor::create(g, *plan);
  ASSERT_FALSE(executor.has_value());
  EXPECT_NE(executor.status().message().find("CUDA layout"), std::string::npos) << executor.status().to_string();
}

}  // namespace
}  // namespace ucudnn::optimizer
