// Naive double-precision references of the pooling_grad family (MaxPoolGrad, AveragePoolGrad),
// written from the definitions independently of the kernels (the window arithmetic is spelled
// out again here): for every window of the forward pool, MaxPoolGrad adds dY to the tap the
// forward max returns — the first maximum in row-major window order, or the last NaN of a window
// holding NaNs (PyTorch's choice) — and AveragePoolGrad adds dY / divisor to every tap inside the
// input, the divisor counting the taps inside the input, or inside the padded input with
// count_include_pad.
#include <algorithm>
#include <cmath>
#include <string>

#include "tests/reference/training_reference.h"

namespace ucudnn::reference {

namespace {

using Ints = std::vector<int64_t>;

// One spatial axis of a window pool.
struct Axis {
  int64_t in = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 1;
};

Ints ints_or(const ir::Attributes& attrs, const char* name, size_t n, int64_t fill) {
  return attrs.has(name) ? attrs.get_ints(name) : Ints(n, fill);
}

// The axes of dX [N, C, spatial...] (ONNX's formulas; ceil mode drops a last window starting
// past the input and its begin padding, as PyTorch); a 1-D pool gets a leading unit axis.
std::vector<Axis> pool_axes(const ir::Attributes& attrs, const Shape& x) {
  const size_t rank = x.size() - 2;
  const Ints kernel = attrs.get_ints("kernel_shape");
  const Ints strides = ints_or(attrs, "strides", rank, 1);
  const Ints dilations = ints_or(attrs, "dilations", rank, 1);
  const Ints pads = ints_or(attrs, "pads", 2 * rank, 0);
  const bool ceil_mode = attrs.has("ceil_mode") && attrs.get_int("ceil_mode") != 0;
  const std::string auto_pad = attrs.has("auto_pad") ? attrs.get_string("auto_pad") : "NOTSET";
  std::vector<Axis> axes;
  if (rank == 1) axes.push_back(Axis{});
  for (size_t i = 0; i < rank; ++i) {
    Axis a{x[i + 2], kernel[i], strides[i], dilations[i], 0, 0, 1};
    const int64_t extent = (a.kernel - 1) * a.dilation + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      a.out = (a.in + a.stride - 1) / a.stride;
      const int64_t total = std::max<int64_t>(0, (a.out - 1) * a.stride + extent - a.in);
      a.pad_begin = auto_pad == "SAME_LOWER" ? (total + 1) / 2 : total / 2;
      a.pad_end = total - a.pad_begin;
    } else {
      if (auto_pad == "NOTSET") {
        a.pad_begin = pads[i];
        a.pad_end = pads[i + rank];
      }
      const double o = static_cast<double>(a.in + a.pad_begin + a.pad_end - extent) / static_cast<double>(a.stride);
      a.out = static_cast<int64_t>(ceil_mode ? std::ceil(o) : std::floor(o)) + 1;
      if (ceil_mode && (a.out - 1) * a.stride >= a.in + a.pad_begin) --a.out;
    }
    axes.push_back(a);
  }
  return axes;
}

// Positions of the taps of window o along `a` (may lie in the padding).
Ints taps(const Axis& a, int64_t o) {
  Ints positions;
  for (int64_t k = 0; k < a.kernel; ++k) positions.push_back(o * a.stride - a.pad_begin + k * a.dilation);
  return positions;
}

// A float32 tensor holding `values` rounded once.
Tensor to_float_tensor(const Shape& shape, const std::vector<double>& values) {
  std::vector<float> rounded(values.begin(), values.end());
  return Tensor::from_floats(shape, rounded);
}

bool inside(const Axis& a, int64_t position) { return position >= 0 && position < a.in; }

// Calls visit(plane, oh, ow, dy) for every window of every (n, c) plane.
template <typename Visit>
void for_each_window(const std::vector<Axis>& axes, const Tensor& dy, Visit visit) {
  const Axis& ah = axes[0];
  const Axis& aw = axes[1];
  const int64_t planes = dy.dim(0) * dy.dim(1);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < ah.out; ++oh)
      for (int64_t ow = 0; ow < aw.out; ++ow) visit(p, oh, ow, dy.data<float>()[(p * ah.out + oh) * aw.out + ow]);
}

Expected<std::vector<Tensor>> max_pool_grad(const ir::Node& node, const Tensor& dy, const Tensor& x) {
  const std::vector<Axis> axes = pool_axes(node.attrs, x.shape());
  const Axis& ah = axes[0];
  const Axis& aw = axes[1];
  const int64_t plane_size = ah.in * aw.in;
  std::vector<double> dx(static_cast<size_t>(x.numel()), 0.0);
  for_each_window(axes, dy, [&](int64_t p, int64_t oh, int64_t ow, double g) {
    int64_t chosen = -1, last_nan = -1;
    double best = 0.0;
    for (int64_t ih : taps(ah, oh))
      for (int64_t iw : taps(aw, ow)) {
        if (!inside(ah, ih) || !inside(aw, iw)) continue;
        const int64_t at = p * plane_size + ih * aw.in + iw;
        const double v = x.data<float>()[at];
        if (std::isnan(v)) last_nan = at;
        else if (chosen < 0 || v > best) chosen = at, best = v;  // strictly greater: the first maximum stays
      }
    if (last_nan >= 0) chosen = last_nan;
    if (chosen >= 0) dx[static_cast<size_t>(chosen)] += g;
  });
  std::vector<Tensor> outputs;
  outputs.push_back(to_float_tensor(x.shape(), dx));
  return outputs;
}

Expected<std::vector<Tensor>> average_pool_grad(const ir::Node& node, const Tensor& dy) {
  Shape shape = node.attrs.get_ints("input_shape");
  shape[0] = dy.dim(0);
  const std::vector<Axis> axes = pool_axes(node.attrs, shape);
  const Axis& ah = axes[0];
  const Axis& aw = axes[1];
  const bool include_pad = node.attrs.get_int("count_include_pad") != 0;
  std::vector<double> dx(static_cast<size_t>(shape_numel(shape)), 0.0);
  for_each_window(axes, dy, [&](int64_t p, int64_t oh, int64_t ow, double g) {
    int64_t count = 0;
    for (int64_t ih : taps(ah, oh))
      for (int64_t iw : taps(aw, ow)) {
        const bool in_padded = ih < ah.in + ah.pad_end && iw < aw.in + aw.pad_end;
        count += include_pad ? in_padded : inside(ah, ih) && inside(aw, iw);
      }
    for (int64_t ih : taps(ah, oh))
      for (int64_t iw : taps(aw, ow))
        if (inside(ah, ih) && inside(aw, iw)) dx[static_cast<size_t>((p * ah.in + ih) * aw.in + iw)] += g / count;
  });
  std::vector<Tensor> outputs;
  outputs.push_back(to_float_tensor(shape, dx));
  return outputs;
}

}  // namespace

Expected<std::vector<Tensor>> pooling_grad_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  switch (node.op) {
    case OpKind::kMaxPoolGrad: return max_pool_grad(node, *inputs[0], *inputs[1]);
    case OpKind::kAveragePoolGrad: return average_pool_grad(node, *inputs[0]);
    default: return unsupported("no pooling_grad reference for " + node.describe());
  }
}

}  // namespace ucudnn::reference
