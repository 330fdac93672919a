// Naive double-precision references of the batch_norm_train family, from the definitions
// (runtime/ops/batch_norm_train.cc), independently of the kernels. Over the M = N · prod(spatial)
// values x of a channel:
//   BatchNormTrain: mean = Σx / M, var = Σ(x − mean)² / M, y = (x − mean) / sqrt(var + ε) · scale + B,
//     new_running_mean = running_mean · momentum + mean · (1 − momentum),
//     new_running_var = running_var · momentum + var · M / (M − 1) · (1 − momentum),
//     saved_mean = mean, saved_inv_std = 1 / sqrt(var + ε).
//   BatchNormGrad (x̂ = (x − saved_mean) · saved_inv_std): dBias = Σ dy, dScale = Σ dy · x̂,
//     dx = scale · saved_inv_std · (dy − dBias / M − x̂ · dScale / M).
// The fused forms (Note [batch norm with its activation], runtime/ops/batch_norm_train.cc) as the
// unfused nodes they replace compute them, one after the other: BatchNormTrain's y, then Add(y, z),
// then Relu, max(·, 0); BatchNormGrad with activation Relu, first ActivationGrad's dy · (Y > 0) with Y
// its input 5, then the plain formulas on that, and dZ (output 3) the masked dy itself.
#include <algorithm>
#include <cmath>
#include <string>

#include "tests/reference/training_reference.h"

namespace ucudnn::reference {

namespace {

// The values of channel c of X [N, C, ...]: calls visit(index) for each, in memory order.
template <typename Visit>
void for_channel(const Shape& x, int64_t c, Visit visit) {
  const int64_t batch = x[0], channels = x[1];
  const int64_t inner = batch * channels == 0 ? 0 : shape_numel(x) / (batch * channels);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < inner; ++i) visit((n * channels + c) * inner + i);
}

Tensor to_float_tensor(const Shape& shape, const std::vector<double>& values) {
  std::vector<float> rounded(values.begin(), values.end());
  return Tensor::from_floats(shape, rounded);
}

double at(const Tensor* t, int64_t i) { return t->data<float>()[i]; }

// The node's `activation` is "Relu" (absent: none).
bool has_relu(const ir::Node& node) {
  return node.attrs.has("activation") && node.attrs.get_string("activation") == "Relu";
}

// Input i when the node has it, else nullptr.
const Tensor* optional_input(const std::vector<const Tensor*>& in, size_t i) { return i < in.size() ? in[i] : nullptr; }

std::vector<Tensor> batch_norm_train(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Shape& shape = in[0]->shape();
  const int64_t channels = shape[1];
  const double m = static_cast<double>(shape_numel(shape) / channels);
  const double epsilon = node.attrs.get_float("epsilon"), momentum = node.attrs.get_float("momentum");
  std::vector<double> y(static_cast<size_t>(shape_numel(shape)));
  std::vector<double> running_mean(channels), running_var(channels), saved_mean(channels), saved_inv_std(channels);
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0.0, squares = 0.0;
    for_channel(shape, c, [&](int64_t i) { sum += at(in[0], i); });
    const double mean = sum / m;
    for_channel(shape, c, [&](int64_t i) { squares += (at(in[0], i) - mean) * (at(in[0], i) - mean); });
    const double var = squares / m, inv_std = 1.0 / std::sqrt(var + epsilon);
    for_channel(shape, c, [&](int64_t i) { y[i] = (at(in[0], i) - mean) * inv_std * at(in[1], c) + at(in[2], c); });
    running_mean[c] = at(in[3], c) * momentum + mean * (1.0 - momentum);
    running_var[c] = at(in[4], c) * momentum + var * m / (m - 1.0) * (1.0 - momentum);
    saved_mean[c] = mean;
    saved_inv_std[c] = inv_std;
  }
  if (const Tensor* z = optional_input(in, 5)) {  // the residual Add, then the Relu
    for (size_t i = 0; i < y.size(); ++i) y[i] += at(z, static_cast<int64_t>(i));
  }
  if (has_relu(node))
    for (double& v : y) v = std::max(v, 0.0);
  std::vector<Tensor> outputs;
  outputs.push_back(to_float_tensor(shape, y));
  for (const std::vector<double>* v : {&running_mean, &running_var, &saved_mean, &saved_inv_std})
    outputs.push_back(to_float_tensor({channels}, *v));
  return outputs;
}

std::vector<Tensor> batch_norm_grad(const ir::Node& node, const std::vector<const Tensor*>& in, size_t outputs_wanted) {
  const Shape& shape = in[1]->shape();
  const int64_t channels = shape[1];
  const double m = static_cast<double>(shape_numel(shape) / channels);
  std::vector<double> dy(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = at(in[0], static_cast<int64_t>(i));
  if (has_relu(node))  // ActivationGrad of Relu on its output: 1 where y > 0
    for (size_t i = 0; i < dy.size(); ++i) dy[i] = at(in[5], static_cast<int64_t>(i)) > 0.0 ? dy[i] : 0.0;
  std::vector<double> dx(dy.size()), dscale(channels), dbias(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double mean = at(in[3], c), inv_std = at(in[4], c);
    auto normalized = [&](int64_t i) { return (at(in[1], i) - mean) * inv_std; };
    for_channel(shape, c, [&](int64_t i) {
      dbias[c] += dy[i];
      dscale[c] += dy[i] * normalized(i);
    });
    for_channel(shape, c, [&](int64_t i) {
      dx[i] = at(in[2], c) * inv_std * (dy[i] - dbias[c] / m - normalized(i) * dscale[c] / m);
    });
  }
  std::vector<Tensor> outputs;
  outputs.push_back(to_float_tensor(shape, dx));
  outputs.push_back(to_float_tensor({channels}, dscale));
  outputs.push_back(to_float_tensor({channels}, dbias));
  if (outputs_wanted > 3) outputs.push_back(to_float_tensor(shape, dy));  // dZ
  return outputs;
}

}  // namespace

Expected<std::vector<Tensor>> batch_norm_train_reference(const ir::Node& node,
                                                         const std::vector<const Tensor*>& inputs) {
  switch (node.op) {
    case OpKind::kBatchNormTrain: return batch_norm_train(node, inputs);
    case OpKind::kBatchNormGrad: return batch_norm_grad(node, inputs, node.outputs.size());
    default: return unsupported("no batch_norm_train reference for " + node.describe());
  }
}

}  // namespace ucudnn::reference
