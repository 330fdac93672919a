// Naive double-precision references of the activation_grad family (docs/TRAINING.md), written from
// the definitions, not from the kernels' shared math (runtime/ops/activation_grad.h):
//   ActivationGrad: dX = dY · f'(X), f' as PyTorch defines it at the kinks (Relu'(0) = 0; LeakyRelu'
//                   and Elu' take the negative branch at 0; HardSigmoid' = alpha where 0 < alpha·x +
//                   beta < 1; HardSwish' = 0 below -3, 1 above 3, (2x + 3)/6 between; Clip passes
//                   where low <= x <= high).
//   PReluGrad:      dX = x > 0 ? dY : slope·dY; dSlope[j] = Σ_{elements on slope j, x <= 0} x·dY.
//   DropoutTrain:   u_i = top 24 bits of mix(mix(seed) + (i + 1)·0x9E3779B97F4A7C15) / 2^24 (mix:
//                   splitmix64's finalizer), mask_i = u_i >= ratio ? 1/(1 - ratio) : 0, Y = X·mask.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "tests/reference/training_reference.h"

namespace ucudnn::reference {

namespace {

Tensor zeros(const Shape& shape) { return std::move(Tensor::allocate(DType::kFloat32, shape)).value(); }

double at(const Tensor& t, int64_t i) { return static_cast<double>(t.data<float>()[i]); }

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

Expected<double> derivative(const ir::Node& node, double x, double low, double high) {
  const std::string& activation = node.attrs.get_string("activation");
  const double alpha = node.attrs.get_float("alpha"), beta = node.attrs.get_float("beta");
  if (activation == "Relu") return x > 0 ? 1.0 : 0.0;
  if (activation == "LeakyRelu") return x > 0 ? 1.0 : alpha;
  if (activation == "Sigmoid") return sigmoid(x) * (1 - sigmoid(x));
  if (activation == "Tanh") return 1 - std::tanh(x) * std::tanh(x);
  if (activation == "HardSigmoid") {
    const double v = alpha * x + beta;
    return v > 0 && v < 1 ? alpha : 0.0;
  }
  if (activation == "HardSwish") return x < -3 ? 0.0 : x > 3 ? 1.0 : (2 * x + 3) / 6;
  if (activation == "Clip") return low <= x && x <= high ? 1.0 : 0.0;
  if (activation == "Elu") return x > 0 ? 1.0 : alpha * std::exp(x);
  return invalid_argument(node.describe() + ": no reference for activation '" + activation + "'");
}

Expected<std::vector<Tensor>> activation_grad(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const double inf = std::numeric_limits<double>::infinity();
  const double low = in.size() > 2 && in[2] != nullptr ? at(*in[2], 0) : -inf;
  const double high = in.size() > 3 && in[3] != nullptr ? at(*in[3], 0) : inf;
  Tensor dx = zeros(in[1]->shape());
  for (int64_t i = 0; i < dx.numel(); ++i) {
    UCUDNN_ASSIGN_OR_RETURN(const double d, derivative(node, at(*in[1], i), low, high));
    dx.data<float>()[i] = static_cast<float>(at(*in[0], i) * d);
  }
  return std::vector<Tensor>{std::move(dx)};
}

// The element of `slope` (right-aligned to `x`, broadcast where its dim is 1) that X's element `flat` uses.
int64_t slope_index(int64_t flat, const Shape& x, const Shape& slope) {
  int64_t index = 0, stride = 1;
  for (int64_t d = static_cast<int64_t>(x.size()) - 1; d >= 0; --d) {
    const int64_t coordinate = flat % x[d];
    flat /= x[d];
    const int64_t sd = d - static_cast<int64_t>(x.size() - slope.size());
    if (sd < 0) continue;
    if (slope[sd] != 1) index += coordinate * stride;
    stride *= slope[sd];
  }
  return index;
}

Expected<std::vector<Tensor>> prelu_grad(const std::vector<const Tensor*>& in) {
  const Tensor &dy = *in[0], &x = *in[1], &slope = *in[2];
  Tensor dx = zeros(x.shape());
  std::vector<double> dslope(static_cast<size_t>(slope.numel()), 0.0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t j = slope_index(i, x.shape(), slope.shape());
    const double v = at(x, i), g = at(dy, i);
    dx.data<float>()[i] = static_cast<float>(v > 0 ? g : at(slope, j) * g);
    if (v <= 0) dslope[j] += v * g;
  }
  Tensor ds = zeros(slope.shape());
  for (int64_t j = 0; j < slope.numel(); ++j) ds.data<float>()[j] = static_cast<float>(dslope[j]);
  return std::vector<Tensor>{std::move(dx), std::move(ds)};
}

uint64_t splitmix_finalizer(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Expected<std::vector<Tensor>> dropout_train(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const double ratio = node.attrs.get_float("ratio");
  const uint64_t seed = static_cast<uint64_t>(in[1]->data<int64_t>()[0]);
  Tensor y = zeros(in[0]->shape()), mask = zeros(in[0]->shape());
  const uint64_t key = splitmix_finalizer(seed);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const uint64_t bits = splitmix_finalizer(key + (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull);
    const double u = std::ldexp(static_cast<double>(bits >> 40), -24);
    const double m = u >= ratio ? 1.0 / (1.0 - ratio) : 0.0;
    mask.data<float>()[i] = static_cast<float>(m);
    y.data<float>()[i] = static_cast<float>(at(*in[0], i) * m);
  }
  return std::vector<Tensor>{std::move(y), std::move(mask)};
}

}  // namespace

Expected<std::vector<Tensor>> activation_grad_reference(const ir::Node& node,
                                                        const std::vector<const Tensor*>& inputs) {
  switch (node.op) {
    case OpKind::kActivationGrad: return activation_grad(node, inputs);
    case OpKind::kPReluGrad: return prelu_grad(inputs);
    case OpKind::kDropoutTrain: return dropout_train(node, inputs);
    default: return unsupported("no activation_grad reference for " + node.describe());
  }
}

}  // namespace ucudnn::reference
