// The backward convolutions on the CPU (runtime/cpu/conv_grad.h), beyond the op table:
//  - every algorithm of both directions (the GEMMs and, with oneDNN, its blocked and plain ones) on
//    every conv_grad case against the double reference, with exactly its workspace (filled with NaN),
//    and ConvGradFilter's accumulate (dW += ...);
//  - ConvGradFilter / ConvGradData run by the Executor as micro-batches (dW accumulated over the
//    calls) equal the undivided run and the reference, for every algorithm;
//  - Conv's gradient rule (runtime/ops/conv.cc) against central finite differences of the forward
//    Conv (support/gradient_check.h; explicit and auto_pad SAME pads, groups, 1-D, no bias), and
//    ConvTranspose's (ConvGradData's rule, runtime/ops/conv_grad.cc) likewise;
//  - on a GPU, every cuDNN backward algorithm (whole and micro-batched) against the reference;
//  - the shape rules' refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/bytes.h"
#include "runtime/cpu/conv_grad.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/onednn_conv.h"
#include "runtime/executor/executor.h"
#include "tests/op_cases.h"
#include "tests/reference/training_reference.h"
#include "tests/support/backend_runner.h"
#include "tests/support/gradient_check.h"
#include "tests/support/one_node_graph.h"
#include "tests/support/tensor_checks.h"

namespace ucudnn_test {
namespace {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Shape;
using ucudnn::StatusCode;
using ucudnn::Tensor;
using IntList = std::vector<int64_t>;
namespace cpu = ucudnn::cpu;
namespace ir = ucudnn::ir;
namespace runtime = ucudnn::runtime;

constexpr Tolerance kTolerance = {1e-4, 1e-4};

ucudnn::runtime::Backend& cpu_backend() {
  static const std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  return *backend;
}

Tensor filled(const Shape& shape, float value) {
  Tensor t = std::move(Tensor::allocate(DType::kFloat32, shape).value());
  std::fill(t.data<float>(), t.data<float>() + t.numel(), value);
  return t;
}

Tensor plus(const Tensor& t, float value) {
  Tensor sum = filled(t.shape(), value);
  for (int64_t i = 0; i < t.numel(); ++i) sum.data<float>()[i] += t.data<float>()[i];
  return sum;
}

OneNodeGraph build(const OpCase& c) {
  auto built = make_one_node_graph(c.name, c.op, c.opset, c.inputs, c.attrs, c.outputs, seed_for(c.name));
  EXPECT_TRUE(built.has_value()) << built.status().to_string();
  return built ? std::move(*built) : OneNodeGraph{};
}

// Runs the CPU kernel of `g`'s node with `algorithm` on exactly its workspace, into `dst`.
void run_kernel(const OneNodeGraph& g, int algorithm, bool accumulate, Tensor& dst) {
  const ir::Node& node = g.node();
  const std::vector<const Tensor*> src = g.node_inputs();
  auto problem = cpu::conv_grad_problem(node, {src[0]->shape(), src[1]->shape()});
  ASSERT_TRUE(problem.has_value()) << problem.status().to_string();
  const size_t bytes = cpu::conv_grad_workspace_bytes(node.op, *problem, algorithm);
  ASSERT_NE(bytes, std::numeric_limits<size_t>::max());
  std::vector<float> workspace(bytes / sizeof(float), std::numeric_limits<float>::quiet_NaN());
  const cpu::KernelArgs args{node,  src, {&dst}, workspace.empty() ? nullptr : workspace.data(), bytes, algorithm,
                             accumulate};
  const ucudnn::Status status = cpu::cpu_kernel(node.op).run(args);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
}

TEST(ConvGradCpu, EveryAlgorithmMatchesReference) {
  std::map<std::pair<OpKind, int>, int> runs;  // (direction, algorithm) → cases run
  for (const OpCase& c : conv_grad_cases()) {
    const OneNodeGraph g = build(c);
    auto want = ucudnn::reference::conv_grad_reference(g.node(), g.node_inputs());
    ASSERT_TRUE(want.has_value()) << want.status().to_string();
    auto problem = cpu::conv_grad_problem(g.node(), {g.node_inputs()[0]->shape(), g.node_inputs()[1]->shape()});
    ASSERT_TRUE(problem.has_value()) << problem.status().to_string();
    for (int a = 0; a < cpu::cpu_algorithm_count(c.op); ++a) {
      if (!cpu::conv_grad_algorithm_applies(c.op, *problem, a)) continue;
      ++runs[{c.op, a}];
      const std::string what = c.name + " with " + cpu::cpu_conv_grad_algorithm_name(a);
      Tensor got = filled(want->front().shape(), std::numeric_limits<float>::quiet_NaN());
      run_kernel(g, a, false, got);
      expect_close(got, want->front(), kTolerance, what);
      if (c.op != OpKind::kConvGradFilter) continue;
      Tensor accumulated = filled(want->front().shape(), 0.5f);
      run_kernel(g, a, true, accumulated);
      expect_close(accumulated, plus(want->front(), 0.5f), kTolerance, what + ", accumulating");
    }
  }
  // The GEMMs apply to most cases (1x1 to its own); oneDNN's, in a build with it, to every case but
  // those it has no primitive for (none here on AVX2 and AVX-512 CPUs).
  const int cases_per_direction = static_cast<int>(conv_grad_cases().size()) / 2;
  for (OpKind op : {OpKind::kConvGradData, OpKind::kConvGradFilter})
    for (int a = 0; a < cpu::cpu_algorithm_count(op); ++a) {
      const bool onednn = a == static_cast<int>(cpu::CpuConvGradAlgorithm::kOnednn) ||
                          a == static_cast<int>(cpu::CpuConvGradAlgorithm::kOnednnPlain);
      const int want = !onednn ? 3 : cpu::onednn::built_in() ? cases_per_direction : 0;
      EXPECT_GE((runs[{op, a}]), want) << ucudnn::op_name(op) << " " << cpu::cpu_conv_grad_algorithm_name(a);
      if (onednn && !cpu::onednn::built_in()) {
        EXPECT_EQ((runs[{op, a}]), 0) << cpu::cpu_conv_grad_algorithm_name(a);
      }
    }
}

// `g` run by the Executor on `backend` as `sizes` micro-batches, each with `algorithm`.
ucudnn::Expected<std::vector<Tensor>> run_micro_batches(runtime::Backend& backend, const OneNodeGraph& g,
                                                        const std::vector<int64_t>& sizes, int algorithm) {
  runtime::Plan plan = undivided_plan(backend, g.graph);
  runtime::PlanStep& step = plan.steps.front();
  size_t bytes = 0;
  int64_t begin = 0;
  for (int64_t size : sizes) {
    step.micro_batches.push_back({size, algorithm});
    const bool accumulate = begin > 0 && g.node().op == OpKind::kConvGradFilter;
    UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Kernel> kernel,
                            backend.prepare(runtime::kernel_request(g.graph, g.node(), size, algorithm, accumulate)));
    bytes = std::max(bytes, kernel->workspace_bytes());
    begin += size;
  }
  step.workspace_bytes = bytes;
  plan.workspace_pool_bytes = ucudnn::align_up(bytes);
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executor> executor,
                          runtime::Executor::create(backend, g.graph, std::move(plan)));
  return executor->run(g.feeds);
}

TEST(ConvGradCpu, MicroBatchesEqualUndivided) {
  int cases = 0;
  for (const OpCase& c : conv_grad_cases()) {
    if (c.micro_batches.empty()) continue;
    ++cases;
    const OneNodeGraph g = build(c);
    auto whole = run_on_backend(cpu_backend(), g.graph, g.feeds);
    ASSERT_TRUE(whole.has_value()) << whole.status().to_string();
    auto want = ucudnn::reference::conv_grad_reference(g.node(), g.node_inputs());
    ASSERT_TRUE(want.has_value()) << want.status().to_string();
    expect_close(*whole, *want, kTolerance, c.name + " undivided");
    auto problem = cpu::conv_grad_problem(g.node(), {g.node_inputs()[0]->shape(), g.node_inputs()[1]->shape()});
    ASSERT_TRUE(problem.has_value()) << problem.status().to_string();
    for (int a = -1; a < cpu::cpu_algorithm_count(c.op); ++a) {
      if (a >= 0 && !cpu::conv_grad_algorithm_applies(c.op, *problem, a)) continue;
      const std::string what = c.name + " as micro-batches with algorithm " + std::to_string(a);
      auto divided = run_micro_batches(cpu_backend(), g, c.micro_batches, a);
      ASSERT_TRUE(divided.has_value()) << what << ": " << divided.status().to_string();
      expect_close(*divided, *whole, {1e-5, 1e-5}, what + " vs undivided");
      expect_close(*divided, *want, kTolerance, what + " vs the reference");
    }
  }
  EXPECT_GE(cases, 4);
}

// On a GPU (skipped without one): every cuDNN backward algorithm on every case, whole and as the case's
// micro-batches. An algorithm cuDNN refuses for a geometry (prepare fails) is skipped; ALGO_0 and ALGO_1
// (the default) must run every case.
TEST(ConvGradCuda, EveryCudnnAlgorithmMatchesReference) {
  const BackendConfig* fp32 = nullptr;
  for (const BackendConfig& config : backend_configs())
    if (config.kind == BackendConfig::Kind::kCuda && !config.tf32) fp32 = &config;
  if (fp32 == nullptr) GTEST_SKIP() << "this build has no CUDA backend";
  const SharedBackend shared = shared_backend(*fp32);
  if (!shared.skip_reason.empty()) GTEST_SKIP() << shared.skip_reason;
  ASSERT_TRUE(shared.error.is_ok()) << shared.error.to_string();
  for (const OpCase& c : conv_grad_cases()) {
    const OneNodeGraph g = build(c);
    auto want = ucudnn::reference::conv_grad_reference(g.node(), g.node_inputs());
    ASSERT_TRUE(want.has_value()) << want.status().to_string();
    const int count = c.op == OpKind::kConvGradData ? 6 : 7;  // cuDNN 9's bwd-data, bwd-filter algorithms
    const int64_t batch = g.node_inputs()[0]->dim(0);
    for (int a = 0; a < count; ++a) {
      for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{batch}, c.micro_batches}) {
        if (sizes.empty()) continue;
        const std::string what = c.name + " with cuDNN algorithm " + std::to_string(a) + " as " +
                                 std::to_string(sizes.size()) + " call(s)";
        auto got = run_micro_batches(*shared.backend, g, sizes, a);
        if (!got && a > 1) continue;  // cuDNN has no such kernel for this geometry
        ASSERT_TRUE(got.has_value()) << what << ": " << got.status().to_string();
        expect_close(*got, *want, kTolerance, what);
      }
    }
  }
}

// --- Conv's gradient rule against finite differences (support/gradient_check.h) ------------------

TEST(ConvGradRule, MatchesFiniteDifferences) {
  const OpKind conv = OpKind::kConv;
  check_gradients({"explicit_pads_groups", conv, 17, {input({2, 4, 6, 5}), weight({6, 2, 3, 3}), weight({6})},
                   {{"pads", IntList{1, 0, 1, 2}}, {"group", int64_t{2}}}});
  // auto_pad resolved to explicit (asymmetric) pads for the backward ops.
  check_gradients({"same_upper_stride2_dilation", conv, 17, {input({2, 3, 7, 6}), weight({4, 3, 3, 2}), weight({4})},
                   {{"auto_pad", std::string("SAME_UPPER")}, {"strides", IntList{2, 2}}, {"dilations", IntList{1, 2}}}});
  check_gradients({"1d_no_bias", conv, 17, {input({2, 3, 9}), weight({4, 3, 3})},
                   {{"pads", IntList{1, 1}}, {"strides", IntList{2}}}});
  check_gradients({"depthwise_stride2", conv, 17, {input({2, 3, 7, 7}), weight({3, 1, 3, 3}), weight({3})},
                   {{"group", int64_t{3}}, {"pads", IntList{1, 1, 1, 1}}, {"strides", IntList{2, 2}}}});
}

// ConvTranspose runs as ConvGradData + its bias (Note [ConvTranspose as ConvGradData]): the gradients
// come from ConvGradData's rule (dX = Conv(dY, W), dW = ConvGradFilter(dY, X)), Reshape's and Add's.
TEST(ConvTransposeGradRule, MatchesFiniteDifferences) {
  const OpKind transpose = OpKind::kConvTranspose;
  check_gradients({"stride2_pads_bias", transpose, 17, {input({2, 3, 4, 4}), weight({3, 4, 4, 4}), weight({4})},
                   {{"strides", IntList{2, 2}}, {"pads", IntList{1, 1, 1, 1}}}});
  check_gradients({"groups_output_padding", transpose, 17, {input({2, 4, 3, 4}), weight({4, 1, 3, 3}), weight({2})},
                   {{"group", int64_t{2}}, {"strides", IntList{2, 2}}, {"output_padding", IntList{1, 0}},
                    {"pads", IntList{0, 1, 1, 0}}}});
  check_gradients({"1d_no_bias", transpose, 17, {input({2, 3, 5}), weight({3, 2, 3})}, {{"dilations", IntList{2}}}});
}

// --- shape rules -------------------------------------------------------------------------------

void expect_refused(const std::string& name, OpKind op, std::vector<InputSpec> inputs, AttrList attrs,
                    const std::string& mentions) {
  auto built = make_one_node_graph(name, op, 17, inputs, attrs, 1, 1);
  ASSERT_FALSE(built.has_value()) << name << " was accepted";
  EXPECT_EQ(built.status().code(), StatusCode::kInvalidModel) << built.status().to_string();
  EXPECT_NE(built.status().message().find("node '" + name + "'"), std::string::npos) << built.status().message();
  EXPECT_NE(built.status().message().find(mentions), std::string::npos) << built.status().message();
}

TEST(ConvGradShapes, RefuseInconsistentShapes) {
  const IntList x = {2, 3, 7, 6};
  const IntList w = {4, 3, 3, 3};
  expect_refused("dy_spatial", OpKind::kConvGradData, {input({2, 4, 6, 6}), weight({4, 3, 3, 3})},
                 {{"pads", IntList{1, 1, 1, 1}}, {"input_shape", x}}, "dY is [2, 4, 6, 6]");
  expect_refused("auto_pad", OpKind::kConvGradData, {input({2, 4, 7, 6}), weight({4, 3, 3, 3})},
                 {{"auto_pad", std::string("SAME_UPPER")}, {"input_shape", x}}, "auto_pad");
  expect_refused("filter_groups", OpKind::kConvGradFilter, {input({2, 3, 7, 6}), input({2, 4, 5, 4})},
                 {{"group", int64_t{2}}, {"filter_shape", w}}, "group 2");
  expect_refused("batch", OpKind::kConvGradFilter, {input({2, 3, 7, 6}), input({3, 4, 5, 4})},
                 {{"filter_shape", w}}, "batch");
  expect_refused("rank", OpKind::kConvGradFilter, {input({2, 3, 7, 6}), input({2, 4, 5, 4})},
                 {{"filter_shape", IntList{4, 3, 3}}}, "rank");
}

TEST(ConvGradShapes, DataTakesTheBatchOfDy) {
  auto built = make_one_node_graph("micro", OpKind::kConvGradData, 17, {input({3, 4, 7, 6}), weight({4, 3, 3, 3})},
                                   {{"pads", IntList{1, 1, 1, 1}}, {"input_shape", IntList{8, 3, 7, 6}}}, 1, 1);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  EXPECT_EQ(built->graph.value(built->graph.outputs[0]).shape, (Shape{3, 3, 7, 6}));
}

}  // namespace
}  // namespace ucudnn_test
