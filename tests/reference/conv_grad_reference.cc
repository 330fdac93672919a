// Naive double-precision references of the conv_grad family (ConvGradData, ConvGradFilter), written
// from the definition of the forward convolution, independently of the kernels:
//
//   Y[n, m, oh, ow] = Σ_{c, kh, kw} X[n, g·Cg + c, oh·sh − pt + kh·dh, ow·sw − pl + kw·dw] · W[m, c, kh, kw]
//
// so dX[n, g·Cg + c, ih, iw] = Σ dY[n, m, oh, ow] · W[m, c, kh, kw] and dW[m, c, kh, kw] = Σ dY · X over
// every (n, oh, ow, and m or c) that reads that element. Explicit pads only (auto_pad NOTSET, as the
// shape rule requires); 1-D convolutions are 2-D ones with a unit height.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/reference/training_reference.h"

namespace ucudnn::reference {

namespace {

// One spatial axis of the forward convolution.
struct Axis {
  int64_t in = 1, kernel = 1, stride = 1, dilation = 1, pad = 0, out = 1;
};

std::vector<int64_t> ints_or(const ir::Node& node, const char* name, size_t count, int64_t fill) {
  return node.attrs.has(name) ? node.attrs.get_ints(name) : std::vector<int64_t>(count, fill);
}

// The axes (height, width) of a convolution of X `x` by W `w`; a 1-D one gets a unit height.
std::vector<Axis> axes_of(const ir::Node& node, const Shape& x, const Shape& w) {
  const size_t spatial = x.size() - 2;
  const std::vector<int64_t> strides = ints_or(node, "strides", spatial, 1);
  const std::vector<int64_t> dilations = ints_or(node, "dilations", spatial, 1);
  const std::vector<int64_t> pads = ints_or(node, "pads", 2 * spatial, 0);
  std::vector<Axis> axes(2);
  for (size_t d = 0; d < spatial; ++d) {
    Axis& a = axes[2 - spatial + d];
    a.in = x[2 + d];
    a.kernel = w[2 + d];
    a.stride = strides[d];
    a.dilation = dilations[d];
    a.pad = pads[d];
    a.out = (a.in + pads[d] + pads[spatial + d] - (a.kernel - 1) * a.dilation - 1) / a.stride + 1;
  }
  return axes;
}

Tensor float_tensor(const Shape& shape, const std::vector<double>& values) {
  std::vector<float> data(values.begin(), values.end());
  return Tensor::from_floats(shape, data);
}

// Calls f(x index, w index, y index) for every multiply-add of the forward convolution whose input
// position lies inside X.
template <typename F>
void for_each_tap(const ir::Node& node, const Shape& x, const Shape& w, F f) {
  const std::vector<Axis> ax = axes_of(node, x, w);
  const Axis& h = ax[0];
  const Axis& v = ax[1];
  const int64_t group = node.attrs.has("group") ? node.attrs.get_int("group") : 1;
  const int64_t batch = x[0], channels = x[1], filters = w[0], cg = channels / group, mg = filters / group;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t m = 0; m < filters; ++m)
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t oh = 0; oh < h.out; ++oh)
          for (int64_t ow = 0; ow < v.out; ++ow)
            for (int64_t kh = 0; kh < h.kernel; ++kh)
              for (int64_t kw = 0; kw < v.kernel; ++kw) {
                const int64_t ih = oh * h.stride - h.pad + kh * h.dilation;
                const int64_t iw = ow * v.stride - v.pad + kw * v.dilation;
                if (ih < 0 || ih >= h.in || iw < 0 || iw >= v.in) continue;
                const int64_t xi = ((n * channels + (m / mg) * cg + c) * h.in + ih) * v.in + iw;
                const int64_t wi = ((m * cg + c) * h.kernel + kh) * v.kernel + kw;
                const int64_t yi = ((n * filters + m) * h.out + oh) * v.out + ow;
                f(xi, wi, yi);
              }
}

}  // namespace

Expected<std::vector<Tensor>> conv_grad_reference(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  if (inputs.size() != 2 || inputs[0] == nullptr || inputs[1] == nullptr)
    return invalid_argument("the reference of " + node.describe() + " needs two inputs");
  if (node.op == OpKind::kConvGradData) {
    const Tensor& dy = *inputs[0];
    const Tensor& w = *inputs[1];
    Shape x = node.attrs.get_ints("input_shape");
    x[0] = dy.dim(0);
    std::vector<double> dx(static_cast<size_t>(shape_numel(x)), 0.0);
    const float* dyd = dy.data<float>();
    const float* wd = w.data<float>();
    for_each_tap(node, x, w.shape(), [&](int64_t xi, int64_t wi, int64_t yi) {
      dx[static_cast<size_t>(xi)] += static_cast<double>(dyd[yi]) * wd[wi];
    });
    return std::vector<Tensor>{float_tensor(x, dx)};
  }
  if (node.op == OpKind::kConvGradFilter) {
    const Tensor& x = *inputs[0];
    const Tensor& dy = *inputs[1];
    const Shape w = node.attrs.get_ints("filter_shape");
    std::vector<double> dw(static_cast<size_t>(shape_numel(w)), 0.0);
    const float* xd = x.data<float>();
    const float* dyd = dy.data<float>();
    for_each_tap(node, x.shape(), w, [&](int64_t xi, int64_t wi, int64_t yi) {
      dw[static_cast<size_t>(wi)] += static_cast<double>(dyd[yi]) * xd[xi];
    });
    return std::vector<Tensor>{float_tensor(w, dw)};
  }
  return unsupported("no conv_grad reference for " + node.describe());
}

}  // namespace ucudnn::reference
