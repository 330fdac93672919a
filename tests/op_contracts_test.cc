// What the op table (op_table_test.cc) cannot say as a case: the CPU
// convolution algorithms' workspace contract and defaults
// (runtime/cpu/conv_algorithms.h), an algorithm that does not apply, the op
// descriptors' FLOPs and attribute defaults, and CPU kernel behaviour the
// ONNX spec leaves open or that only large inputs reach (Cast saturation, the
// threaded broadcast path). And the harness itself (tests/support/): an
// output element no kernel writes, or one off by more than the tolerance,
// cannot pass.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ir/fusion.h"
#include "runtime/ops/op_descriptor.h"
#include "tests/reference/conv_reference.h"
#include "tests/reference/op_reference.h"
#include "tests/support/backend_runner.h"
#include "tests/support/one_node_graph.h"
#include "tests/support/tensor_checks.h"

namespace ucudnn_test {
namespace {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Status;
using ucudnn::StatusCode;
using ucudnn::Tensor;
using IntList = std::vector<int64_t>;
namespace cpu = ucudnn::cpu;
namespace ir = ucudnn::ir;

constexpr size_t kDoesNotApply = std::numeric_limits<size_t>::max();
constexpr double kLargestExactInt = 9007199254740992.0;  // 2^53

ucudnn::runtime::Backend& cpu_backend() { return *shared_backend(backend_config("cpu")).backend; }

// --- CPU convolution algorithms ---------------------------------------------------

TEST(CpuConvAlgorithms, WorkspaceDependsOnTheMicroBatch) {
  const ir::Node node = make_node("conv", OpKind::kConv, {{"pads", IntList{1, 1, 1, 1}}}, 2);
  auto small = cpu::conv_problem(node, {1, 16, 14, 14}, {32, 16, 3, 3});
  auto large = cpu::conv_problem(node, {8, 16, 14, 14}, {32, 16, 3, 3});
  ASSERT_TRUE(small.has_value() && large.has_value());
  using Algorithm = cpu::CpuConvAlgorithm;
  const int batched = static_cast<int>(Algorithm::kIm2colGemm);
  const int per_sample = static_cast<int>(Algorithm::kIm2colGemmPerSample);
  // im2col of the whole micro-batch: K·N·P floats plus the [M, N·P] scatter buffer when N > 1.
  EXPECT_EQ(cpu::conv_workspace_bytes(*small, batched), size_t{16 * 9 * 196} * 4);
  EXPECT_EQ(cpu::conv_workspace_bytes(*large, batched), size_t{16 * 9 * 8 * 196 + 8 * 32 * 196} * 4);
  EXPECT_EQ(cpu::conv_workspace_bytes(*large, per_sample), cpu::conv_workspace_bytes(*small, per_sample));
  EXPECT_EQ(cpu::conv_workspace_bytes(*large, static_cast<int>(Algorithm::kDirect)), 0u);
  EXPECT_EQ(cpu::conv_workspace_bytes(*large, static_cast<int>(Algorithm::kGemm1x1)), kDoesNotApply);
  EXPECT_EQ(cpu::conv_workspace_bytes(*large, 99), kDoesNotApply);
  EXPECT_STREQ(cpu::cpu_conv_algorithm_name(batched), "im2col_gemm");
  EXPECT_STREQ(cpu::cpu_conv_algorithm_name(99), "?");
}

TEST(CpuConvAlgorithms, DefaultChoices) {
  using Algorithm = cpu::CpuConvAlgorithm;
  const ir::Node plain = make_node("conv", OpKind::kConv, {}, 2);
  auto one_by_one = cpu::conv_problem(plain, {4, 64, 28, 28}, {128, 64, 1, 1});
  ASSERT_TRUE(one_by_one.has_value());
  EXPECT_EQ(cpu::conv_default_algorithm(*one_by_one), static_cast<int>(Algorithm::kGemm1x1));
  EXPECT_EQ(cpu::conv_workspace_bytes(*one_by_one, -1), 0u);
  const ir::Node depthwise = make_node("depthwise", OpKind::kConv, {{"group", int64_t{32}}}, 2);
  auto dw = cpu::conv_problem(depthwise, {4, 32, 28, 28}, {32, 1, 3, 3});
  ASSERT_TRUE(dw.has_value());
  EXPECT_EQ(cpu::conv_default_algorithm(*dw), static_cast<int>(Algorithm::kDirect));
  // A large 3x3 layer at batch 16 does not get the whole-batch im2col by default.
  auto big = cpu::conv_problem(plain, {16, 64, 58, 58}, {64, 64, 3, 3});
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(cpu::conv_default_algorithm(*big), static_cast<int>(Algorithm::kIm2colGemmPerSample));
  EXPECT_LE(cpu::conv_workspace_bytes(*big, -1), cpu::kDefaultWorkspaceLimit);
  // A deep layer (small output plane) at batch 16 gets one whole-batch GEMM; at batch 1 it does not.
  const ir::Node padded = make_node("deep", OpKind::kConv, {{"pads", IntList{1, 1, 1, 1}}}, 2);
  auto deep = cpu::conv_problem(padded, {16, 512, 7, 7}, {512, 512, 3, 3});
  auto deep_single = cpu::conv_problem(padded, {1, 512, 7, 7}, {512, 512, 3, 3});
  ASSERT_TRUE(deep.has_value() && deep_single.has_value());
  EXPECT_EQ(cpu::conv_default_algorithm(*deep), static_cast<int>(Algorithm::kIm2colGemm));
  EXPECT_EQ(cpu::conv_default_algorithm(*deep_single), static_cast<int>(Algorithm::kIm2colGemmPerSample));
}

TEST(CpuConvAlgorithms, RejectsATooSmallWorkspace) {
  const ir::Node node = make_node("conv_workspace", OpKind::kConv, {}, 2);
  std::mt19937 random(7);
  Tensor x = make_random_tensor(DType::kFloat32, {2, 3, 6, 6}, random);
  Tensor w = make_random_tensor(DType::kFloat32, {4, 3, 3, 3}, random);
  Tensor y = std::move(Tensor::allocate(DType::kFloat32, {2, 4, 4, 4})).value();
  const Status s = cpu::cpu_kernel(OpKind::kConv).run({node, {&x, &w}, {&y}, nullptr, 0, 0});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_NE(s.message().find("conv_workspace"), std::string::npos) << s.message();
}

// An algorithm that does not apply says so — at the workspace query, in the kernel, and to a plan —
// instead of computing something wrong.
TEST(CpuConvAlgorithms, AnAlgorithmThatDoesNotApplyIsUnsupported) {
  const int gemm_1x1 = static_cast<int>(cpu::CpuConvAlgorithm::kGemm1x1);
  auto built = make_one_node_graph("conv_3x3", OpKind::kConv, 17, {input({2, 3, 6, 6}), weight({4, 3, 3, 3})},
                                   {}, 1, 1);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  const cpu::CpuKernel& kernel = cpu::cpu_kernel(OpKind::kConv);
  EXPECT_EQ(kernel.workspace_bytes(built->node(), {{2, 3, 6, 6}, {4, 3, 3, 3}}, gemm_1x1), kDoesNotApply);
  std::vector<const Tensor*> inputs = built->node_inputs();
  Tensor y = std::move(Tensor::allocate(DType::kFloat32, {2, 4, 4, 4})).value();
  const Status run = kernel.run({built->node(), inputs, {&y}, nullptr, 0, gemm_1x1});
  EXPECT_EQ(run.code(), StatusCode::kUnsupported) << run.to_string();
  EXPECT_NE(run.message().find("conv_3x3"), std::string::npos) << run.message();

  RunOptions options;
  options.conv_algorithm = gemm_1x1;
  auto plan = make_plan(cpu_backend(), built->graph, options);
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported) << plan.status().to_string();
}

// Every algorithm that applies, the oneDNN ones included, equals the naive reference on
// problems covering groups, depthwise, stride, dilation, padding, 1x1, bias and a fused
// Relu, run with exactly conv_workspace_bytes: guard bytes past it must stay untouched.
TEST(CpuConvAlgorithms, EveryAlgorithmMatchesTheReferenceWithExactlyItsWorkspace) {
  struct Problem {
    std::string name;
    ucudnn::Shape x, w;
    AttrList attrs;
    bool bias = false;
  };
  const std::vector<Problem> problems = {
      {"plain_3x3_pad", {2, 8, 9, 9}, {16, 8, 3, 3}, {{"pads", IntList{1, 1, 1, 1}}}, true},
      {"grouped", {2, 8, 7, 7}, {12, 4, 3, 3}, {{"group", int64_t{2}}, {"pads", IntList{1, 0, 1, 2}}}, true},
      {"depthwise_stride2", {3, 16, 10, 10}, {16, 1, 3, 3},
       {{"group", int64_t{16}}, {"strides", IntList{2, 2}}, {"pads", IntList{1, 1, 1, 1}}}, true},
      {"dilated", {1, 4, 12, 11}, {8, 4, 3, 3}, {{"dilations", IntList{2, 3}}, {"pads", IntList{2, 1, 0, 3}}}, false},
      {"strided_5x5", {2, 3, 17, 15}, {8, 3, 5, 5}, {{"strides", IntList{2, 3}}, {"pads", IntList{2, 2, 2, 2}}}, true},
      {"one_by_one", {4, 32, 6, 6}, {24, 32, 1, 1}, {}, true},
      {"one_by_one_relu", {2, 16, 5, 5}, {16, 16, 1, 1}, {{ucudnn::ir::kFusedActivationAttr, std::string("Relu")}},
       true},
      {"relu_no_bias", {2, 8, 8, 8}, {8, 8, 3, 3}, {{ucudnn::ir::kFusedActivationAttr, std::string("Relu")}}, false},
      {"conv_1d", {2, 6, 1, 20}, {10, 6, 1, 4}, {{"strides", IntList{1, 2}}}, true},
  };
  const cpu::CpuKernel& kernel = cpu::cpu_kernel(OpKind::kConv);
  constexpr size_t kGuard = 256;
  constexpr uint8_t kPattern = 0xA5;
  for (const Problem& p : problems) {
    const ir::Node node = make_node(p.name, OpKind::kConv, p.attrs, p.bias ? 3 : 2);
    std::mt19937 random(seed_for(p.name));
    Tensor x = make_random_tensor(DType::kFloat32, p.x, random);
    Tensor w = make_random_tensor(DType::kFloat32, p.w, random);
    Tensor b = make_random_tensor(DType::kFloat32, {p.w[0]}, random);
    std::vector<const Tensor*> src = {&x, &w};
    if (p.bias) src.push_back(&b);
    const Tensor want = ucudnn::reference::reference_conv(node, src);
    auto problem = cpu::conv_problem(node, p.x, p.w);
    ASSERT_TRUE(problem.has_value()) << problem.status().to_string();
    int applied = 0;
    for (int a = 0; a < cpu::kNumCpuConvAlgorithms; ++a) {
      const std::string what = p.name + " " + cpu::cpu_conv_algorithm_name(a);
      const size_t bytes = kernel.workspace_bytes(node, {p.x, p.w}, a);
      EXPECT_EQ(bytes == kDoesNotApply, !cpu::conv_algorithm_applies(*problem, a)) << what;
      if (bytes == kDoesNotApply) continue;
      ++applied;
      std::vector<uint8_t> workspace(bytes + kGuard, kPattern);
      Tensor y = std::move(Tensor::allocate(DType::kFloat32, want.shape())).value();
      const Status s = kernel.run({node, src, {&y}, bytes > 0 ? workspace.data() : nullptr, bytes, a});
      ASSERT_TRUE(s.is_ok()) << what << ": " << s.to_string();
      expect_close(y, want, {1e-4, 1e-4}, what);
      size_t touched = 0;
      for (size_t i = bytes; i < workspace.size(); ++i) touched += workspace[i] != kPattern;
      EXPECT_EQ(touched, 0u) << what << " wrote past its " << bytes << " workspace bytes";
      // A workspace one byte short of what the call needs is refused, never overrun. (The query may
      // promise more: oneDNN's covers the residual epilogues' scratchpads, Note [residual in place].)
      const cpu::ConvEpilogue epilogue{.bias = p.bias, .activation = ucudnn::ir::conv_activation(node).value()};
      const size_t needed = cpu::prepare_conv(*problem, a, epilogue, /*weights_constant=*/false)->workspace_bytes();
      EXPECT_LE(needed, bytes) << what;
      if (needed > 0) {
        EXPECT_EQ(kernel.run({node, src, {&y}, workspace.data(), needed - 1, a}).code(), StatusCode::kInvalidArgument)
            << what;
      }
    }
    EXPECT_GE(applied, 2) << p.name;
    // oneDNN, when this build has it, has a direct convolution for every one of these problems.
    const int onednn = static_cast<int>(cpu::CpuConvAlgorithm::kOnednnDirect);
    EXPECT_EQ(cpu::conv_algorithm_applies(*problem, onednn), cpu::cpu_conv_algorithm_available(onednn)) << p.name;
  }
}

// The oneDNN algorithm is in the table in every build, but applies only in a build with oneDNN.
TEST(CpuConvAlgorithms, OnednnIsAnAlgorithmOnlyWhereBuiltIn) {
  const int onednn = static_cast<int>(cpu::CpuConvAlgorithm::kOnednnDirect);
  EXPECT_STREQ(cpu::cpu_conv_algorithm_name(onednn), "onednn_direct");
  EXPECT_EQ(cpu::kNumCpuConvAlgorithms, static_cast<int>(cpu::CpuConvAlgorithm::kWinograd4x3) + 1);
  const ir::Node node = make_node("conv", OpKind::kConv, {}, 2);
  auto problem = cpu::conv_problem(node, {1, 4, 5, 5}, {4, 4, 3, 3});
  ASSERT_TRUE(problem.has_value());
  if (!cpu::cpu_conv_algorithm_available(onednn)) {
    EXPECT_FALSE(cpu::conv_algorithm_applies(*problem, onednn));
    EXPECT_EQ(cpu::conv_workspace_bytes(*problem, onednn), kDoesNotApply);
    GTEST_SKIP() << "built without oneDNN (UCUDNN_ONEDNN=OFF)";
  }
  // An empty micro-batch applies where one sample does and needs no workspace.
  cpu::ConvProblem empty = *problem;
  empty.batch = 0;
  EXPECT_TRUE(cpu::conv_algorithm_applies(empty, onednn));
  EXPECT_EQ(cpu::conv_workspace_bytes(empty, onednn), 0u);
  // Asking twice gives the same answer (a cached primitive, not a new allocation per query).
  const size_t bytes = cpu::conv_workspace_bytes(*problem, onednn);
  EXPECT_NE(bytes, kDoesNotApply);
  EXPECT_EQ(cpu::conv_workspace_bytes(*problem, onednn), bytes);
}

// --- op descriptors ---------------------------------------------------------------

TEST(OpDescriptors, Flops) {
  using ucudnn::InferContext;
  using ucudnn::op_descriptor;
  const ir::Node conv = make_node("conv", OpKind::kConv, {{"group", int64_t{2}}, {"pads", IntList{1, 1, 1, 1}}}, 2);
  InferContext conv_context(conv, {{DType::kFloat32, {2, 4, 5, 5}, nullptr}, {DType::kFloat32, {6, 2, 3, 3}, nullptr}});
  ASSERT_TRUE(op_descriptor(OpKind::kConv).infer(conv_context).is_ok());
  EXPECT_EQ(op_descriptor(OpKind::kConv).flops(conv_context), 2 * (2 * 6 * 5 * 5) * (2 * 3 * 3));

  const ir::Node gemm = make_node("gemm", OpKind::kGemm, {{"transA", int64_t{1}}}, 2);
  InferContext gemm_context(gemm, {{DType::kFloat32, {7, 3}, nullptr}, {DType::kFloat32, {7, 4}, nullptr}});
  ASSERT_TRUE(op_descriptor(OpKind::kGemm).infer(gemm_context).is_ok());
  EXPECT_EQ(op_descriptor(OpKind::kGemm).flops(gemm_context), 2 * 3 * 4 * 7);

  const ir::Node matmul = make_node("matmul", OpKind::kMatMul, {}, 2);
  InferContext matmul_context(matmul,
                              {{DType::kFloat32, {2, 1, 4, 5}, nullptr}, {DType::kFloat32, {3, 5, 6}, nullptr}});
  ASSERT_TRUE(op_descriptor(OpKind::kMatMul).infer(matmul_context).is_ok());
  EXPECT_EQ(op_descriptor(OpKind::kMatMul).flops(matmul_context), 2 * (2 * 3) * 4 * 6 * 5);
}

TEST(OpDescriptors, DefaultsAndRequiredAttributes) {
  bool kernel_required = false;
  for (const ucudnn::AttrSpec& a : ucudnn::op_descriptor(OpKind::kMaxPool).attrs)
    if (std::string(a.name) == "kernel_shape") kernel_required = a.presence == ucudnn::AttrPresence::kRequired;
  EXPECT_TRUE(kernel_required);
  const ir::Node batch_norm = make_node("batch_norm", OpKind::kBatchNormalization, {}, 5);
  EXPECT_FLOAT_EQ(batch_norm.attrs.get_float("epsilon"), 1e-5f);
  EXPECT_FLOAT_EQ(batch_norm.attrs.get_float("momentum"), 0.9f);
  const ir::Node lrn = make_node("lrn", OpKind::kLRN, {{"size", int64_t{5}}}, 1);
  EXPECT_FLOAT_EQ(lrn.attrs.get_float("alpha"), 1e-4f);
  EXPECT_FLOAT_EQ(lrn.attrs.get_float("beta"), 0.75f);
  EXPECT_FLOAT_EQ(lrn.attrs.get_float("bias"), 1.0f);
  const ir::Node conv = make_node("conv", OpKind::kConv, {}, 2);
  EXPECT_EQ(conv.attrs.get_string("auto_pad"), "NOTSET");
  EXPECT_EQ(conv.attrs.get_int("group"), 1);
  EXPECT_FALSE(conv.attrs.has("strides"));  // rank-dependent: optional, no default
}

// --- CPU kernels ------------------------------------------------------------------

// Kernel behaviour the spec leaves undefined, pinned so it stays deliberate:
// float → integer Cast saturates at the target's range and maps NaN to 0.
TEST(CpuCast, FloatToIntegerSaturates) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto built = make_one_node_graph("cast_saturate", OpKind::kCast, 13, {input_values({4}, {-5.0, 300.0, nan, 255.9})},
                                   {{"to", int64_t{2}}}, 1, 1);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  auto got = run_on_backend(cpu_backend(), built->graph, built->feeds);
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  ASSERT_EQ((*got)[0].dtype(), DType::kUInt8);
  const uint8_t* y = (*got)[0].data<uint8_t>();
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(y[1], 255);
  EXPECT_EQ(y[2], 0);
  EXPECT_EQ(y[3], 255);
}

// A large broadcast Add runs the threaded row path (the table's small cases do not).
TEST(CpuBinary, LargeBroadcastUsesTheThreadedPath) {
  auto built = make_one_node_graph("add_large", OpKind::kAdd, 14, {input({4, 64, 130}), input({64, 1})}, {}, 1, 3);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  auto want = ucudnn::reference::reference_outputs(built->node(), built->node_inputs());
  ASSERT_TRUE(want.has_value()) << want.status().to_string();
  auto got = run_on_backend(cpu_backend(), built->graph, built->feeds);
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  expect_close(*got, *want, {1e-5, 1e-5}, "large broadcast Add");
}

// --- the harness ------------------------------------------------------------------

// The failure messages `check` adds (intercepted: they do not fail this test).
std::vector<std::string> failures_of(const std::function<void()>& check) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    check();
  }
  std::vector<std::string> messages;
  for (int i = 0; i < results.size(); ++i) messages.push_back(results.GetTestPartResult(i).message());
  return messages;
}

bool mentions(const std::string& message, const std::string& text) { return message.find(text) != std::string::npos; }

TEST(OpTestHarness, ExpectCloseReportsTheFirstMismatchesAndTheirCount) {
  const Tensor want = tensor_of_values(DType::kFloat32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 100});
  // Within atol + rtol·|want| (0.01 + 0.01·100 = 1.01 for the last element): no failure.
  const Tensor near = tensor_of_values(DType::kFloat32, {2, 4}, {0.005, 1, 2, 3, 4, 5, 6, 101});
  EXPECT_TRUE(failures_of([&] { expect_close(near, want, {0.01, 0.01}, "near"); }).empty());

  const Tensor far = tensor_of_values(DType::kFloat32, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 102});
  const std::vector<std::string> failures = failures_of([&] { expect_close(far, want, {0.01, 0.01}, "far"); });
  ASSERT_EQ(failures.size(), 6u);  // five elements, then the count
  EXPECT_TRUE(mentions(failures[0], "far: element 0 [0, 0] is 1, expected 0")) << failures[0];
  EXPECT_TRUE(mentions(failures[4], "element 4 [1, 0]")) << failures[4];
  EXPECT_TRUE(mentions(failures[5], "8 of 8 elements differ")) << failures[5];

  const Tensor other_shape = tensor_of_values(DType::kFloat32, {4, 2}, {0});
  EXPECT_EQ(failures_of([&] { expect_close(other_shape, want, {1, 1}, "shape"); }).size(), 1u);
}

TEST(OpTestHarness, ExpectCloseComparesIntegersBoolsAndNaNExactly) {
  const Tensor ints = tensor_of_values(DType::kInt64, {3}, {kLargestExactInt, 2, 3});
  const Tensor ints_off_by_one = tensor_of_values(DType::kInt64, {3}, {kLargestExactInt - 1, 2, 3});
  EXPECT_EQ(failures_of([&] { expect_close(ints_off_by_one, ints, {10, 10}, "int64"); }).size(), 1u);
  Tensor bools = tensor_of_values(DType::kBool, {2}, {1, 0});
  Tensor unwritten = tensor_of_values(DType::kBool, {2}, {1, 0});
  static_cast<uint8_t*>(unwritten.raw())[1] = 0xFF;  // a byte no kernel wrote
  EXPECT_EQ(failures_of([&] { expect_close(unwritten, bools, {}, "bool"); }).size(), 1u);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor with_nan = tensor_of_values(DType::kFloat32, {2}, {nan, 1});
  EXPECT_TRUE(failures_of([&] { expect_close(with_nan, with_nan, {}, "NaN"); }).empty());
  const Tensor without = tensor_of_values(DType::kFloat32, {2}, {0, 1});
  EXPECT_EQ(failures_of([&] { expect_close(without, with_nan, {1, 1}, "NaN"); }).size(), 1u);
  EXPECT_EQ(failures_of([&] { expect_close(with_nan, without, {1, 1}, "NaN"); }).size(), 1u);
}

// A kernel that answers OK without writing its output.
class ForgetfulKernel final : public ucudnn::runtime::Kernel {
 public:
  size_t workspace_bytes() const override { return 0; }
  Status run(const ucudnn::runtime::KernelIo&) override { return Status::ok(); }
};

class ForgetfulBackend final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  ucudnn::Expected<std::unique_ptr<ucudnn::runtime::Kernel>> prepare(
      const ucudnn::runtime::KernelRequest&) override {
    return std::unique_ptr<ucudnn::runtime::Kernel>(new ForgetfulKernel());
  }
};

TEST(OpTestHarness, AnOutputNoKernelWritesCannotPass) {
  ForgetfulBackend forgetful(cpu_backend());
  auto built = make_one_node_graph("relu", OpKind::kRelu, 14, {input({2, 3})}, {}, 1, 1);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  auto got = run_on_backend(forgetful, built->graph, built->feeds);
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  for (int64_t i = 0; i < (*got)[0].numel(); ++i) EXPECT_TRUE(std::isnan((*got)[0].data<float>()[i])) << i;
  auto want = ucudnn::reference::reference_outputs(built->node(), built->node_inputs());
  ASSERT_TRUE(want.has_value()) << want.status().to_string();
  EXPECT_EQ(failures_of([&] { expect_close(*got, *want, {1, 1}, "forgetful Relu"); }).size(), 6u);
}

}  // namespace
}  // namespace ucudnn_test
