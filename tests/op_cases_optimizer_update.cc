// Op-table cases of the optimizer_update family (docs/TRAINING.md): SgdUpdate with and without
// momentum, dampening, Nesterov and weight decay, on the first step (the momentum buffer starts as
// the gradient) and a later one; AdamWUpdate on the first step and a later one, with and without
// weight decay. lr and step are runtime inputs, as the trainer feeds them.
#include "tests/op_cases.h"

namespace ucudnn_test {

namespace {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Shape;

InputSpec lr(double value) { return input_values({1}, {value}); }
InputSpec step(double value) { return typed_input(DType::kInt64, {1}, {value}); }

// (param, grad, momentum_buffer, lr, step) for a parameter of `shape`.
std::vector<InputSpec> sgd_inputs(const Shape& shape, double rate, double at_step) {
  return {input(shape), input(shape), input(shape), lr(rate), step(at_step)};
}

// (param, grad, m, v, lr, step); v is a running mean of squares: non-negative.
std::vector<InputSpec> adamw_inputs(const Shape& shape, double rate, double at_step) {
  return {input(shape), input(shape), input(shape, -0.1, 0.1), input(shape, 0.0, 0.05), lr(rate), step(at_step)};
}

}  // namespace

std::vector<OpCase> optimizer_update_cases() {
  const OpKind sgd = OpKind::kSgdUpdate, adamw = OpKind::kAdamWUpdate;
  return {
      {"sgd_plain", sgd, 17, sgd_inputs({3, 4}, 0.1, 1), {}, 2, {{3, 4}}},
      {"sgd_weight_decay_no_momentum", sgd, 17, sgd_inputs({2, 3, 3, 3}, 0.05, 7), {{"weight_decay", 0.01f}}, 2},
      {"sgd_momentum_first_step", sgd, 17, sgd_inputs({5, 7}, 0.1, 1), {{"momentum", 0.9f}}, 2},
      {"sgd_momentum_dampening", sgd, 17, sgd_inputs({4, 3, 2, 2}, 0.2, 4),
       {{"momentum", 0.9f}, {"dampening", 0.3f}, {"weight_decay", 1e-3f}}, 2},
      {"sgd_nesterov", sgd, 17, sgd_inputs({1000}, 0.01, 3),
       {{"momentum", 0.8f}, {"nesterov", int64_t{1}}, {"weight_decay", 5e-4f}}, 2},
      {"adamw_first_step", adamw, 17, adamw_inputs({6, 5}, 1e-3, 1), {}, 3, {{6, 5}}},
      {"adamw_later_step", adamw, 17, adamw_inputs({2, 4, 3, 3}, 3e-3, 9),
       {{"beta1", 0.8f}, {"beta2", 0.99f}, {"epsilon", 1e-6f}, {"weight_decay", 0.1f}}, 3},
      {"adamw_no_weight_decay", adamw, 17, adamw_inputs({1031}, 1e-2, 2), {{"weight_decay", 0.0f}}, 3},
  };
}

}  // namespace ucudnn_test
