// Tests of the inference passes: the structure they leave (golden counts on the
// tiny CNN and on hand-built graphs where a pass must NOT apply) and that the
// rewritten graph computes what the original computes.
#include <gtest/gtest.h>

#include <random>

#include "onnx_import/onnx_import.h"
#include "optimizer/passes/passes.h"
#include "runtime/executor/cpu_executor.h"
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
      EXPECT_EQ(node.attrs.get_string(kFusedActivationAttr), "Relu") << node.name;
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
  EXPECT_EQ(count_ops(rewritten, OpKind::kRelu), 0);
  for (const ir::Node& node : rewritten.nodes) {
    if (node.op == OpKind::kAdd) {
      EXPECT_EQ(node.attrs.get_string(kFusedActivationAttr), "Relu");
    }
  }
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

}  // namespace
}  // namespace ucudnn::optimizer
