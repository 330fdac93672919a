// What the op table's FusedPointwise cases (op_cases_fused_pointwise.cc) cannot say: each opcode's
// scalar meaning (eval_pointwise, runtime/ir/pointwise_program.h) against a double-precision
// formula written here, the opcode table's arity and immediates, how a program decodes (leaves,
// the concat leaf, the input each leaf reads, its immediates), and FusedPointwise's FLOPs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/ir/pointwise_program.h"
#include "runtime/ops/fused_pointwise.h"
#include "runtime/ops/op_descriptor.h"
#include "tests/support/one_node_graph.h"

namespace ucudnn_test {
namespace {

using ucudnn::DType;
using ucudnn::OpKind;
using Op = ucudnn::ir::PointwiseOp;

struct Expectation {
  Op op;
  bool binary;
  int immediates;
  double (*f)(double a, double b, double p0, double p1);
};

const std::vector<Expectation>& expectations() {
  static const std::vector<Expectation> table = {
      {Op::kAdd, true, 0, [](double a, double b, double, double) { return a + b; }},
      {Op::kSub, true, 0, [](double a, double b, double, double) { return a - b; }},
      {Op::kMul, true, 0, [](double a, double b, double, double) { return a * b; }},
      {Op::kDiv, true, 0, [](double a, double b, double, double) { return a / b; }},
      {Op::kRelu, false, 0, [](double a, double, double, double) { return a > 0 ? a : 0.0; }},
      {Op::kLeakyRelu, false, 1, [](double a, double, double p0, double) { return a >= 0 ? a : p0 * a; }},
      {Op::kPRelu, true, 0, [](double a, double b, double, double) { return a >= 0 ? a : b * a; }},
      {Op::kSigmoid, false, 0, [](double a, double, double, double) { return 1 / (1 + std::exp(-a)); }},
      {Op::kTanh, false, 0, [](double a, double, double, double) { return std::tanh(a); }},
      {Op::kHardSigmoid, false, 2,
       [](double a, double, double p0, double p1) { return std::clamp(p0 * a + p1, 0.0, 1.0); }},
      {Op::kHardSwish, false, 0,
       [](double a, double, double, double) { return a * std::clamp(a / 6 + 0.5, 0.0, 1.0); }},
      {Op::kClip, false, 2, [](double a, double, double p0, double p1) { return std::min(std::max(a, p0), p1); }},
      {Op::kElu, false, 1, [](double a, double, double p0, double) { return a >= 0 ? a : p0 * std::expm1(a); }},
      {Op::kErf, false, 0, [](double a, double, double, double) { return std::erf(a); }},
      {Op::kConstant, false, 1, [](double, double, double p0, double) { return p0; }},
      {Op::kMax, true, 0, [](double a, double b, double, double) { return std::max(a, b); }},
      {Op::kMin, true, 0, [](double a, double b, double, double) { return std::min(a, b); }},
      {Op::kSqrt, false, 0, [](double a, double, double, double) { return std::sqrt(std::abs(a)); }},
      {Op::kNeg, false, 0, [](double a, double, double, double) { return -a; }},
      {Op::kExp, false, 0, [](double a, double, double, double) { return std::exp(a); }},
      {Op::kLog, false, 0, [](double a, double, double, double) { return std::log(a); }},
      {Op::kAbs, false, 0, [](double a, double, double, double) { return std::abs(a); }},
      {Op::kReciprocal, false, 0, [](double a, double, double, double) { return 1 / a; }},
      {Op::kSoftplus, false, 0, [](double a, double, double, double) { return std::log1p(std::exp(a)); }},
      {Op::kPow, true, 0, [](double a, double b, double, double) { return std::pow(a, b); }},
  };
  return table;
}

TEST(PointwiseProgram, EveryOpcodeMatchesItsDefinition) {
  ASSERT_EQ(expectations().size(), static_cast<size_t>(Op::kCount)) << "a new opcode needs a line here";
  const std::vector<float> values = {-30, -7, -3, -1, -0.25f, 0, 0.25f, 1, 2.5f, 3, 7, 30};
  for (size_t i = 0; i < expectations().size(); ++i) {
    const Expectation& e = expectations()[i];
    ASSERT_EQ(static_cast<size_t>(e.op), i);
    EXPECT_EQ(ucudnn::ir::pointwise_op_is_binary(e.op), e.binary) << "opcode " << i;
    EXPECT_EQ(ucudnn::ir::pointwise_op_immediates(e.op), e.immediates) << "opcode " << i;
    for (float a : values) {
      // Sqrt, Log, Reciprocal, Pow: on positive operands (their results elsewhere are NaN or infinite).
      const bool positive = e.op == Op::kSqrt || e.op == Op::kLog || e.op == Op::kReciprocal || e.op == Op::kPow;
      const float x = positive ? std::abs(a) + 0.25f : a;
      const float b = 0.5f - a / 8, p0 = 0.3f, p1 = 0.9f;
      const double want = e.f(x, b, p0, p1);
      const double got = ucudnn::ir::eval_pointwise(e.op, x, b, p0, p1);
      EXPECT_NEAR(got, want, 1e-6 * std::max(1.0, std::abs(want))) << "opcode " << i << " at a = " << x;
    }
  }
}

std::vector<int64_t> words(const std::vector<std::vector<int64_t>>& code) {
  std::vector<int64_t> all;
  for (const auto& instruction : code) all.insert(all.end(), instruction.begin(), instruction.end());
  return all;
}

TEST(FusedPointwiseDescriptor, DecodesTheConcatLeafAndTheInputsAfterIt) {
  // Pieces 0..2 along axis -3 of rank 4 form leaf 0; inputs 3 and 4 are leaves 1 and 2.
  const ucudnn::ir::Node node = make_node(
      "fused", OpKind::kFusedPointwise,
      {{"program", words({{2, 0, 1, 0}, {0, 3, 2, 0}, {11, 4, 0, 1}})},
       {"constants", std::vector<float>{9.0f, -1.0f, 2.0f}},
       {"concat_count", int64_t{3}},
       {"concat_axis", int64_t{-3}}},
      5);
  auto program = ucudnn::decode_pointwise_program(node, 5, 4);
  ASSERT_TRUE(program.has_value()) << program.status().to_string();
  EXPECT_EQ(program->leaves, 3);
  EXPECT_EQ(program->concat_axis, 1);
  EXPECT_EQ(program->registers(), 6);
  EXPECT_EQ(program->input_of_leaf(0), 0u);
  EXPECT_EQ(program->input_of_leaf(1), 3u);
  EXPECT_EQ(program->input_of_leaf(2), 4u);
  ASSERT_EQ(program->code.size(), 3u);
  EXPECT_EQ(program->code[2].op, Op::kClip);
  EXPECT_EQ(program->code[2].a, 4);
  EXPECT_EQ(program->code[2].p0, -1.0f);
  EXPECT_EQ(program->code[2].p1, 2.0f);
  auto leaves = ucudnn::pointwise_leaf_shapes(*program, {{2, 3, 4, 4}, {2, 1, 4, 4}, {2, 4, 4, 4}, {1, 8, 1, 1},
                                                         {2, 8, 1, 1}});
  ASSERT_TRUE(leaves.has_value()) << leaves.status().to_string();
  EXPECT_EQ((*leaves)[0], (ucudnn::Shape{2, 8, 4, 4}));
  auto out = ucudnn::pointwise_output_shape(*program, *leaves);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_EQ(*out, (ucudnn::Shape{2, 8, 4, 4}));
}

TEST(FusedPointwiseDescriptor, TheConcatLeafMustHaveTheOutputsShape) {
  const ucudnn::ir::Node node = make_node(
      "fused", OpKind::kFusedPointwise,
      {{"program", words({{0, 0, 1, 0}})}, {"concat_count", int64_t{2}}, {"concat_axis", int64_t{1}}}, 3);
  ucudnn::InferContext ctx(node, {{DType::kFloat32, {1, 2, 3}, nullptr},
                                  {DType::kFloat32, {1, 2, 3}, nullptr},
                                  {DType::kFloat32, {5, 4, 3}, nullptr}});
  const ucudnn::Status status = ucudnn::op_descriptor(OpKind::kFusedPointwise).infer(ctx);
  EXPECT_EQ(status.code(), ucudnn::StatusCode::kInvalidModel) << status.to_string();
  EXPECT_NE(status.message().find("the output's shape"), std::string::npos) << status.message();
}

TEST(FusedPointwiseDescriptor, FlopsCountEachInstructionPerElement) {
  // GELU: Constant (free), Mul, Erf (4), Constant, Add, Mul, Constant, Mul = 8 a element.
  const ucudnn::ir::Node node = make_node(
      "gelu", OpKind::kFusedPointwise,
      {{"program", words({{14, 0, 0, 0}, {2, 0, 1, 0}, {13, 2, 0, 0}, {14, 0, 0, 1}, {0, 3, 4, 0}, {2, 0, 5, 0},
                          {14, 0, 0, 2}, {2, 6, 7, 0}})},
       {"constants", std::vector<float>{0.7f, 1.0f, 0.5f}}},
      1);
  ucudnn::InferContext ctx(node, {{DType::kFloat32, {2, 3, 5}, nullptr}});
  const ucudnn::OpDescriptor& d = ucudnn::op_descriptor(OpKind::kFusedPointwise);
  ASSERT_TRUE(d.infer(ctx).is_ok());
  EXPECT_EQ(d.flops(ctx), 8 * 30);
  EXPECT_TRUE(d.internal);
}

}  // namespace
}  // namespace ucudnn_test
