// Op-table cases of the activation_grad family (docs/TRAINING.md): ActivationGrad for every
// activation it differentiates — random inputs, and explicit values exactly at the kinks, where the
// derivative must be PyTorch's (Note [derivatives at kinks], runtime/ops/activation_grad.h) —,
// PReluGrad with scalar, per-channel, last-dim and runtime slopes, and DropoutTrain's mask and Y for
// ratios 0, 0.3 and the default 0.5 (the reference recomputes the hash: Note [dropout hash]).
#include "tests/op_cases.h"

namespace ucudnn_test {

using ucudnn::DType;
using ucudnn::OpKind;

namespace {

AttrList activation(const std::string& name, AttrList more = {}) {
  more.insert(more.begin(), {"activation", name});
  return more;
}

std::vector<OpCase> activation_grad_kind_cases() {
  const ucudnn::Shape image = {2, 3, 4, 5};
  const OpKind op = OpKind::kActivationGrad;
  // Kinks: 0 (Relu, LeakyRelu, Elu), ±3 (HardSwish), ±2 (HardSigmoid with alpha 0.25, beta 0.5).
  const std::vector<double> around_zero = {-2, -0.05, 0, 0.05, 1.5, -0.5, 0, 3};
  return {
      {"activation_grad_relu", op, 17, {input(image), input(image)}, activation("Relu")},
      {"activation_grad_relu_kink", op, 17, {input({8}), input_values({8}, around_zero)}, activation("Relu")},
      {"activation_grad_relu_large", op, 17, {input({2, 3, 60, 50}), input_values({2, 3, 60, 50}, around_zero)},
       activation("Relu")},
      {"activation_grad_leaky_relu", op, 17, {input(image), input(image)},
       activation("LeakyRelu", {{"alpha", 0.1f}})},
      {"activation_grad_leaky_relu_kink", op, 17, {input({8}), input_values({8}, around_zero)},
       activation("LeakyRelu", {{"alpha", 0.01f}})},
      {"activation_grad_sigmoid", op, 17, {input(image), input(image, -8, 8)}, activation("Sigmoid")},
      {"activation_grad_sigmoid_tails", op, 17, {input({6}), input_values({6}, {-100, -20, -0.5, 0, 20, 100})},
       activation("Sigmoid")},
      {"activation_grad_tanh", op, 17, {input(image), input(image, -3, 3)}, activation("Tanh")},
      {"activation_grad_hard_sigmoid", op, 17, {input(image), input(image, -4, 4)},
       activation("HardSigmoid", {{"alpha", 0.2f}, {"beta", 0.5f}})},
      {"activation_grad_hard_sigmoid_kinks", op, 17,
       {input({8}), input_values({8}, {-3, -2, -1.95, 0, 1.95, 2, 2.05, 3})},
       activation("HardSigmoid", {{"alpha", 0.25f}, {"beta", 0.5f}})},
      {"activation_grad_hard_swish", op, 17, {input(image), input(image, -5, 5)}, activation("HardSwish")},
      {"activation_grad_hard_swish_kinks", op, 17,
       {input({8}), input_values({8}, {-4, -3.05, -3, -1.5, 0, 2.95, 3, 3.05})}, activation("HardSwish")},
      {"activation_grad_elu", op, 17, {input(image), input(image, -3, 3)}, activation("Elu", {{"alpha", 0.7f}})},
      {"activation_grad_elu_kink", op, 17, {input({8}), input_values({8}, around_zero)},
       activation("Elu", {{"alpha", 1.0f}})},
  };
}

std::vector<OpCase> activation_grad_clip_cases() {
  const OpKind op = OpKind::kActivationGrad;
  // The bounds themselves pass the gradient (PyTorch's clamp: low <= x <= high).
  const std::vector<double> x = {-1, -0.55, -0.5, -0.45, 0, 1.2, 1.25, 1.3, 2, -0.5};
  return {
      {"activation_grad_clip_both", op, 17,
       {input({10}), input_values({10}, x), weight_values({}, {-0.5}), weight_values({}, {1.25})}, activation("Clip")},
      {"activation_grad_clip_min_only", op, 17, {input({10}), input_values({10}, x), weight_values({1}, {0})},
       activation("Clip")},
      {"activation_grad_clip_max_only_runtime", op, 17,
       {input({10}), input_values({10}, x), absent(), input_values({}, {1.25})}, activation("Clip")},
      {"activation_grad_clip_runtime_bounds", op, 17,
       {input({2, 3, 4}), input({2, 3, 4}), input_values({}, {-0.3}), input_values({}, {0.4})}, activation("Clip")},
      // low > high: the output is the constant high, so no gradient anywhere.
      {"activation_grad_clip_min_above_max", op, 17,
       {input({10}), input_values({10}, x), weight_values({}, {1}), weight_values({}, {0.5})}, activation("Clip")},
      {"activation_grad_clip_no_bounds", op, 17, {input({3, 5}), input({3, 5})}, activation("Clip")},
      // MobileNetV2's ReLU6 on more values than the CPU's threads split (and whole vectors), the bounds among them.
      {"activation_grad_clip_relu6_large", op, 17,
       {input({2, 3, 60, 50}), input_values({2, 3, 60, 50}, {-1, 0, 0.5, 6, 6.5, 3, -0.25, 5.75, 7}),
        weight_values({}, {0}), weight_values({}, {6})},
       activation("Clip")},
  };
}

std::vector<OpCase> prelu_grad_cases() {
  const OpKind op = OpKind::kPReluGrad;
  const ucudnn::Shape image = {2, 3, 4, 5};
  return {
      {"prelu_grad_scalar", op, 17, {input(image), input(image), weight({1})}, {}, 2},
      {"prelu_grad_scalar_rank0", op, 17, {input({4, 5}), input({4, 5}), weight({})}, {}, 2},
      {"prelu_grad_channel", op, 17, {input(image), input(image), weight({3, 1, 1})}, {}, 2},
      {"prelu_grad_last_dim", op, 17, {input({2, 3, 5}), input({2, 3, 5}), weight({5})}, {}, 2},
      {"prelu_grad_full_shape", op, 17, {input({2, 3, 5}), input({2, 3, 5}), input({2, 3, 5})}, {}, 2},
      {"prelu_grad_runtime_slope", op, 17, {input(image), input(image), input({4, 1})}, {}, 2},
      // x = 0 takes the slope's branch (PyTorch: x > 0 ? dY : slope·dY).
      {"prelu_grad_kink", op, 17,
       {input({2, 4}), input_values({2, 4}, {-1, 0, 0.05, -0.05, 2, 0, -3, 1}),
        weight_values({4}, {0.1, 0.2, 0.3, 0.4})},
       {},
       2},
      // A larger per-channel case: the CUDA kernel's block sums span many blocks.
      {"prelu_grad_channel_large", op, 17, {input({4, 16, 32, 32}), input({4, 16, 32, 32}), weight({16, 1, 1})}, {}, 2},
  };
}

std::vector<OpCase> dropout_train_cases() {
  const OpKind op = OpKind::kDropoutTrain;
  const DType int64 = DType::kInt64;
  const ucudnn::Shape image = {2, 3, 8, 8};
  return {
      {"dropout_train_ratio_0", op, 17, {input(image), typed_input(int64, {1}, {7})}, {{"ratio", 0.0f}}, 2},
      {"dropout_train_ratio_0_3", op, 17, {input(image), typed_input(int64, {1}, {42})}, {{"ratio", 0.3f}}, 2},
      {"dropout_train_default_ratio", op, 17, {input({5, 7}), typed_input(int64, {1}, {123456789})}, {}, 2},
      {"dropout_train_negative_seed", op, 17, {input({64}), typed_input(int64, {1}, {-5})}, {{"ratio", 0.3f}}, 2},
      {"dropout_train_constant_seed", op, 17, {input({3, 50}), typed_constant(int64, {1}, {2024})},
       {{"ratio", 0.9f}}, 2},
  };
}

}  // namespace

std::vector<OpCase> activation_grad_cases() {
  std::vector<OpCase> cases = activation_grad_kind_cases();
  for (auto* family : {activation_grad_clip_cases, prelu_grad_cases, dropout_train_cases}) {
    std::vector<OpCase> more = family();
    cases.insert(cases.end(), more.begin(), more.end());
  }
  return cases;
}

}  // namespace ucudnn_test
