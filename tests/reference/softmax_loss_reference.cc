// Naive double-precision references of the softmax_loss family (docs/TRAINING.md), written from
// the definitions, not from the kernels' formulas:
//   SoftmaxGrad:     dX_i = Σ_j dY_j · ∂y_j/∂x_i with the softmax Jacobian y_j(δ_ij − y_i).
//   LogSoftmaxGrad:  dX_i = Σ_j dY_j · (δ_ij − p_i), p = exp(Y) (the log-softmax Jacobian).
//   SoftmaxCrossEntropyMean: log p from log Σ exp in double; loss = −(1/N) Σ_n Σ_c q_nc log p_nc,
//                    q = (1 − ε)·onehot + ε/C; labels outside [0, C) are an InvalidArgument.
//   SoftmaxCrossEntropyMeanGrad: dLoss · (p − q) / N, p = exp(log_prob).
//   NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss (the ONNX ops): element i of [N, d...] with class
//                    c = target_i gives -w_c · log p (p = X for the first, the softmax over axis 1 of the
//                    scores for the second), nothing where c = ignore_index; "mean" divides the sum by Σ w_c
//                    over the elements counted. Classes outside [0, C) are an InvalidArgument.
//   ReduceSum:       every input element added into the output element it reduces to.
//   Expand:          every output element read from the input element broadcasting maps it to.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "tests/reference/training_reference.h"

namespace ucudnn::reference {

namespace {

Tensor zeros(DType dtype, const Shape& shape) { return std::move(Tensor::allocate(dtype, shape)).value(); }

double at(const Tensor& t, int64_t i) { return static_cast<double>(t.data<float>()[i]); }

// Coordinates of flat index i in `shape`.
std::vector<int64_t> coordinates(int64_t i, const Shape& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

Expected<std::vector<Tensor>> softmax_grad(const ir::Node& node, const std::vector<const Tensor*>& in, bool log) {
  const Tensor &dy = *in[0], &y = *in[1];
  const Shape& shape = y.shape();
  const int64_t axis = normalize_axis(node.attrs.get_int("axis"), y.rank());
  if (axis < 0) return invalid_argument(node.describe() + ": axis out of range");
  const int64_t n = shape[axis];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  Tensor dx = zeros(DType::kFloat32, shape);
  for (int64_t e = 0; e < y.numel(); ++e) {
    const int64_t i = (e / inner) % n, first = e - i * inner;  // e's position on its line, the line's start
    const double yi = at(y, e);
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t ej = first + j * inner;
      const double delta = i == j ? 1.0 : 0.0;
      sum += log ? at(dy, ej) * (delta - std::exp(yi)) : at(dy, ej) * at(y, ej) * (delta - yi);
    }
    dx.data<float>()[e] = static_cast<float>(sum);
  }
  return std::vector<Tensor>{std::move(dx)};
}

Status check_labels(const ir::Node& node, const Tensor& labels, int64_t classes) {
  for (int64_t i = 0; i < labels.numel(); ++i) {
    const int64_t l = labels.data<int64_t>()[i];
    if (l < 0 || l >= classes)
      return invalid_argument(node.describe() + ": label " + std::to_string(l) + " at index " + std::to_string(i) +
                              " is outside [0, " + std::to_string(classes) + ")");
  }
  return Status::ok();
}

// q_rc of the smoothed one-hot target.
double target(const ir::Node& node, const Tensor& labels, int64_t r, int64_t c, int64_t classes) {
  const double smoothing = node.attrs.get_float("label_smoothing");
  return (labels.data<int64_t>()[r] == c ? 1.0 - smoothing : 0.0) + smoothing / static_cast<double>(classes);
}

Expected<std::vector<Tensor>> loss(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Tensor &scores = *in[0], &labels = *in[1];
  const int64_t rows = scores.dim(0), classes = scores.dim(1);
  UCUDNN_RETURN_IF_ERROR(check_labels(node, labels, classes));
  Tensor total = zeros(DType::kFloat32, {});
  Tensor log_prob = zeros(DType::kFloat32, scores.shape());
  double sum = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double max = at(scores, r * classes);
    for (int64_t c = 1; c < classes; ++c) max = std::max(max, at(scores, r * classes + c));
    double exp_sum = 0;
    for (int64_t c = 0; c < classes; ++c) exp_sum += std::exp(at(scores, r * classes + c) - max);
    const double log_z = max + std::log(exp_sum);
    for (int64_t c = 0; c < classes; ++c) {
      const double lp = at(scores, r * classes + c) - log_z;
      log_prob.data<float>()[r * classes + c] = static_cast<float>(lp);
      sum -= target(node, labels, r, c, classes) * lp;
    }
  }
  total.data<float>()[0] = rows == 0 ? 0.0f : static_cast<float>(sum / static_cast<double>(rows));
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(total));
  outputs.push_back(std::move(log_prob));
  return outputs;
}

Expected<std::vector<Tensor>> loss_grad(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Tensor &d_loss = *in[0], &log_prob = *in[1], &labels = *in[2];
  const int64_t rows = log_prob.dim(0), classes = log_prob.dim(1);
  UCUDNN_RETURN_IF_ERROR(check_labels(node, labels, classes));
  Tensor d_scores = zeros(DType::kFloat32, log_prob.shape());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < classes; ++c) {
      const double p = std::exp(at(log_prob, r * classes + c));
      d_scores.data<float>()[r * classes + c] =
          static_cast<float>(at(d_loss, 0) * (p - target(node, labels, r, c, classes)) / static_cast<double>(rows));
    }
  return std::vector<Tensor>{std::move(d_scores)};
}

// The ONNX losses: X or scores [N, C, d...], target [N, d...] (int64), weight [C]?
Expected<std::vector<Tensor>> onnx_loss(const ir::Node& node, const std::vector<const Tensor*>& in, bool softmax) {
  const Tensor &x = *in[0], &t = *in[1];
  const Tensor* weight = in.size() > 2 ? in[2] : nullptr;
  const int64_t batch = x.dim(0), classes = x.dim(1), inner = x.numel() / std::max<int64_t>(1, batch * classes);
  Tensor log_prob = zeros(DType::kFloat32, x.shape());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t i = 0; i < inner; ++i) {
      auto element = [&](int64_t c) { return (n * classes + c) * inner + i; };
      double log_z = 0;
      if (softmax) {
        double max = at(x, element(0));
        for (int64_t c = 1; c < classes; ++c) max = std::max(max, at(x, element(c)));
        double exp_sum = 0;
        for (int64_t c = 0; c < classes; ++c) exp_sum += std::exp(at(x, element(c)) - max);
        log_z = max + std::log(exp_sum);
      }
      for (int64_t c = 0; c < classes; ++c)
        log_prob.data<float>()[element(c)] = static_cast<float>(at(x, element(c)) - log_z);
    }
  const bool has_ignore = node.attrs.has("ignore_index");
  const int64_t ignore = has_ignore ? node.attrs.get_int("ignore_index") : 0;
  const std::string reduction = node.attrs.get_string("reduction");
  Tensor per_element = zeros(DType::kFloat32, t.shape());
  double sum = 0, weight_sum = 0;
  for (int64_t e = 0; e < t.numel(); ++e) {
    const int64_t c = t.data<int64_t>()[e];
    if (has_ignore && c == ignore) continue;
    if (c < 0 || c >= classes)
      return invalid_argument(node.describe() + ": class " + std::to_string(c) + " at index " + std::to_string(e) +
                              " is outside [0, " + std::to_string(classes) + ")");
    const int64_t n = e / inner, i = e % inner;
    const double w = weight ? at(*weight, c) : 1.0;
    const double l = -w * static_cast<double>(log_prob.data<float>()[(n * classes + c) * inner + i]);
    per_element.data<float>()[e] = static_cast<float>(l);
    sum += l;
    weight_sum += w;
  }
  std::vector<Tensor> outputs;
  if (reduction == "none") {
    outputs.push_back(std::move(per_element));
  } else {
    Tensor total = zeros(DType::kFloat32, {});
    total.data<float>()[0] = static_cast<float>(reduction == "sum" ? sum : sum / weight_sum);
    outputs.push_back(std::move(total));
  }
  if (softmax && node.outputs.size() > 1) outputs.push_back(std::move(log_prob));
  return outputs;
}

Expected<std::vector<Tensor>> reduce_sum(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  const Shape& shape = x.shape();
  std::vector<int64_t> axes;
  if (in.size() > 1 && in[1] != nullptr) {
    UCUDNN_ASSIGN_OR_RETURN(axes, in[1]->to_int64_vector());
  }
  const bool keepdims = node.attrs.get_int("keepdims") != 0;
  const bool noop = axes.empty() && node.attrs.get_int("noop_with_empty_axes") != 0;
  std::vector<bool> reduce(shape.size(), axes.empty() && !noop);
  for (int64_t a : axes) reduce[static_cast<size_t>(normalize_axis(a, x.rank()))] = true;
  Shape out;  // with keepdims; dropped dims removed at the end
  for (size_t d = 0; d < shape.size(); ++d) out.push_back(reduce[d] ? 1 : shape[d]);
  std::vector<double> sums(static_cast<size_t>(shape_numel(out)), 0.0);
  const std::vector<int64_t> out_strides = shape_strides(out);
  for (int64_t e = 0; e < x.numel(); ++e) {
    const std::vector<int64_t> c = coordinates(e, shape);
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d) o += (reduce[d] ? 0 : c[d]) * out_strides[d];
    sums[static_cast<size_t>(o)] += at(x, e);
  }
  Shape final_shape;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!reduce[d] || keepdims) final_shape.push_back(out[d]);
  Tensor y = zeros(DType::kFloat32, final_shape);
  for (size_t i = 0; i < sums.size(); ++i) y.data<float>()[i] = static_cast<float>(sums[i]);
  return std::vector<Tensor>{std::move(y)};
}

Expected<std::vector<Tensor>> expand(const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> target_shape, in[1]->to_int64_vector());
  const Shape& s = x.shape();
  Shape out(std::max(s.size(), target_shape.size()));
  for (size_t k = 0; k < out.size(); ++k) {  // k counts dims from the right
    const int64_t a = k < s.size() ? s[s.size() - 1 - k] : 1;
    const int64_t b = k < target_shape.size() ? target_shape[target_shape.size() - 1 - k] : 1;
    if (a != b && a != 1 && b != 1) return invalid_argument("Expand: shapes do not broadcast");
    out[out.size() - 1 - k] = a == 1 ? b : a;
  }
  Tensor y = zeros(x.dtype(), out);
  const size_t element = dtype_size(x.dtype());
  const std::vector<int64_t> in_strides = shape_strides(s);
  for (int64_t e = 0; e < y.numel(); ++e) {
    const std::vector<int64_t> c = coordinates(e, out);
    int64_t source = 0;
    for (size_t d = 0; d < s.size(); ++d) {
      const size_t od = d + out.size() - s.size();
      source += (s[d] == 1 ? 0 : c[od]) * in_strides[d];
    }
    std::memcpy(static_cast<char*>(y.raw()) + e * element, static_cast<const char*>(x.raw()) + source * element,
                element);
  }
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

Expected<std::vector<Tensor>> softmax_loss_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  switch (node.op) {
    case OpKind::kSoftmaxGrad: return softmax_grad(node, inputs, false);
    case OpKind::kLogSoftmaxGrad: return softmax_grad(node, inputs, true);
    case OpKind::kSoftmaxCrossEntropyMean: return loss(node, inputs);
    case OpKind::kSoftmaxCrossEntropyMeanGrad: return loss_grad(node, inputs);
    case OpKind::kNegativeLogLikelihoodLoss: return onnx_loss(node, inputs, false);
    case OpKind::kSoftmaxCrossEntropyLoss: return onnx_loss(node, inputs, true);
    case OpKind::kReduceSum: return reduce_sum(node, inputs);
    case OpKind::kExpand: return expand(inputs);
    default: return unsupported("no softmax_loss reference for " + node.describe());
  }
}

}  // namespace ucudnn::reference
