// Generated FusedPointwise kernels (Note [generated pointwise kernels], runtime/cuda/pointwise_jit.h):
// the source written for a program (its instructions as straight-line code, only the entry points
// asked for) compiles with NVRTC for sm_90 — no GPU needed — and a compile error comes back with
// NVRTC's log. That they compute what the interpreter computes is the op table's FusedPointwise
// cases on the GPU, which run generated kernels (and interpreted ones with UCUDNN_POINTWISE_JIT=0);
// on a GPU, that they load.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "runtime/cuda/pointwise_jit.h"

namespace ucudnn_test {
namespace {

using ucudnn::cuda::PointwiseKernelSet;
using ucudnn::cuda::PointwiseParams;
using Op = ucudnn::ir::PointwiseOp;

// A program of `leaves` leaves and the instructions {op, a, b}.
PointwiseParams program(int leaves, const std::vector<std::array<int, 3>>& code) {
  PointwiseParams p;
  p.leaves = leaves;
  p.count = static_cast<int>(code.size());
  for (int i = 0; i < p.count; ++i) {
    p.op[i] = static_cast<uint8_t>(code[static_cast<size_t>(i)][0]);
    p.a[i] = static_cast<uint8_t>(code[static_cast<size_t>(i)][1]);
    p.b[i] = static_cast<uint8_t>(code[static_cast<size_t>(i)][2]);
  }
  return p;
}

int op(Op o) { return static_cast<int>(o); }

TEST(PointwiseJit, SourceIsTheProgramAsStraightLineCode) {
  // SiLU: r1 = sigmoid(x), r2 = x * r1.
  const PointwiseParams silu = program(1, {{op(Op::kSigmoid), 0, 0}, {op(Op::kMul), 0, 1}});
  PointwiseKernelSet set;
  set.general = set.vector = true;
  const std::string source = ucudnn::cuda::generated_pointwise_source(silu, set);
  EXPECT_NE(source.find("kLeaves = 1;"), std::string::npos) << source;
  EXPECT_NE(source.find("const float r1 = ir::eval_pointwise(static_cast<ir::PointwiseOp>(7), reg[0], reg[0]"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("const float r2 = ir::eval_pointwise(static_cast<ir::PointwiseOp>(2), reg[0], r1"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("return r2;"), std::string::npos) << source;
  EXPECT_NE(source.find("ucudnn_pointwise_general"), std::string::npos);
  EXPECT_NE(source.find("ucudnn_pointwise_vector"), std::string::npos);
  EXPECT_EQ(source.find("ucudnn_pointwise_concat"), std::string::npos);
  EXPECT_NE(source.find("int32_t n)"), std::string::npos);
  set.index32 = false;
  EXPECT_NE(ucudnn::cuda::generated_pointwise_source(silu, set).find("int64_t n)"), std::string::npos);
}

TEST(PointwiseJit, ProgramsCompileForSm90) {
  PointwiseKernelSet all;
  all.general = all.vector = all.concat = true;
  // Every opcode once, on two leaves: registers 2 .. 20.
  std::vector<std::array<int, 3>> every;
  for (int o = 0; o < op(Op::kCount); ++o) every.push_back({o, o % 2, 1});
  const PointwiseParams programs[] = {
      program(1, {{op(Op::kSigmoid), 0, 0}, {op(Op::kMul), 0, 1}}),                       // SiLU
      program(3, {{op(Op::kMul), 0, 1}, {op(Op::kAdd), 3, 2}, {op(Op::kRelu), 4, 0}}),   // BN+ReLU
      program(2, every),
  };
  for (const PointwiseParams& p : programs) {
    const std::string source = ucudnn::cuda::generated_pointwise_source(p, all);
    auto cubin = ucudnn::cuda::compile_pointwise_source(source, "sm_90");
    if (!cubin && cubin.status().code() == ucudnn::StatusCode::kUnsupported) GTEST_SKIP() << cubin.status().message();
    ASSERT_TRUE(cubin.has_value()) << cubin.status().to_string() << "\n" << source;
    EXPECT_GT(cubin->size(), 1000u);
  }
}

TEST(PointwiseJit, CompileErrorsComeWithNvrtcsLog) {
  auto cubin = ucudnn::cuda::compile_pointwise_source("extern \"C\" __global__ void k() { undeclared_name(); }",
                                                      "sm_90");
  ASSERT_FALSE(cubin.has_value());
  if (cubin.status().code() == ucudnn::StatusCode::kUnsupported) GTEST_SKIP() << cubin.status().message();
  EXPECT_NE(cubin.status().message().find("undeclared_name"), std::string::npos) << cubin.status().message();
  EXPECT_NE(cubin.status().message().find("sm_90"), std::string::npos) << cubin.status().message();
}

// With a GPU (skipped without one), the kernels of a program load: NVRTC found, compiled and loaded, not
// the silent fallback to the interpreter.
TEST(PointwiseJit, GeneratedKernelsLoadOnTheGpu) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no GPU";
  PointwiseKernelSet set;
  set.general = set.vector = true;
  const auto kernels =
      ucudnn::cuda::generated_pointwise_kernels(program(1, {{op(Op::kSigmoid), 0, 0}, {op(Op::kMul), 0, 1}}), set);
  EXPECT_NE(kernels.general, nullptr);
  EXPECT_NE(kernels.vector, nullptr);
  EXPECT_EQ(kernels.concat, nullptr);
}

}  // namespace
}  // namespace ucudnn_test
