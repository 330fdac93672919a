// Naive double-precision references of the optimizer_update family (SgdUpdate, AdamWUpdate), written
// from torch.optim.SGD / torch.optim.AdamW's definitions (docs/TRAINING.md), one element at a time:
//   SGD:   g = grad + wd·p; with momentum: buf = (step == 1 ? g : momentum·buf + (1 − dampening)·g),
//          g = nesterov ? g + momentum·buf : buf; p = p − lr·g (momentum 0: buf passes through).
//   AdamW: p = p·(1 − lr·wd); m = β1·m + (1 − β1)·g; v = β2·v + (1 − β2)·g²;
//          p = p − lr · (m / (1 − β1^t)) / (sqrt(v / (1 − β2^t)) + ε).
#include <cmath>
#include <string>

#include "runtime/core/dtype.h"
#include "tests/reference/training_reference.h"

namespace ucudnn::reference {

namespace {

Tensor like(const Tensor& t) { return std::move(Tensor::allocate(DType::kFloat32, t.shape())).value(); }

double value(const Tensor& t, int64_t i) { return static_cast<double>(t.data<float>()[i]); }

Expected<std::vector<Tensor>> sgd(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const double momentum = node.attrs.get_float("momentum"), dampening = node.attrs.get_float("dampening");
  const double weight_decay = node.attrs.get_float("weight_decay");
  const bool nesterov = node.attrs.get_int("nesterov") != 0;
  const double lr = value(*in[3], 0);
  const int64_t step = in[4]->data<int64_t>()[0];
  if (step < 1) return invalid_argument(node.describe() + ": step must be >= 1");
  std::vector<Tensor> out{like(*in[0]), like(*in[0])};
  for (int64_t i = 0; i < in[0]->numel(); ++i) {
    const double p = value(*in[0], i);
    double g = value(*in[1], i) + weight_decay * p;
    double buffer = value(*in[2], i);
    if (momentum != 0) {
      buffer = step == 1 ? g : momentum * buffer + (1 - dampening) * g;
      g = nesterov ? g + momentum * buffer : buffer;
    }
    out[0].data<float>()[i] = static_cast<float>(p - lr * g);
    out[1].data<float>()[i] = static_cast<float>(buffer);
  }
  return out;
}

Expected<std::vector<Tensor>> adamw(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const double beta1 = node.attrs.get_float("beta1"), beta2 = node.attrs.get_float("beta2");
  const double epsilon = node.attrs.get_float("epsilon"), weight_decay = node.attrs.get_float("weight_decay");
  const double lr = value(*in[4], 0);
  const int64_t step = in[5]->data<int64_t>()[0];
  if (step < 1) return invalid_argument(node.describe() + ": step must be >= 1");
  const double t = static_cast<double>(step);
  std::vector<Tensor> out{like(*in[0]), like(*in[0]), like(*in[0])};
  for (int64_t i = 0; i < in[0]->numel(); ++i) {
    const double g = value(*in[1], i);
    const double m = beta1 * value(*in[2], i) + (1 - beta1) * g;
    const double v = beta2 * value(*in[3], i) + (1 - beta2) * g * g;
    const double m_hat = m / (1 - std::pow(beta1, t)), v_hat = v / (1 - std::pow(beta2, t));
    const double p = value(*in[0], i) * (1 - lr * weight_decay) - lr * m_hat / (std::sqrt(v_hat) + epsilon);
    out[0].data<float>()[i] = static_cast<float>(p);
    out[1].data<float>()[i] = static_cast<float>(m);
    out[2].data<float>()[i] = static_cast<float>(v);
  }
  return out;
}

}  // namespace

Expected<std::vector<Tensor>> optimizer_update_reference(const ir::Node& node,
                                                         const std::vector<const Tensor*>& inputs) {
  switch (node.op) {
    case OpKind::kSgdUpdate: return sgd(node, inputs);
    case OpKind::kAdamWUpdate: return adamw(node, inputs);
    default: return unsupported("no optimizer_update reference for " + node.describe());
  }
}

}  // namespace ucudnn::reference
