// Channels-last training (Note [channels-last in training], optimizer/passes/channels_last.cc):
//   - the pass on tiny_cnn's training graph: every convolution (each direction), batch norm and pool,
//     forward and backward, runs channels-last with NHWC/KRSC shapes and shape attributes; the only
//     Transposes are those of the graph's inputs (the batch, the weights), of the Flatten's gradient
//     [N, C, 1, 1] and of the weights' gradients back to KCRS; the bias gradient's ReduceSum reads dY
//     as it is; the graph keeps its interface;
//   - the convolution keys of the three directions in NHWC: the NCHW graph's keys but for the layout;
//   - what stays NCHW: an inference graph's ConvTranspose (a ConvGradData with a constant weight), the
//     backward of a Conv kept NCHW (Note [layout regions]), a reduction that would reorder its kept dims;
//     and the layout-free training ops (DropoutTrain, ActivationGrad with Clip's bounds);
//   - on the GPU (skipped without one): a training step of tiny_cnn and of a residual CNN (asymmetric
//     pads, a grouped Conv, max and average pools, BatchNorm with its Relu and residual) computes in
//     NHWC what it computes in NCHW, and the Trainer with SessionOptions::layout kNhwc trains as with
//     kNchw and as PyTorch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "onnx_import/onnx_import.h"
#include "optimizer/conv_kernels.h"
#include "optimizer/passes/passes.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/op_descriptor.h"
#include "tests/support/backend_runner.h"
#include "tests/support/graph_builder.h"
#include "tests/support/pass_test_helpers.h"
#include "tests/support/tensor_checks.h"
#include "tests/test_paths.h"
#include "training/training_graph.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::optimizer {
namespace {

using ucudnn_test::BackendConfig;
using ucudnn_test::GraphBuilder;
using ucudnn_test::random_tensor;
using ucudnn_test::SharedBackend;
using ucudnn_test::Tolerance;

// The ops that run channels-last kernels in a training graph (Note [channels-last in training]).
bool is_layout_sensitive(OpKind op) {
  switch (op) {
    case OpKind::kConv: case OpKind::kConvGradData: case OpKind::kConvGradFilter: case OpKind::kBatchNormTrain:
    case OpKind::kBatchNormGrad: case OpKind::kMaxPool: case OpKind::kMaxPoolGrad: case OpKind::kAveragePool:
    case OpKind::kAveragePoolGrad: case OpKind::kGlobalAveragePool:
      return true;
    default:
      return false;
  }
}

Expected<training::TrainingGraph> tiny_cnn_training_graph(ir::Graph* inference) {
  onnx_import::ImportOptions import;
  import.batch = 8;
  const std::string path = ucudnn_test::source_dir() + "/models/tiny/tiny_cnn/model.onnx";
  UCUDNN_ASSIGN_OR_RETURN(*inference, onnx_import::load_model(path, import));
  return training::build_training_graph(*inference, {});
}

// The converted graph; a failed pass fails the test.
ir::Graph channels_last(const ir::Graph& graph, PassStats* stats) {
  ir::Graph converted = graph;
  const Status status = convert_to_channels_last(converted, stats);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return converted;
}

const ir::Node* find_node(const ir::Graph& graph, const std::string& name) {
  for (const ir::Node& node : graph.nodes)
    if (node.name == name) return &node;
  return nullptr;
}

// `shape` as a layout-sensitive node of the converted graph must hold the NCHW graph's `nchw`.
Shape expected_nhwc(const Shape& nchw) { return nchw.size() == 4 ? ir::nchw_to_nhwc(nchw) : nchw; }

// Per convolution node name: its kernel (key and shapes) in `graph`.
std::map<std::string, ConvKernel> kernels_by_node(const ir::Graph& graph) {
  std::map<std::string, ConvKernel> by_node;
  auto kernels = collect_conv_kernels(graph, ConvKernelKey{});
  EXPECT_TRUE(kernels.has_value()) << kernels.status().to_string();
  if (!kernels) return by_node;
  for (const ConvKernel& kernel : *kernels)
    for (ir::NodeId id : kernel.nodes) by_node[graph.nodes[id].name] = kernel;
  return by_node;
}

// The NHWC graph's convolution kernels are the NCHW graph's, node for node: the key's parameters
// (NCHW's, Note [channels-last]) and direction equal, its layout "nhwc", its shapes NHWC/KRSC.
void expect_same_kernels_in_nhwc(const ir::Graph& nchw, const ir::Graph& nhwc) {
  const std::map<std::string, ConvKernel> want = kernels_by_node(nchw), got = kernels_by_node(nhwc);
  EXPECT_FALSE(want.empty());
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, kernel] : got) {
    SCOPED_TRACE(name);
    ASSERT_EQ(want.count(name), 1u);
    const ConvKernel& reference = want.at(name);
    EXPECT_EQ(kernel.key.layout, "nhwc");
    ConvKernelKey as_nchw = kernel.key;
    as_nchw.layout = "nchw";
    EXPECT_EQ(as_nchw.to_string(), reference.key.to_string());
    EXPECT_EQ(kernel.x_shape, ir::nchw_to_nhwc(reference.x_shape));
    EXPECT_EQ(kernel.w_shape, ir::nchw_to_nhwc(reference.w_shape));
    EXPECT_EQ(kernel.y_shape, ir::nchw_to_nhwc(reference.y_shape));
  }
}

// ---- the pass on tiny_cnn's training graph ----

TEST(ChannelsLastTraining, TinyCnnRunsEveryKernelChannelsLast) {
  ir::Graph inference;
  auto training = tiny_cnn_training_graph(&inference);
  ASSERT_TRUE(training.has_value()) << training.status().to_string();
  const ir::Graph& nchw = training->graph;
  PassStats stats;
  const ir::Graph graph = channels_last(nchw, &stats);
  ASSERT_TRUE(graph.validate().is_ok());

  // The interface stays: inputs and outputs of the same names and NCHW shapes, in order.
  ASSERT_EQ(graph.inputs.size(), nchw.inputs.size());
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    EXPECT_EQ(graph.value(graph.inputs[i]).name, nchw.value(nchw.inputs[i]).name);
    EXPECT_EQ(graph.value(graph.inputs[i]).shape, nchw.value(nchw.inputs[i]).shape);
  }
  ASSERT_EQ(graph.outputs.size(), nchw.outputs.size());
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    EXPECT_EQ(graph.value(graph.outputs[i]).name, nchw.value(nchw.outputs[i]).name) << "output " << i;
    EXPECT_EQ(graph.value(graph.outputs[i]).shape, nchw.value(nchw.outputs[i]).shape) << "output " << i;
  }

  // Every layout-sensitive node runs channels-last, its 4-D operands and shape attributes NHWC (a
  // weight and its gradient KRSC), BatchNorm's per-channel ones as they were.
  std::map<OpKind, int> sensitive;
  for (const ir::Node& node : graph.nodes) {
    if (!is_layout_sensitive(node.op)) {
      EXPECT_FALSE(ir::is_channels_last(node)) << node.describe();
      continue;
    }
    SCOPED_TRACE(node.describe());
    ++sensitive[node.op];
    EXPECT_TRUE(ir::is_channels_last(node));
    const ir::Node* before = find_node(nchw, node.name);
    ASSERT_NE(before, nullptr);
    ASSERT_EQ(node.inputs.size(), before->inputs.size());
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] == ir::kNoValue) continue;
      EXPECT_EQ(graph.value(node.inputs[i]).shape, expected_nhwc(nchw.value(before->inputs[i]).shape)) << "input " << i;
    }
    ASSERT_EQ(node.outputs.size(), before->outputs.size());
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == ir::kNoValue) continue;
      EXPECT_EQ(graph.value(node.outputs[i]).shape, expected_nhwc(nchw.value(before->outputs[i]).shape))
          << "output " << i;
    }
    for (const char* name : {"input_shape", "filter_shape"}) {
      if (!before->attrs.has(name)) continue;
      ASSERT_TRUE(node.attrs.has(name)) << name;
      EXPECT_EQ(node.attrs.get_ints(name), ir::nchw_to_nhwc(before->attrs.get_ints(name))) << name;
    }
  }
  EXPECT_EQ(sensitive[OpKind::kConv], 2);
  EXPECT_EQ(sensitive[OpKind::kConvGradFilter], 2);  // both weights are parameters
  EXPECT_EQ(sensitive[OpKind::kConvGradData], 1);    // the second Conv's X needs its gradient
  for (OpKind op : {OpKind::kBatchNormTrain, OpKind::kBatchNormGrad, OpKind::kMaxPool, OpKind::kMaxPoolGrad,
                    OpKind::kGlobalAveragePool, OpKind::kAveragePoolGrad})
    EXPECT_EQ(sensitive[op], 1) << op_name(op);

  // Transposes: to NHWC only the graph's inputs (the batch, w1, w2) and the Flatten's gradient
  // [N, 8, 1, 1] (a Reshape's output: Note [cheap NHWC inputs]); to NCHW only the weights' gradients,
  // graph outputs. None between two NHWC nodes.
  const std::set<ir::ValueId> inputs(graph.inputs.begin(), graph.inputs.end());
  const std::set<ir::ValueId> outputs(graph.outputs.begin(), graph.outputs.end());
  int to_nhwc = 0, from_inputs = 0, to_nchw = 0;
  for (const ir::Node& node : graph.nodes) {
    if (node.op != OpKind::kTranspose) continue;
    SCOPED_TRACE(node.describe());
    const std::vector<int64_t>& perm = node.attrs.get_ints("perm");
    const ir::Value& in = graph.value(node.inputs[0]);
    if (perm == ir::kNchwToNhwcPerm) {
      ++to_nhwc;
      if (inputs.count(node.inputs[0])) {
        ++from_inputs;
        continue;
      }
      ASSERT_GE(in.producer, 0);
      EXPECT_EQ(graph.nodes[in.producer].op, OpKind::kReshape);
      EXPECT_EQ(in.shape, (Shape{8, 8, 1, 1}));
    } else {
      EXPECT_EQ(perm, ir::kNhwcToNchwPerm);
      ++to_nchw;
      EXPECT_EQ(outputs.count(node.outputs[0]), 1u) << "an NCHW twin that is no graph output";
      ASSERT_GE(in.producer, 0);
      EXPECT_EQ(graph.nodes[in.producer].op, OpKind::kConvGradFilter);
    }
  }
  EXPECT_EQ(from_inputs, 3);
  EXPECT_EQ(to_nhwc, 4);
  EXPECT_EQ(to_nchw, 2);
  EXPECT_EQ(stats.layout_transposes, 6);

  // The second Conv's bias gradient sums dY [N, H, W, C] over its axes 0, 1, 2 — dY as it is.
  int bias_sums = 0;
  for (const ir::Node& node : graph.nodes) {
    if (node.op != OpKind::kReduceSum || graph.value(node.inputs[0]).shape.size() != 4) continue;
    ++bias_sums;
    const ir::Value& dy = graph.value(node.inputs[0]);
    ASSERT_GE(dy.producer, 0);
    EXPECT_NE(graph.nodes[dy.producer].op, OpKind::kTranspose);
    EXPECT_EQ(dy.shape, (Shape{8, 4, 4, 8}));
    auto axes = graph.value(node.inputs[1]).constant->to_int64_vector();
    ASSERT_TRUE(axes.has_value());
    EXPECT_EQ(*axes, (std::vector<int64_t>{0, 1, 2}));
    EXPECT_EQ(graph.value(node.outputs[0]).shape, (Shape{8}));
  }
  EXPECT_EQ(bias_sums, 1);

  expect_same_kernels_in_nhwc(nchw, graph);
}

// ---- the three directions' keys ----

// A Conv with asymmetric pads and its backward calls, its weight a graph input (a parameter):
//   y = Conv(x [4, 3, 8, 8], w [6, 3, 3, 3], pads (1, 1, 0, 0))  → [4, 6, 7, 7]
//   dy = Relu(y) (standing in for the gradient arriving at y)
//   dx = ConvGradData(dy, w), dw = ConvGradFilter(x, dy)
ir::Graph conv_directions_graph() {
  ir::Attributes attrs;
  attrs.set("auto_pad", std::string("NOTSET"));
  attrs.set("dilations", std::vector<int64_t>{1, 1});
  attrs.set("group", int64_t{1});
  attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  attrs.set("pads", std::vector<int64_t>{1, 1, 0, 0});
  attrs.set("strides", std::vector<int64_t>{1, 1});
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {4, 3, 8, 8});
  const ir::ValueId w = b.input("w", {6, 3, 3, 3});
  const ir::ValueId y = b.node(OpKind::kConv, {x, w}, {{4, 6, 7, 7}}, attrs)[0];
  const ir::ValueId dy = b.relu(y);
  ir::Attributes data = attrs, filter = attrs;
  data.set("input_shape", std::vector<int64_t>{4, 3, 8, 8});
  filter.set("filter_shape", std::vector<int64_t>{6, 3, 3, 3});
  b.output(y, "y");
  b.output(b.node(OpKind::kConvGradData, {dy, w}, {{4, 3, 8, 8}}, data)[0], "dx");
  b.output(b.node(OpKind::kConvGradFilter, {x, dy}, {{6, 3, 3, 3}}, filter)[0], "dw");
  return b.finish();
}

TEST(ChannelsLastTraining, KeysOfEveryDirectionAreTheNchwOnesInLayoutNhwc) {
  const ir::Graph nchw = conv_directions_graph();
  PassStats stats;
  const ir::Graph graph = channels_last(nchw, &stats);
  int convolutions = 0, weight_twins = 0;
  for (const ir::Node& node : graph.nodes) {
    if (ir::is_convolution(node)) {
      ++convolutions;
      EXPECT_TRUE(ir::is_channels_last(node)) << node.describe();
    }
    if (node.op == OpKind::kTranspose && graph.value(node.inputs[0]).name == "w") ++weight_twins;
  }
  EXPECT_EQ(convolutions, 3);
  EXPECT_EQ(weight_twins, 1) << "the Conv and its ConvGradData share the weight's NHWC twin";
  EXPECT_EQ(stats.layout_transposes, 5);  // x, w; y, dx, dw back to NCHW at the outputs
  expect_same_kernels_in_nhwc(nchw, graph);

  auto kernels = collect_conv_kernels(graph, ConvKernelKey{});
  ASSERT_TRUE(kernels.has_value()) << kernels.status().to_string();
  ASSERT_EQ(kernels->size(), 3u);
  std::set<ConvDirection> directions;
  for (const ConvKernel& kernel : *kernels) {
    directions.insert(kernel.direction());
    EXPECT_EQ(kernel.key.pad_h, 1);
    EXPECT_EQ(kernel.key.pad_h_end, 0);  // the asymmetric pads survive the layout
    EXPECT_EQ(kernel.key.c, 3);
    EXPECT_EQ(kernel.key.k, 6);
  }
  EXPECT_EQ(directions.size(), 3u);
}

// Note [cheap NHWC inputs]: with the Conv kept NCHW (a layout region), its backward calls read NCHW
// values without NHWC twins and stay NCHW too.
TEST(ChannelsLastTraining, TheBackwardOfAConvKeptNchwStaysNchw) {
  const ir::Graph nchw = conv_directions_graph();
  ir::Graph graph = nchw;
  const std::string conv = nchw.nodes[0].name;
  ASSERT_EQ(nchw.nodes[0].op, OpKind::kConv);
  PassStats stats;
  ASSERT_TRUE(convert_to_channels_last_except(graph, &stats, {conv}).is_ok());
  EXPECT_EQ(stats.channels_last_nodes, 0);
  EXPECT_EQ(stats.layout_transposes, 0);
  for (const ir::Node& node : graph.nodes) EXPECT_FALSE(ir::is_channels_last(node)) << node.describe();
}

// ---- what stays NCHW, what is layout-free ----

// An inference graph's ConvTranspose is a ConvGradData with a constant weight: it stays NCHW (the CPU's
// backward convolutions run NCHW only), reading the NCHW twin of the Conv before it.
TEST(ChannelsLastTraining, AConvTransposeOfAnInferenceGraphStaysNchw) {
  GraphBuilder b;
  const ir::ValueId y = b.conv(b.input("x", {2, 3, 5, 5}), b.constant("w1", random_tensor({4, 3, 1, 1}, 1)),
                               ir::kNoValue);
  ir::Attributes attrs;
  attrs.set("group", int64_t{1});
  attrs.set("kernel_shape", std::vector<int64_t>{2, 2});
  attrs.set("strides", std::vector<int64_t>{2, 2});
  attrs.set("pads", std::vector<int64_t>{0, 0, 0, 0});
  attrs.set("input_shape", std::vector<int64_t>{2, 2, 10, 10});
  b.output(b.node(OpKind::kConvGradData, {y, b.constant("w2", random_tensor({4, 2, 2, 2}, 2))}, {{2, 2, 10, 10}},
                  attrs)[0],
           "z");
  PassStats stats;
  const ir::Graph graph = channels_last(b.finish(), &stats);
  int transposed_reads = 0;
  for (const ir::Node& node : graph.nodes) {
    if (node.op == OpKind::kConv) {
      EXPECT_TRUE(ir::is_channels_last(node));
    }
    if (node.op != OpKind::kConvGradData) continue;
    EXPECT_FALSE(ir::is_channels_last(node));
    EXPECT_EQ(node.attrs.get_ints("input_shape"), (std::vector<int64_t>{2, 2, 10, 10}));
    const ir::Value& dy = graph.value(node.inputs[0]);
    ASSERT_GE(dy.producer, 0);
    transposed_reads += graph.nodes[dy.producer].op == OpKind::kTranspose;
  }
  EXPECT_EQ(transposed_reads, 1);
}

// Reductions of an NHWC value: with their axes moved when the result is the same (keepdims, or the kept
// dims in one order in both layouts), else of its NCHW twin. On the CPU (with oneDNN, which runs the
// NHWC Conv) both graphs compute the same.
TEST(ChannelsLastTraining, ReductionsMoveTheirAxesWhereTheResultIsTheSame) {
  auto reduce = [](GraphBuilder& b, OpKind op, ir::ValueId x, std::vector<int64_t> axes, int64_t keepdims,
                   const Shape& out) {
    ir::Attributes attrs;
    attrs.set("keepdims", keepdims);
    attrs.set("noop_with_empty_axes", int64_t{0});
    const ir::ValueId a =
        b.constant("axes" + std::to_string(b.graph().values.size()),
                   Tensor::from_int64s({static_cast<int64_t>(axes.size())}, axes));
    return b.node(op, {x, a}, {out}, attrs)[0];
  };
  GraphBuilder b;
  const ir::ValueId y = b.conv(b.input("x", {2, 3, 5, 5}), b.constant("w", random_tensor({4, 3, 1, 1}, 1)),
                               ir::kNoValue);
  b.output(reduce(b, OpKind::kReduceSum, y, {0}, 0, {4, 5, 5}), "channels_then_pixels");   // twin: C before H, W
  b.output(reduce(b, OpKind::kReduceSum, y, {-2, -1}, 1, {2, 4, 1, 1}), "per_channel");    // axes 1, 2; NHWC out
  b.output(reduce(b, OpKind::kReduceMean, y, {1}, 0, {2, 5, 5}), "over_channels");          // axis 3
  b.output(reduce(b, OpKind::kReduceSum, y, {0, 2, 3}, 0, {4}), "bias_gradient");          // axes 0, 1, 2
  const ir::Graph nchw = b.finish();
  PassStats stats;
  const ir::Graph graph = channels_last(nchw, &stats);

  const std::map<std::string, std::vector<int64_t>> moved = {
      {"per_channel", {1, 2}}, {"over_channels", {3}}, {"bias_gradient", {0, 1, 2}}};
  int read_as_is = 0, read_twin = 0;
  for (const ir::Node& node : graph.nodes) {
    if (node.op != OpKind::kReduceSum && node.op != OpKind::kReduceMean) continue;
    const ir::Value& x = graph.value(node.inputs[0]);
    ASSERT_GE(x.producer, 0);
    const bool twin = graph.nodes[x.producer].op == OpKind::kTranspose;
    auto axes = graph.value(node.inputs[1]).constant->to_int64_vector();
    ASSERT_TRUE(axes.has_value());
    // Output 0's NCHW name: an NHWC output is renamed, its twin takes the name back.
    std::string name = graph.value(node.outputs[0]).name;
    if (name.size() > 5 && name.ends_with(".nhwc")) name.resize(name.size() - 5);
    SCOPED_TRACE(name);
    if (name == "channels_then_pixels") {
      ++read_twin;
      EXPECT_TRUE(twin);
      EXPECT_EQ(*axes, (std::vector<int64_t>{0}));
    } else {
      ++read_as_is;
      EXPECT_FALSE(twin);
      ASSERT_EQ(moved.count(name), 1u);
      EXPECT_EQ(*axes, moved.at(name));
    }
  }
  EXPECT_EQ(read_twin, 1);
  EXPECT_EQ(read_as_is, 3);
  EXPECT_EQ(stats.layout_transposes, 3);  // x in; y's twin for the first sum; per_channel's [2, 1, 1, 4] out

  if (!cpu::cpu_runs_channels_last()) GTEST_SKIP() << "this build has no oneDNN: the CPU runs no NHWC Conv";
  expect_same_outputs(nchw, graph);
}

// DropoutTrain (its seed a single element) and ActivationGrad (with Clip's scalar bounds) run on NHWC
// operands as they are.
TEST(ChannelsLastTraining, DropoutTrainAndActivationGradAreLayoutFree) {
  GraphBuilder b;
  const ir::ValueId y = b.conv(b.input("x", {2, 3, 5, 5}), b.constant("w", random_tensor({4, 3, 1, 1}, 1)),
                               ir::kNoValue);
  const ir::ValueId seed = b.input("seed", {1}, DType::kInt64);
  ir::Attributes dropout;
  dropout.set("ratio", 0.5f);
  const std::vector<ir::ValueId> kept = b.node(OpKind::kDropoutTrain, {y, seed}, {{2, 4, 5, 5}, {2, 4, 5, 5}}, dropout);
  ir::Attributes clip;
  clip.set("activation", std::string("Clip"));
  const ir::ValueId low = b.constant("low", Tensor::from_floats({}, std::vector<float>{-0.5f}));
  const ir::ValueId high = b.constant("high", Tensor::from_floats({}, std::vector<float>{0.5f}));
  b.output(b.node(OpKind::kActivationGrad, {kept[0], y, low, high}, {{2, 4, 5, 5}}, clip)[0], "dx");
  b.output(kept[1], "mask");
  PassStats stats;
  const ir::Graph graph = channels_last(b.finish(), &stats);
  EXPECT_EQ(stats.channels_last_nodes, 3);  // Conv, DropoutTrain, ActivationGrad
  EXPECT_EQ(stats.layout_transposes, 3);    // x in; dx and mask out
  for (const ir::Node& node : graph.nodes) {
    if (node.op != OpKind::kDropoutTrain && node.op != OpKind::kActivationGrad) continue;
    for (size_t i = 0; i < 2; ++i) {
      const ir::Value& in = graph.value(node.inputs[i]);
      if (in.shape.size() != 4) continue;
      EXPECT_EQ(in.shape, (Shape{2, 5, 5, 4})) << node.describe() << " input " << i;
      ASSERT_GE(in.producer, 0);
      EXPECT_NE(graph.nodes[in.producer].op, OpKind::kTranspose) << node.describe() << " input " << i;
    }
  }
}

// ---- on the GPU ----

// "" when a CUDA backend runs here (strict FP32), else why not; *backend set when it does.
std::string cuda_fp32_backend(runtime::Backend** backend) {
  for (const BackendConfig& config : ucudnn_test::backend_configs()) {
    if (config.kind != BackendConfig::Kind::kCuda || config.tf32) continue;
    const SharedBackend shared = ucudnn_test::shared_backend(config);
    if (!shared.skip_reason.empty()) return shared.skip_reason;
    if (!shared.error.is_ok()) return "the CUDA backend did not start: " + shared.error.to_string();
    *backend = shared.backend;
    return shared.backend != nullptr ? "" : "no CUDA backend";
  }
  return "this build has no CUDA backend";
}

// A small residual CNN as an imported inference graph, every kind of layout-sensitive node of a
// ResNet and then some: Conv (3x3, bias) → BN → Relu → MaxPool → Conv (2x2, pads 0 then 1: asymmetric)
// → BN, + the pool's output → Relu (BN with its residual) → grouped Conv (bias) → Relu → AveragePool →
// GlobalAveragePool → Flatten → Gemm: logits [4, 3].
ir::Graph residual_cnn() {
  GraphBuilder b;
  uint32_t seed = 300;
  auto weight = [&b, &seed](const std::string& name, const Shape& shape, float low = -0.5f, float high = 0.5f) {
    return b.constant(name, random_tensor(shape, seed++, low, high));
  };
  auto batch_norm = [&](const std::string& name, ir::ValueId x) {
    return b.batch_norm(x, weight(name + ".scale", {8}, 0.5f, 1.5f), weight(name + ".bias", {8}),
                        weight(name + ".mean", {8}), weight(name + ".var", {8}, 0.5f, 1.5f), 1e-5f);
  };
  auto conv = [&](ir::ValueId x, ir::ValueId w, ir::ValueId bias, int64_t kernel, std::vector<int64_t> pads,
                  int64_t group, const Shape& out) {
    ir::Attributes attrs;
    attrs.set("group", group);
    attrs.set("kernel_shape", std::vector<int64_t>{kernel, kernel});
    attrs.set("pads", std::move(pads));
    attrs.set("strides", std::vector<int64_t>{1, 1});
    std::vector<ir::ValueId> inputs = {x, w};
    if (bias != ir::kNoValue) inputs.push_back(bias);
    return b.node(OpKind::kConv, std::move(inputs), {out}, attrs)[0];
  };
  const ir::ValueId x = b.input("x", {4, 3, 8, 8});
  const ir::ValueId c1 = conv(x, weight("w1", {8, 3, 3, 3}), weight("b1", {8}), 3, {1, 1, 1, 1}, 1, {4, 8, 8, 8});
  const ir::ValueId m = b.max_pool(b.relu(batch_norm("bn1", c1)), 2, 2);  // [4, 8, 4, 4]
  const ir::ValueId c2 = conv(m, weight("w2", {8, 8, 2, 2}), ir::kNoValue, 2, {0, 0, 1, 1}, 1, {4, 8, 4, 4});
  const ir::ValueId s = b.relu(b.add(batch_norm("bn2", c2), m));
  const ir::ValueId c3 = conv(s, weight("w3", {8, 4, 3, 3}), weight("b3", {8}), 3, {1, 1, 1, 1}, 2, {4, 8, 4, 4});
  ir::Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.set("strides", std::vector<int64_t>{2, 2});
  const ir::ValueId p = b.node(OpKind::kAveragePool, {b.relu(c3)}, {{4, 8, 2, 2}}, pool)[0];
  const ir::ValueId f = b.flatten(b.global_average_pool(p));
  ir::Attributes gemm;
  gemm.set("transB", int64_t{1});
  b.output(b.node(OpKind::kGemm, {f, weight("fc.w", {3, 8}), weight("fc.b", {3})}, {{4, 3}}, gemm)[0], "logits");
  ir::Graph graph = b.finish();
  for (ir::Node& node : graph.nodes) fill_default_attributes(node);  // as the importer leaves them
  return graph;
}

// A training graph's inputs: the batch random, labels cycling through the classes, every parameter and
// running statistic as the inference graph's initializer of that name.
std::vector<Tensor> training_inputs(const ir::Graph& inference, const training::TrainingGraph& training) {
  const ir::Graph& graph = training.graph;
  const int64_t classes = graph.value(graph.outputs[training.logits_output]).shape.back();
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const ir::ValueId id = graph.inputs[i];
    const ir::Value& v = graph.value(id);
    if (i < training.model_inputs) {
      inputs.push_back(random_tensor(v.shape, 11 + static_cast<uint32_t>(i)));
    } else if (id == training.labels) {
      std::vector<double> labels;
      for (int64_t j = 0; j < v.shape[0]; ++j) labels.push_back(static_cast<double>((j * 2 + 1) % classes));
      inputs.push_back(ucudnn_test::tensor_of_values(DType::kInt64, v.shape, labels));
    } else {
      const ir::ValueId init = inference.find_value(v.name);
      EXPECT_NE(init, ir::kNoValue) << v.name;
      inputs.push_back(init == ir::kNoValue ? Tensor() : *inference.value(init).constant);
    }
  }
  return inputs;
}

// One training step in NHWC on the GPU (every backward convolution at cuDNN's default algorithm, ALGO_1)
// against the NCHW step: loss, logits, every gradient, every running statistic.
void expect_nhwc_step_equals_nchw(const ir::Graph& inference, const training::TrainingGraph& training) {
  runtime::Backend* backend = nullptr;
  if (const std::string why = cuda_fp32_backend(&backend); !why.empty()) GTEST_SKIP() << why;
  PassStats stats;
  const ir::Graph nhwc = channels_last(training.graph, &stats);
  EXPECT_GT(stats.channels_last_nodes, 0);
  const std::vector<Tensor> inputs = training_inputs(inference, training);
  auto want = ucudnn_test::run_on_backend(*backend, training.graph, inputs);
  ASSERT_TRUE(want.has_value()) << want.status().to_string();
  auto got = ucudnn_test::run_on_backend(*backend, nhwc, inputs);
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  // Strict FP32 both; cuDNN's NHWC algorithms and the NHWC reductions sum in other orders.
  ucudnn_test::expect_close(*got, *want, Tolerance{1e-4, 1e-3}, "NHWC vs NCHW training step");
}

TEST(ChannelsLastTrainingOnGpu, TinyCnnStepEqualsTheNchwStep) {
  ir::Graph inference;
  auto training = tiny_cnn_training_graph(&inference);
  ASSERT_TRUE(training.has_value()) << training.status().to_string();
  expect_nhwc_step_equals_nchw(inference, *training);
}

TEST(ChannelsLastTrainingOnGpu, ResidualCnnStepEqualsTheNchwStep) {
  const ir::Graph inference = residual_cnn();
  auto training = training::build_training_graph(inference, {});
  ASSERT_TRUE(training.has_value()) << training.status().to_string();
  // The residual block's BatchNorm took its Add and Relu (BatchNormTrain with Z): NHWC there too.
  int with_residual = 0;
  for (const ir::Node& node : training->graph.nodes)
    with_residual += node.op == OpKind::kBatchNormTrain && node.inputs.size() == 6;
  EXPECT_EQ(with_residual, 1);
  expect_nhwc_step_equals_nchw(inference, *training);
}

// The Trainer with SessionOptions::layout kNhwc: its plan runs NHWC, and a few steps train as kNchw's do
// (strict FP32), and as PyTorch's (tests/data/training; trainer_test.cc's tolerance on the GPU).
TEST(ChannelsLastTrainingOnGpu, TrainerInNhwcTrainsAsInNchwAndAsPyTorch) {
  runtime::Backend* backend = nullptr;
  if (const std::string why = cuda_fp32_backend(&backend); !why.empty()) GTEST_SKIP() << why;
  for (const char* name : {"tiny_bn_cnn_sgd", "tiny_two_bn_fresh"}) {
    SCOPED_TRACE(name);
    const std::string dir = ucudnn_test::source_dir() + "/tests/data/training/" + name;
    std::map<std::string, std::string> config;
    std::ifstream in(dir + "/config.txt");
    for (std::string line; std::getline(in, line);)
      if (const size_t eq = line.find('='); eq != std::string::npos) config[line.substr(0, eq)] = line.substr(eq + 1);
    ASSERT_FALSE(config.empty()) << "no " << dir << "/config.txt";
    ucudnn::TrainOptions options;
    options.session.device = ucudnn::Device::kCuda;
    options.session.math = ucudnn::Math::kFp32;
    options.session.batch = std::stoll(config["batch"]);
    options.session.progress = false;
    options.optimizer = config["optimizer"] == "adamw" ? ucudnn::Optimizer::kAdamW : ucudnn::Optimizer::kSgd;
    options.learning_rate = std::stod(config["lr"]);
    options.weight_decay = std::stod(config["weight_decay"]);
    if (options.optimizer == ucudnn::Optimizer::kSgd) options.momentum = std::stod(config["momentum"]);
    options.session.layout = ucudnn::Layout::kNchw;
    auto nchw = ucudnn::Trainer::load(dir + "/model.onnx", options);
    options.session.layout = ucudnn::Layout::kNhwc;
    auto nhwc = ucudnn::Trainer::load(dir + "/model.onnx", options);
    ASSERT_TRUE(nchw.has_value()) << nchw.status().to_string();
    ASSERT_TRUE(nhwc.has_value()) << nhwc.status().to_string();
    EXPECT_EQ(nlohmann::json::parse((*nhwc)->plan_json())["layout"], "nhwc");
    EXPECT_EQ(nlohmann::json::parse((*nchw)->plan_json())["layout"], "nchw");

    auto input = ucudnn::read_tensor_file(dir + "/input.npy");
    auto labels = ucudnn::read_tensor_file(dir + "/labels.npy");
    auto losses = ucudnn::read_tensor_file(dir + "/losses.npy");
    ASSERT_TRUE(input.has_value() && labels.has_value() && losses.has_value());
    for (int64_t s = 0; s < losses->numel(); ++s) {
      auto want = (*nchw)->step({*input}, *labels);
      auto got = (*nhwc)->step({*input}, *labels);
      ASSERT_TRUE(want.has_value()) << want.status().to_string();
      ASSERT_TRUE(got.has_value()) << got.status().to_string();
      EXPECT_NEAR(got->loss, want->loss, 1e-5 + 1e-4 * std::abs(want->loss)) << "step " << s + 1;
      const double torch = losses->data<float>()[s];
      EXPECT_NEAR(got->loss, torch, 1e-4 + 1e-3 * std::abs(torch)) << "step " << s + 1 << " against PyTorch";
    }
    auto want = (*nchw)->weights();
    auto got = (*nhwc)->weights();
    ASSERT_TRUE(want.has_value() && got.has_value());
    ASSERT_EQ(got->size(), want->size());
    for (const auto& [weight, tensor] : *got) {
      ucudnn_test::expect_close(tensor, want->at(weight), Tolerance{1e-4, 1e-3}, "'" + weight + "' NHWC vs NCHW");
      auto torch = ucudnn::read_tensor_file(dir + "/after/" + weight + ".npy");
      ASSERT_TRUE(torch.has_value()) << torch.status().to_string();
      ucudnn_test::expect_close(tensor, *torch, Tolerance{1e-4, 1e-3}, "'" + weight + "' NHWC vs PyTorch");
    }
  }
}

}  // namespace
}  // namespace ucudnn::optimizer
