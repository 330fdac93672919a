// The CPU's prepared convolutions (runtime/cpu/conv.cc, Note [oneDNN weights] in
// runtime/cpu/onednn_conv.cc): a Conv the backend prepared once and runs again with other
// weights gives the new result, for every CPU algorithm that applies, with its epilogue
// (bias, residual z, Relu) — W a runtime input of the graph (training: new values at the same
// address every step) and W a constant (an inference session: only another address brings
// new values). Also: the prepared workspace never exceeds the planner's query.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "runtime/backend/backend.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/ir/fusion.h"
#include "tests/reference/conv_reference.h"
#include "tests/support/one_node_graph.h"
#include "tests/support/tensor_checks.h"

namespace {

using ucudnn::DType;
using ucudnn::Shape;
using ucudnn::Tensor;
using ucudnn::runtime::TensorRef;
using IntList = std::vector<int64_t>;

const Shape kX = {2, 8, 9, 9}, kW = {16, 8, 3, 3}, kY = {2, 16, 9, 9};

TensorRef ref(Tensor& t) { return TensorRef{t.dtype(), t.shape(), t.raw()}; }

// Prepares the graph's Conv once per algorithm, runs it with W = a then W = b (in place in
// one buffer when W is a runtime input, from another buffer when it is a constant) and
// compares each result with the reference for those weights.
void expect_new_weights_seen(bool w_constant) {
  const ucudnn_test::AttrList attrs = {{"pads", IntList{1, 1, 1, 1}},
                                       {ucudnn::ir::kFusedActivationAttr, std::string("Relu")}};
  const ucudnn_test::InputSpec w_spec = w_constant ? ucudnn_test::weight(kW) : ucudnn_test::input(kW);
  auto built = ucudnn_test::make_one_node_graph(
      "conv", ucudnn::OpKind::kConv, 18,
      {ucudnn_test::input(kX), w_spec, ucudnn_test::weight({kW[0]}), ucudnn_test::input(kY)}, attrs, 1, 7);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  const ucudnn::ir::Node& node = built->node();
  std::vector<const Tensor*> inputs = built->node_inputs();
  std::mt19937 random(11);
  Tensor x = inputs[0]->clone().value(), bias = inputs[2]->clone().value(), z = inputs[3]->clone().value();
  const Tensor w_a = ucudnn_test::make_random_tensor(DType::kFloat32, kW, random);
  const Tensor w_b = ucudnn_test::make_random_tensor(DType::kFloat32, kW, random);
  auto expected = [&](const Tensor& w) { return ucudnn::reference::reference_conv(node, {&x, &w, &bias, &z}); };
  const Tensor want_a = expected(w_a), want_b = expected(w_b);

  auto backend = ucudnn::cpu::make_cpu_backend();
  auto problem = ucudnn::cpu::conv_problem(node, kX, kW);
  ASSERT_TRUE(problem.has_value());
  int ran = 0;
  for (int a = 0; a < ucudnn::cpu::kNumCpuConvAlgorithms; ++a) {
    if (!ucudnn::cpu::conv_algorithm_applies(*problem, a)) continue;
    const std::string what = std::string(ucudnn::cpu::cpu_conv_algorithm_name(a)) +
                             (w_constant ? " (W constant)" : " (W a runtime input)");
    auto kernel = backend->prepare(ucudnn::runtime::kernel_request(built->graph, node, 0, a));
    ASSERT_TRUE(kernel.has_value()) << what << ": " << kernel.status().to_string();
    const size_t bytes = (*kernel)->workspace_bytes();
    EXPECT_LE(bytes, ucudnn::cpu::conv_workspace_bytes(*problem, a)) << what;
    std::vector<std::byte> workspace(bytes);
    Tensor w_first = w_a.clone().value(), w_second = w_b.clone().value();
    Tensor y = Tensor::allocate(DType::kFloat32, kY).value();
    std::vector<TensorRef> src = {ref(x), ref(w_first), ref(bias), ref(z)};
    const std::vector<TensorRef> dst = {ref(y)};
    const ucudnn::runtime::KernelIo io{src, dst, workspace.data(), bytes};
    ASSERT_TRUE((*kernel)->run(io).is_ok()) << what;
    ucudnn_test::expect_close(y, want_a, {1e-4, 1e-4}, what + ", first weights");
    if (w_constant) {
      src[1] = ref(w_second);  // another initializer at another address
    } else {
      std::memcpy(w_first.raw(), w_b.raw(), w_b.nbytes());  // the optimizer's update, in place
    }
    ASSERT_TRUE((*kernel)->run(io).is_ok()) << what;
    ucudnn_test::expect_close(y, want_b, {1e-4, 1e-4}, what + ", second weights");
    ++ran;
  }
  EXPECT_GE(ran, 3);  // the Eigen algorithms at least; oneDNN's too where built in
}

TEST(CpuPreparedConv, RuntimeWeightsChangedInPlaceAreSeen) { expect_new_weights_seen(/*w_constant=*/false); }

TEST(CpuPreparedConv, ConstantWeightsAtAnotherAddressAreSeen) { expect_new_weights_seen(/*w_constant=*/true); }

// Prepares the one-node graph's Conv with every CPU algorithm that applies, runs it once and compares Y
// with the reference. With a residual input z (the graph's fourth input) Y's buffer holds z and is
// passed as z too (Note [residual in place]). How many algorithms ran.
int expect_every_algorithm_matches(const ucudnn_test::OneNodeGraph& built, const std::string& label) {
  const ucudnn::ir::Node& node = built.node();
  const std::vector<const Tensor*> inputs = built.node_inputs();
  const Tensor want = ucudnn::reference::reference_conv(node, inputs);
  auto backend = ucudnn::cpu::make_cpu_backend();
  auto problem = ucudnn::cpu::conv_problem(node, inputs[0]->shape(), inputs[1]->shape());
  EXPECT_TRUE(problem.has_value()) << label;
  if (!problem) return 0;
  const bool residual = inputs.size() > ucudnn::ir::kConvResidualInput && inputs[ucudnn::ir::kConvResidualInput];
  int ran = 0;
  for (int a = 0; a < ucudnn::cpu::kNumCpuConvAlgorithms; ++a) {
    if (!ucudnn::cpu::conv_algorithm_applies(*problem, a)) continue;
    const std::string what = label + ", " + ucudnn::cpu::cpu_conv_algorithm_name(a);
    auto kernel = backend->prepare(ucudnn::runtime::kernel_request(built.graph, node, 0, a));
    EXPECT_TRUE(kernel.has_value()) << what << ": " << kernel.status().to_string();
    if (!kernel) continue;
    std::vector<std::byte> workspace((*kernel)->workspace_bytes());
    Tensor x = inputs[0]->clone().value(), w = inputs[1]->clone().value(), bias = inputs[2]->clone().value();
    Tensor y = residual ? inputs[ucudnn::ir::kConvResidualInput]->clone().value()  // Y's buffer holds z
                        : Tensor::allocate(DType::kFloat32, want.shape()).value();
    std::vector<TensorRef> src = {ref(x), ref(w), ref(bias)};
    if (residual) src.push_back(ref(y));
    const std::vector<TensorRef> dst = {ref(y)};
    const ucudnn::Status run = (*kernel)->run({src, dst, workspace.data(), workspace.size()});
    EXPECT_TRUE(run.is_ok()) << what << ": " << run.to_string();
    ucudnn_test::expect_close(y, want, {1e-4, 1e-4}, what);
    ++ran;
  }
  return ran;
}

// Note [residual in place]: every algorithm (the Eigen ones accumulating into Y, oneDNN's through its
// sum post-op) gives relu(conv + B + z) with z in Y's buffer, at batch 1 (the GEMM straight into Y) and
// 2 (im2col_gemm's scatter), 3×3 and 1×1 (gemm_1x1).
TEST(CpuPreparedConv, ResidualAddedWhereItLies) {
  for (const int64_t batch : {1, 2}) {
    for (const int64_t k : {3, 1}) {
      const Shape x_shape = {batch, kX[1], kX[2], kX[3]}, y_shape = {batch, kY[1], kY[2], kY[3]};
      const int64_t pad = k / 2;
      const ucudnn_test::AttrList attrs = {{"pads", IntList{pad, pad, pad, pad}},
                                           {ucudnn::ir::kFusedActivationAttr, std::string("Relu")}};
      auto built = ucudnn_test::make_one_node_graph(
          "conv", ucudnn::OpKind::kConv, 18,
          {ucudnn_test::input(x_shape), ucudnn_test::weight({kW[0], kW[1], k, k}), ucudnn_test::weight({kW[0]}),
           ucudnn_test::input(y_shape)},
          attrs, 1, 5);
      ASSERT_TRUE(built.has_value()) << built.status().to_string();
      const std::string label = "batch " + std::to_string(batch) + ", " + std::to_string(k) + "x" + std::to_string(k);
      EXPECT_GE(expect_every_algorithm_matches(*built, label), 3) << label;
    }
  }
}

// Every fused activation (Note [fused nodes]) in every algorithm: oneDNN's eltwise post-ops (Note [oneDNN
// epilogue]) and the Eigen algorithms' pass give what the reference computes in double.
TEST(CpuPreparedConv, EveryActivationInEveryAlgorithm) {
  const struct {
    const char* name;
    float min, max;  // Clip's
  } activations[] = {{"Relu", 0, 0}, {"SiLU", 0, 0}, {"HardSwish", 0, 0}, {"Sigmoid", 0, 0}, {"Clip", -0.5f, 6.0f}};
  for (const auto& activation : activations) {
    ucudnn_test::AttrList attrs = {{"pads", IntList{1, 1, 1, 1}},
                                   {ucudnn::ir::kFusedActivationAttr, std::string(activation.name)}};
    if (std::string(activation.name) == "Clip") {
      attrs.push_back({ucudnn::ir::kFusedActivationMinAttr, activation.min});
      attrs.push_back({ucudnn::ir::kFusedActivationMaxAttr, activation.max});
    }
    auto built = ucudnn_test::make_one_node_graph(
        "conv", ucudnn::OpKind::kConv, 18,
        {ucudnn_test::input(kX), ucudnn_test::weight(kW), ucudnn_test::weight({kW[0]})}, attrs, 1, 13);
    ASSERT_TRUE(built.has_value()) << built.status().to_string();
    EXPECT_GE(expect_every_algorithm_matches(*built, activation.name), 3) << activation.name;
  }
}

// A constant W lets oneDNN keep its reordered copy outside the workspace: the prepared call
// needs less than the query (which must fit a call whose W may change).
TEST(CpuPreparedConv, ConstantWeightsLeaveTheWorkspace) {
  const int direct = static_cast<int>(ucudnn::cpu::CpuConvAlgorithm::kOnednnDirect);
  if (!ucudnn::cpu::cpu_conv_algorithm_available(direct)) GTEST_SKIP() << "built without oneDNN (UCUDNN_ONEDNN=OFF)";
  const ucudnn::ir::Node node = ucudnn_test::make_node("conv", ucudnn::OpKind::kConv, {}, 2);
  auto problem = ucudnn::cpu::conv_problem(node, {1, 64, 14, 14}, {64, 64, 3, 3});
  ASSERT_TRUE(problem.has_value());
  auto constant = ucudnn::cpu::prepare_conv(*problem, direct, {}, /*weights_constant=*/true);
  auto changing = ucudnn::cpu::prepare_conv(*problem, direct, {}, /*weights_constant=*/false);
  ASSERT_NE(constant, nullptr);
  ASSERT_NE(changing, nullptr);
  EXPECT_LE(changing->workspace_bytes(), ucudnn::cpu::conv_workspace_bytes(*problem, direct));
  EXPECT_LE(constant->workspace_bytes(), changing->workspace_bytes());
}

// Note [shared converted weights]: the calls of a convolution cut into micro-batches (one prepared
// object each) hold one converted copy of the same constant W between them; W with other values gets
// its own copy and its own result. For every CPU algorithm that keeps one.
TEST(CpuPreparedConv, CallsWithTheSameConstantWeightsShareTheirCopy) {
  ucudnn::cpu::ConvProblem p;
  p.batch = 2;
  p.in_channels = p.out_channels = 32;
  p.in_h = p.in_w = p.out_h = p.out_w = 10;
  p.kernel_h = p.kernel_w = 3;
  p.pad_top = p.pad_left = 1;
  p.channels_last = true;
  std::mt19937 random(5);
  auto make = [&](Shape shape) { return ucudnn_test::make_random_tensor(DType::kFloat32, shape, random); };
  const Tensor x = make({2, 10, 10, 32}), w = make({32, 3, 3, 32}), other_w = make({32, 3, 3, 32});
  int sharing = 0;
  for (int a = 0; a < ucudnn::cpu::kNumCpuConvAlgorithms; ++a) {
    if (!ucudnn::cpu::conv_algorithm_applies(p, a)) continue;
    const std::string what = ucudnn::cpu::cpu_conv_algorithm_name(a);
    std::vector<std::unique_ptr<ucudnn::cpu::PreparedConv>> calls;
    for (int i = 0; i < 3; ++i) calls.push_back(ucudnn::cpu::prepare_conv(p, a, {}, /*weights_constant=*/true));
    std::vector<std::byte> workspace(ucudnn::cpu::conv_workspace_bytes(p, a));
    auto run_call = [&](ucudnn::cpu::PreparedConv& call, const Tensor& weights) {
      Tensor y = Tensor::allocate(DType::kFloat32, {2, 10, 10, 32}).value();
      call.run(x.data<float>(), weights.data<float>(), nullptr, nullptr, y.data<float>(), workspace.data());
      return y;
    };
    auto fresh = [&](const Tensor& weights) {  // W converted into the workspace, nothing shared
      return run_call(*ucudnn::cpu::prepare_conv(p, a, {}, /*weights_constant=*/false), weights);
    };
    run_call(*calls[0], w);
    ucudnn_test::expect_close(run_call(*calls[1], w), fresh(w), {1e-5, 1e-5}, what + ": the call that found the copy");
    ucudnn_test::expect_close(run_call(*calls[2], other_w), fresh(other_w), {1e-5, 1e-5}, what + ": other weights");
    if (calls[1]->kept().id == nullptr) continue;  // keeps nothing (W used as it lies)
    ++sharing;
    EXPECT_EQ(calls[0]->kept().id, calls[1]->kept().id) << what;
    EXPECT_NE(calls[2]->kept().id, calls[1]->kept().id) << what;
    EXPECT_GT(calls[1]->kept().bytes, 0u) << what;
  }
  if (!ucudnn::cpu::cpu_runs_channels_last()) GTEST_SKIP() << "built without oneDNN (UCUDNN_ONEDNN=OFF)";
  EXPECT_GE(sharing, 1) << "Winograd at least keeps transformed filters";
}

}  // namespace
