// The gradient rules of the elementwise activations (runtime/ops/activations.cc), the
// broadcasting binary ops (runtime/ops/binary.cc) and DropoutTrain (runtime/ops/
// activation_grad.cc) against central finite differences (tests/support/gradient_check.h),
// inputs kept at least 0.05 away from every kink; the rules' refusals; and DropoutTrain's
// mask as a random draw (kept fraction, independence across seeds), which the op table's
// exact comparison with the reference cannot show.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/support/backend_runner.h"
#include "tests/support/gradient_check.h"
#include "training/autodiff.h"

namespace ucudnn_test {
namespace {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Shape;
using ucudnn::StatusCode;
using ucudnn::Tensor;
namespace ir = ucudnn::ir;

const Shape kImage = {2, 3, 4, 5};

// Values in (-2.5, 2.5) at least 0.05 from 0, ±2, ±1.25 (the kinks used below); repeated to fill a shape.
const std::vector<double> kAwayFromKinks = {-2.4, -1.9, -1.3, -1.2, -0.7, -0.3, -0.05, 0.05,
                                            0.2,  0.6,  1.1,  1.3,  1.7,  2.1,  2.45, -1.6};

GradientCheck activation_check(const std::string& name, OpKind op, AttrList attrs = {}) {
  return {.name = name, .op = op, .inputs = {input_values(kImage, kAwayFromKinks)}, .attrs = std::move(attrs)};
}

TEST(PointwiseGradient, Relu) { check_gradients(activation_check("relu", OpKind::kRelu)); }
TEST(PointwiseGradient, LeakyRelu) {
  check_gradients(activation_check("leaky_relu", OpKind::kLeakyRelu, {{"alpha", 0.1f}}));
}
TEST(PointwiseGradient, Sigmoid) { check_gradients(activation_check("sigmoid", OpKind::kSigmoid)); }
TEST(PointwiseGradient, Tanh) { check_gradients(activation_check("tanh", OpKind::kTanh)); }
// HardSigmoid's linear region with alpha 0.4, beta 0.5 is (-1.25, 1.25).
TEST(PointwiseGradient, HardSigmoid) {
  check_gradients(activation_check("hard_sigmoid", OpKind::kHardSigmoid, {{"alpha", 0.4f}, {"beta", 0.5f}}));
}
// HardSwish's kinks at ±3: the values cover both flat sides too.
TEST(PointwiseGradient, HardSwish) {
  check_gradients({.name = "hard_swish",
                   .op = OpKind::kHardSwish,
                   .inputs = {input_values({12}, {-4, -3.2, -2.9, -1, -0.1, 0.4, 1.5, 2.8, 2.95, 3.1, 4, 6})}});
}
TEST(PointwiseGradient, Elu) { check_gradients(activation_check("elu", OpKind::kElu, {{"alpha", 0.7f}})); }
TEST(PointwiseGradient, Softplus) { check_gradients(activation_check("softplus", OpKind::kSoftplus)); }
TEST(PointwiseGradient, Exp) { check_gradients(activation_check("exp", OpKind::kExp)); }
TEST(PointwiseGradient, Neg) { check_gradients(activation_check("neg", OpKind::kNeg)); }
TEST(PointwiseGradient, Abs) { check_gradients(activation_check("abs", OpKind::kAbs)); }
TEST(PointwiseGradient, Softsign) { check_gradients(activation_check("softsign", OpKind::kSoftsign)); }
TEST(PointwiseGradient, Sin) { check_gradients(activation_check("sin", OpKind::kSin)); }
TEST(PointwiseGradient, Cos) { check_gradients(activation_check("cos", OpKind::kCos)); }
// Max and Min of two inputs (no ties among the random values), one broadcast.
TEST(PointwiseGradient, MaxMin) {
  check_gradients({.name = "max", .op = OpKind::kMax, .inputs = {input(kImage), input(kImage)}});
  check_gradients({.name = "min_broadcast", .op = OpKind::kMin, .inputs = {input(kImage), input({3, 1, 1})}});
}
// Floor's steps are at the integers, at least 0.05 from every value: its derivative is 0 there.
TEST(PointwiseGradient, Floor) { check_gradients(activation_check("floor", OpKind::kFloor)); }

// Sqrt, Log, Reciprocal: on positive inputs away from 0.
GradientCheck positive_check(const std::string& name, OpKind op) {
  return {.name = name, .op = op, .inputs = {input(kImage, 0.5, 3.0)}};
}
TEST(PointwiseGradient, Sqrt) { check_gradients(positive_check("sqrt", OpKind::kSqrt)); }
TEST(PointwiseGradient, Log) { check_gradients(positive_check("log", OpKind::kLog)); }
TEST(PointwiseGradient, Reciprocal) { check_gradients(positive_check("reciprocal", OpKind::kReciprocal)); }

// Bounds -1.25 and 2: constants, not differentiated.
TEST(PointwiseGradient, Clip) {
  check_gradients({.name = "clip",
                   .op = OpKind::kClip,
                   .inputs = {input_values(kImage, kAwayFromKinks), weight_values({}, {-1.25}), weight_values({}, {2})},
                   .wrt = {0}});
  check_gradients({.name = "clip_max_only",
                   .op = OpKind::kClip,
                   .inputs = {input_values(kImage, kAwayFromKinks), absent(), weight_values({}, {-1.25})},
                   .wrt = {0}});
}

TEST(PointwiseGradient, PRelu) {
  check_gradients({.name = "prelu_scalar", .op = OpKind::kPRelu,
                   .inputs = {input_values(kImage, kAwayFromKinks), weight({1})}});
  check_gradients({.name = "prelu_channel", .op = OpKind::kPRelu,
                   .inputs = {input_values(kImage, kAwayFromKinks), weight({3, 1, 1})}});
  check_gradients({.name = "prelu_last_dim", .op = OpKind::kPRelu,
                   .inputs = {input_values(kImage, kAwayFromKinks), weight({5})}});
}

// Each binary op with the shapes broadcasting exercises: equal, a per-channel operand, a
// one-element operand, the first operand broadcast, and both broadcast ([2,1,4] with [3,1]).
struct BinaryShapes {
  const char* name;
  Shape a, b;
};
const BinaryShapes kBinaryShapes[] = {
    {"same", kImage, kImage},       {"channel", kImage, {3, 1, 1}}, {"one", kImage, {1}},
    {"left", {3, 1, 1}, kImage},    {"both", {2, 1, 4}, {3, 1}},    {"scalar", {}, {2, 3}},
};

void check_binary(const std::string& name, OpKind op, double low_b = -1, double high_b = 1) {
  for (const BinaryShapes& s : kBinaryShapes)
    check_gradients({.name = name + "_" + s.name, .op = op, .inputs = {input(s.a), input(s.b, low_b, high_b)}});
}

TEST(PointwiseGradient, Add) { check_binary("add", OpKind::kAdd); }
TEST(PointwiseGradient, Sub) { check_binary("sub", OpKind::kSub); }
TEST(PointwiseGradient, Mul) { check_binary("mul", OpKind::kMul); }
TEST(PointwiseGradient, Div) { check_binary("div", OpKind::kDiv, 0.5, 2.0); }
// Pow: positive bases (A^B is real there), exponents of either sign.
TEST(PointwiseGradient, Pow) {
  for (const BinaryShapes& s : kBinaryShapes)
    check_gradients(
        {.name = std::string("pow_") + s.name, .op = OpKind::kPow, .inputs = {input(s.a, 0.5, 2.0), input(s.b)}});
}
// Only one operand differentiated (the other a constant): the rule emits nothing for it.
TEST(PointwiseGradient, DivByConstant) {
  check_gradients({.name = "div_constant", .op = OpKind::kDiv, .inputs = {input(kImage), weight({3, 1, 1}, 0.5, 2.0)},
                   .wrt = {0}});
  check_gradients({.name = "div_of_constant",
                   .op = OpKind::kDiv,
                   .inputs = {weight(kImage), input({3, 1, 1}, 0.5, 2.0)},
                   .wrt = {1}});
}

// dX = dY · mask; the mask output takes no gradient.
TEST(PointwiseGradient, DropoutTrain) {
  check_gradients({.name = "dropout_train",
                   .op = OpKind::kDropoutTrain,
                   .inputs = {input(kImage), typed_input(DType::kInt64, {1}, {99})},
                   .attrs = {{"ratio", 0.3f}},
                   .outputs = 2,
                   .seeded_outputs = {0}});
}

// --- refusals ---

// The gradient of `node_input` of the one node of `built`, seeded with ones: append_gradients' status.
ucudnn::Status differentiate(OneNodeGraph& built, size_t node_input) {
  ir::Graph& g = built.graph;
  const ir::ValueId out = g.nodes.front().outputs[0];
  ir::Value seed;
  seed.name = "seed";
  seed.dtype = DType::kFloat32;
  seed.shape = g.value(out).shape;
  seed.constant = Tensor::from_floats(seed.shape, std::vector<float>(ucudnn::shape_numel(seed.shape), 1.0f));
  const ir::ValueId seed_id = g.add_value(std::move(seed));
  return ucudnn::training::append_gradients(g, {{out, seed_id}}, {g.nodes.front().inputs[node_input]}).status();
}

// Training runs no fusion passes: an Add carrying a fused Relu is not differentiated.
TEST(PointwiseGradient, RefusesFusedActivation) {
  auto built = make_one_node_graph("fused", OpKind::kAdd, 14, {input(kImage), input(kImage)},
                                   {{"activation", std::string("Relu")}}, 1, 3);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  const ucudnn::Status status = differentiate(*built, 0);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.to_string();
  EXPECT_NE(status.message().find("fused activation 'Relu'"), std::string::npos) << status.to_string();
  EXPECT_NE(status.message().find("'fused'"), std::string::npos) << status.to_string();
}

TEST(PointwiseGradient, RefusesClipBoundGradient) {
  auto built = make_one_node_graph("clip", OpKind::kClip, 13, {input({6}), input({}), input({})}, {}, 1, 3);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  const ucudnn::Status status = differentiate(*built, 1);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.to_string();
  EXPECT_NE(status.message().find("Clip's min or max"), std::string::npos) << status.to_string();
}

// --- the shape rules of the family ---

TEST(ActivationGradShapes, RefusesBadNodes) {
  struct Bad {
    OpKind op;
    std::vector<InputSpec> inputs;
    AttrList attrs;
    int outputs;
    std::string mentions;
  };
  const DType int64 = DType::kInt64;
  const std::vector<Bad> bad = {
      {OpKind::kActivationGrad, {input({4}), input({4})}, {{"activation", std::string("Gelu")}}, 1, "'Gelu'"},
      {OpKind::kActivationGrad, {input({4}), input({5})}, {{"activation", std::string("Relu")}}, 1, "same shape"},
      {OpKind::kActivationGrad, {input({4}), input({4}), weight_values({}, {0})}, {{"activation", std::string("Relu")}},
       1, "Clip's only"},
      {OpKind::kActivationGrad, {input({4}), input({4}), weight({2})}, {{"activation", std::string("Clip")}}, 1,
       "scalar"},
      {OpKind::kPReluGrad, {input({2, 3}), input({2, 3}), weight({2})}, {}, 2, "does not broadcast"},
      {OpKind::kDropoutTrain, {input({4}), typed_input(int64, {1}, {1})}, {{"ratio", 1.0f}}, 2, "[0, 1)"},
      {OpKind::kDropoutTrain, {input({4}), typed_input(int64, {2}, {1, 2})}, {}, 2, "one int64"},
  };
  for (const Bad& b : bad) {
    auto built = make_one_node_graph("bad", b.op, 17, b.inputs, b.attrs, b.outputs, 1);
    ASSERT_FALSE(built.has_value()) << "accepted a node that should mention " << b.mentions;
    EXPECT_EQ(built.status().code(), StatusCode::kInvalidModel) << built.status().to_string();
    EXPECT_NE(built.status().message().find(b.mentions), std::string::npos) << built.status().to_string();
    EXPECT_NE(built.status().message().find("'bad'"), std::string::npos) << built.status().to_string();
  }
}

// --- DropoutTrain's mask as a random draw ---

// The mask of DropoutTrain(ratio) over n elements with `seed`, on the CPU.
std::vector<float> dropout_mask(int64_t n, float ratio, int64_t seed) {
  auto built = make_one_node_graph("dropout", OpKind::kDropoutTrain, 17,
                                   {input({n}), typed_constant(DType::kInt64, {1}, {static_cast<double>(seed)})},
                                   {{"ratio", ratio}}, 2, 5);
  EXPECT_TRUE(built.has_value()) << built.status().to_string();
  if (!built) return {};
  auto out = run_on_backend(*shared_backend(backend_config("cpu")).backend, built->graph, built->feeds);
  EXPECT_TRUE(out.has_value()) << out.status().to_string();
  if (!out) return {};
  const Tensor& mask = (*out)[1];
  return std::vector<float>(mask.data<float>(), mask.data<float>() + mask.numel());
}

// Kept fraction within 4σ of 1 - ratio; kept values exactly 1 / (1 - ratio); consecutive seeds
// (one per training step) agree on about p² + (1 - p)² of the elements, as independent draws do.
TEST(DropoutMask, IsAnUnbiasedDrawIndependentAcrossSeeds) {
  const int64_t n = 200000;
  const float ratio = 0.3f;
  const double keep = 1.0 - ratio, sigma = std::sqrt(keep * ratio / n);
  const std::vector<float> a = dropout_mask(n, ratio, 1), b = dropout_mask(n, ratio, 2);
  ASSERT_EQ(a.size(), static_cast<size_t>(n));
  ASSERT_EQ(b.size(), static_cast<size_t>(n));
  int64_t kept = 0, agree = 0;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(a[i] == 0.0f || a[i] == 1.0f / (1.0f - ratio)) << "mask element " << i << " = " << a[i];
    kept += a[i] != 0.0f;
    agree += (a[i] != 0.0f) == (b[i] != 0.0f);
  }
  EXPECT_NEAR(static_cast<double>(kept) / n, keep, 4 * sigma);
  const double independent = keep * keep + ratio * ratio;
  EXPECT_NEAR(static_cast<double>(agree) / n, independent, 4 * std::sqrt(independent * (1 - independent) / n));
}

TEST(DropoutMask, RatioZeroKeepsEverything) {
  for (float m : dropout_mask(1000, 0.0f, 12345)) ASSERT_EQ(m, 1.0f);
}

}  // namespace
}  // namespace ucudnn_test
