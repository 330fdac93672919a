// Naive references (see elementwise_reference.h): index-by-index, no fast paths.
#include "tests/reference/elementwise_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "runtime/ir/fusion.h"
#include "tests/reference/element_access.h"
#include "tests/reference/reduction_reference.h"

namespace ucudnn::reference {

std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

namespace {

double unary(OpKind op, const ir::Attributes& attrs, double x) {
  switch (op) {
    case OpKind::kRelu: return x > 0 ? x : 0;
    case OpKind::kLeakyRelu: return x >= 0 ? x : attrs.get_float("alpha") * x;
    case OpKind::kSigmoid: return 1 / (1 + std::exp(-x));
    case OpKind::kTanh: return std::tanh(x);
    case OpKind::kHardSigmoid:
      return std::max(0.0, std::min(1.0, attrs.get_float("alpha") * x + attrs.get_float("beta")));
    case OpKind::kHardSwish: return x * std::max(0.0, std::min(1.0, x / 6 + 0.5));
    case OpKind::kElu: return x > 0 ? x : attrs.get_float("alpha") * (std::exp(x) - 1);
    case OpKind::kErf: return std::erf(x);
    case OpKind::kGelu:
      if (attrs.get_string("approximate") == "tanh")
        return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case OpKind::kSoftplus: return std::log(1 + std::exp(x));
    case OpKind::kSqrt: return std::sqrt(x);
    case OpKind::kExp: return std::exp(x);
    case OpKind::kLog: return std::log(x);
    case OpKind::kAbs: return std::fabs(x);
    case OpKind::kNeg: return -x;
    case OpKind::kReciprocal: return 1 / x;
    case OpKind::kSoftsign: return x / (1 + std::fabs(x));
    case OpKind::kCelu: {
      const double alpha = attrs.get_float("alpha");
      return std::max(0.0, x) + std::min(0.0, alpha * (std::exp(x / alpha) - 1));
    }
    case OpKind::kSelu: {
      const double alpha = attrs.get_float("alpha"), gamma = attrs.get_float("gamma");
      return gamma * (x > 0 ? x : alpha * (std::exp(x) - 1));
    }
    case OpKind::kThresholdedRelu: return x > attrs.get_float("alpha") ? x : 0;
    case OpKind::kShrink: {
      const double lambd = attrs.get_float("lambd"), bias = attrs.get_float("bias");
      return x < -lambd ? x + bias : x > lambd ? x - bias : 0;
    }
    case OpKind::kFloor: return std::floor(x);
    case OpKind::kCeil: return std::ceil(x);
    case OpKind::kRound: {  // halves to even
      const double r = std::round(x);
      return std::fabs(x - std::trunc(x)) == 0.5 ? 2 * std::round(x / 2) : r;
    }
    case OpKind::kSign: return x > 0 ? 1 : x < 0 ? -1 : 0;
    case OpKind::kSin: return std::sin(x);
    case OpKind::kCos: return std::cos(x);
    case OpKind::kTan: return std::tan(x);
    case OpKind::kAsin: return std::asin(x);
    case OpKind::kAcos: return std::acos(x);
    case OpKind::kAtan: return std::atan(x);
    case OpKind::kSinh: return std::sinh(x);
    case OpKind::kCosh: return std::cosh(x);
    case OpKind::kAsinh: return std::asinh(x);
    case OpKind::kAcosh: return std::acosh(x);
    case OpKind::kAtanh: return std::atanh(x);
    default: return NAN;
  }
}

Tensor binary(OpKind op, const Tensor& a, const Tensor& b) {
  const Shape out = broadcast_shape({&a, &b});
  Tensor c = make(a.dtype(), out);
  for (int64_t i = 0; i < c.numel(); ++i) {
    const Index index = unravel(i, out);
    const int64_t ia = broadcast_source(index, a.shape()), ib = broadcast_source(index, b.shape());
    if (is_integer(a.dtype())) {
      const int64_t x = get_int(a, ia), y = get_int(b, ib);
      const int64_t r = op == OpKind::kAdd ? x + y : op == OpKind::kSub ? x - y : op == OpKind::kMul ? x * y : x / y;
      put_int(c, i, r);
    } else {
      const double x = get(a, ia), y = get(b, ib);
      put(c, i, op == OpKind::kAdd   ? x + y
                : op == OpKind::kSub ? x - y
                : op == OpKind::kMul ? x * y
                : op == OpKind::kPow ? std::pow(x, y)
                                     : x / y);
    }
  }
  return c;
}

// Python's slice(start, end, step).indices(dim), enumerated.
std::vector<int64_t> slice_indices(int64_t start, int64_t end, int64_t step, int64_t dim) {
  auto adjust = [&](int64_t v) {
    if (v < 0) {
      v += dim;
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= dim) {
      v = step < 0 ? dim - 1 : dim;
    }
    return v;
  };
  std::vector<int64_t> out;
  const int64_t s = adjust(start), e = adjust(end);
  for (int64_t i = s; step > 0 ? i < e : i > e; i += step) out.push_back(i);
  return out;
}

Tensor slice(const Tensor& x, const std::vector<const Tensor*>& in) {
  const std::vector<int64_t> starts = ints(in[1]), ends = ints(in[2]);
  std::vector<int64_t> axes = ints(input(in, 3)), steps = ints(input(in, 4));
  std::vector<std::vector<int64_t>> picks(x.shape().size());
  for (size_t d = 0; d < picks.size(); ++d)
    for (int64_t i = 0; i < x.shape()[d]; ++i) picks[d].push_back(i);
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t axis = positive_axis(axes.empty() ? static_cast<int64_t>(k) : axes[k], x.rank());
    picks[axis] = slice_indices(starts[k], ends[k], steps.empty() ? 1 : steps[k], x.shape()[axis]);
  }
  Shape out;
  for (const auto& p : picks) out.push_back(static_cast<int64_t>(p.size()));
  Tensor y = make(x.dtype(), out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    Index index = unravel(i, out);
    for (size_t d = 0; d < index.size(); ++d) index[d] = picks[d][index[d]];
    copy_element(x, ravel(index, x.shape()), y, i);
  }
  return y;
}

Tensor pad(const Tensor& x, const std::vector<const Tensor*>& in, const ir::Attributes& attrs) {
  const std::vector<int64_t> pads = ints(in[1]);
  const std::vector<int64_t> axes = ints(input(in, 3));
  const size_t rank = x.shape().size();
  const size_t n = axes.empty() ? rank : axes.size();
  Index begin(rank, 0), end(rank, 0);
  for (size_t k = 0; k < n; ++k) {
    const int64_t axis = positive_axis(axes.empty() ? static_cast<int64_t>(k) : axes[k], x.rank());
    begin[axis] = pads[k];
    end[axis] = pads[k + n];
  }
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) out[d] = x.shape()[d] + begin[d] + end[d];
  Tensor y = make(x.dtype(), out);
  const Tensor* value = input(in, 2);
  const std::string mode = attrs.has("mode") ? attrs.get_string("mode") : "constant";
  // numpy.pad's reflect (pads shorter than the axis, as the shape rule requires) and edge.
  auto source = [&](int64_t i, int64_t size) {
    if (mode == "edge") return std::min(std::max<int64_t>(i, 0), size - 1);
    if (size == 1) return int64_t{0};
    while (i < 0 || i >= size) i = i < 0 ? -i : 2 * (size - 1) - i;
    return i;
  };
  for (int64_t i = 0; i < y.numel(); ++i) {
    Index index = unravel(i, out);
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      index[d] -= begin[d];
      if (mode != "constant") index[d] = source(index[d], x.shape()[d]);
      inside = inside && index[d] >= 0 && index[d] < x.shape()[d];
    }
    if (inside) copy_element(x, ravel(index, x.shape()), y, i);
    else if (value != nullptr) copy_element(*value, 0, y, i);
    // else: stays zero (allocate zero-fills)
  }
  return y;
}

// Resize of [N, C, (H,) W] over the spatial axes, the spec's formulas written out again in double:
// the scales given (or sizes / input sizes), the source coordinate per coordinate_transformation_mode,
// the nearest element by nearest_mode, the linear taps, or the cubic ones (the four nearest elements with
// Keys' weights for cubic_coeff_a; with exclude_outside those outside weigh 0 and the rest are renormalised),
// with the edge element outside the input.
Tensor resize(const Tensor& x, const std::vector<const Tensor*>& in, const ir::Attributes& attrs) {
  const size_t rank = x.shape().size();
  const Tensor* scales = in.size() > 2 && in[2] != nullptr && in[2]->numel() > 0 ? in[2] : nullptr;
  std::vector<double> scale(rank, 1.0);
  Shape out = x.shape();
  for (size_t d = 0; d < rank; ++d) {
    if (scales != nullptr) {
      scale[d] = scales->data<float>()[d];
      out[d] = static_cast<int64_t>(std::floor(static_cast<double>(x.dim(d)) * scale[d]));
    } else {
      out[d] = in[3]->data<int64_t>()[d];
      scale[d] = static_cast<double>(out[d]) / static_cast<double>(x.dim(d));
    }
  }
  const std::string& mode = attrs.get_string("coordinate_transformation_mode");
  const std::string& nearest = attrs.get_string("nearest_mode");
  auto source = [&](size_t d, int64_t i) {
    // The resized length is in · scale unrounded when scales are given (ONNX's reference).
    const double length_in = static_cast<double>(x.dim(d));
    const double length_out = scales != nullptr ? length_in * scale[d] : static_cast<double>(out[d]);
    if (mode == "align_corners") return length_out > 1 ? i * (length_in - 1) / (length_out - 1) : 0.0;
    if (mode == "asymmetric") return i / scale[d];
    if (mode == "pytorch_half_pixel") return length_out > 1 ? (i + 0.5) / scale[d] - 0.5 : 0.0;
    if (mode == "half_pixel_symmetric") {
      const double adjustment = static_cast<double>(out[d]) / (scale[d] * length_in);  // the whole output size
      return length_in / 2 * (1 - adjustment) + (i + 0.5) / scale[d] - 0.5;
    }
    return (i + 0.5) / scale[d] - 0.5;  // half_pixel
  };
  auto clamp = [](int64_t v, int64_t size) { return std::min(std::max<int64_t>(v, 0), size - 1); };
  auto pick = [&](size_t d, int64_t i) {
    const double s = source(d, i), f = std::floor(s), fraction = s - f;
    double picked = f;
    if (nearest == "round_prefer_floor") picked = fraction <= 0.5 ? f : f + 1;
    else if (nearest == "round_prefer_ceil") picked = fraction < 0.5 ? f : f + 1;
    else if (nearest == "ceil") picked = std::ceil(s);
    return clamp(static_cast<int64_t>(picked), x.dim(d));
  };
  // Along axis d: the (index, weight) pairs that make output index i.
  auto taps = [&](size_t d, int64_t i) -> std::vector<std::pair<int64_t, double>> {
    if (attrs.get_string("mode") == "nearest") return {{pick(d, i), 1.0}};
    const double s = source(d, i), f = std::floor(s);
    if (attrs.get_string("mode") == "cubic") {
      const double a = attrs.get_float("cubic_coeff_a");
      auto keys = [a](double x) {  // Keys' cubic convolution kernel
        x = std::fabs(x);
        if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
        if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
        return 0.0;
      };
      std::vector<std::pair<int64_t, double>> cubic;
      double kept = 0;
      for (int64_t k = -1; k <= 2; ++k) {
        const int64_t at = static_cast<int64_t>(f) + k;
        const bool outside = at < 0 || at >= x.dim(d);
        const bool excluded = outside && attrs.get_int("exclude_outside") != 0;
        const double weight = excluded ? 0.0 : keys(s - static_cast<double>(at));
        kept += weight;
        cubic.push_back({clamp(at, x.dim(d)), weight});
      }
      for (auto& tap : cubic) tap.second /= kept;
      return cubic;
    }
    return {{clamp(static_cast<int64_t>(f), x.dim(d)), 1 - (s - f)},
            {clamp(static_cast<int64_t>(f) + 1, x.dim(d)), s - f}};
  };
  const bool two_d = rank == 4;
  const int64_t h_in = two_d ? x.dim(2) : 1, h_out = two_d ? out[2] : 1, w_in = x.dim(rank - 1), w_out = out[rank - 1];
  Tensor y = make(DType::kFloat32, out);
  for (int64_t plane = 0; plane < x.dim(0) * x.dim(1); ++plane)
    for (int64_t oh = 0; oh < h_out; ++oh)
      for (int64_t ow = 0; ow < w_out; ++ow) {
        double sum = 0.0;
        const auto rows = two_d ? taps(2, oh) : std::vector<std::pair<int64_t, double>>{{0, 1.0}};
        for (const auto& [ih, wh] : rows)
          for (const auto& [iw, ww] : taps(rank - 1, ow))
            sum += wh * ww * x.data<float>()[(plane * h_in + ih) * w_in + iw];
        y.data<float>()[(plane * h_out + oh) * w_out + ow] = static_cast<float>(sum);
      }
  return y;
}

Tensor transpose(const Tensor& x, const ir::Attributes& attrs) {
  const size_t rank = x.shape().size();
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  if (attrs.has("perm")) perm = attrs.get_ints("perm");
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) out[i] = x.shape()[perm[i]];
  Tensor y = make(x.dtype(), out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const Index index = unravel(i, out);
    Index src(rank);
    for (size_t d = 0; d < rank; ++d) src[perm[d]] = index[d];
    copy_element(x, ravel(src, x.shape()), y, i);
  }
  return y;
}

// DepthToSpace and SpaceToDepth from the spec's index formulas (b the blocksize, C' = C / b²):
//   DepthToSpace DCR: Y[n, c, h, w] = X[n, ((h mod b)·b + w mod b)·C' + c, h / b, w / b]
//   DepthToSpace CRD: Y[n, c, h, w] = X[n, c·b² + (h mod b)·b + w mod b, h / b, w / b]
//   SpaceToDepth:     Y[n, (i·b + j)·C + c, h, w] = X[n, c, h·b + i, w·b + j]
Tensor depth_to_space(const ir::Node& node, const Tensor& x) {
  const int64_t b = node.attrs.get_int("blocksize");
  const Shape& in = x.shape();
  const bool to_space = node.op == OpKind::kDepthToSpace;
  const Shape out = to_space ? Shape{in[0], in[1] / (b * b), in[2] * b, in[3] * b}
                             : Shape{in[0], in[1] * b * b, in[2] / b, in[3] / b};
  const bool crd = to_space && node.attrs.get_string("mode") == "CRD";
  Tensor y = make(x.dtype(), out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const Index o = unravel(i, out);
    Index src;
    if (to_space) {
      const int64_t block = (o[2] % b) * b + o[3] % b;
      src = {o[0], crd ? o[1] * b * b + block : block * out[1] + o[1], o[2] / b, o[3] / b};
    } else {
      const int64_t block = o[1] / in[1], c = o[1] % in[1];
      src = {o[0], c, o[2] * b + block / b, o[3] * b + block % b};
    }
    copy_element(x, ravel(src, in), y, i);
  }
  return y;
}

Tensor concat(const std::vector<const Tensor*>& in, int64_t axis_attr) {
  const int64_t axis = positive_axis(axis_attr, in[0]->rank());
  Shape out = in[0]->shape();
  out[axis] = 0;
  for (const Tensor* t : in) out[axis] += t->shape()[axis];
  Tensor y = make(in[0]->dtype(), out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    Index index = unravel(i, out);
    size_t k = 0;
    while (index[axis] >= in[k]->shape()[axis]) index[axis] -= in[k++]->shape()[axis];
    copy_element(*in[k], ravel(index, in[k]->shape()), y, i);
  }
  return y;
}

std::vector<Tensor> split(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  const int64_t axis = positive_axis(node.attrs.get_int("axis"), x.rank());
  const int64_t n = static_cast<int64_t>(node.outputs.size());
  const int64_t dim = x.shape()[axis];
  std::vector<int64_t> sizes = ints(input(in, 1));
  if (sizes.empty()) {
    // Equal chunks of ceil(dim / n); only the last may be smaller.
    const int64_t chunk = dim / n + (dim % n != 0 ? 1 : 0);
    for (int64_t k = 0; k < n; ++k) sizes.push_back(std::min(chunk, dim - k * chunk));
  }
  std::vector<Tensor> outs;
  int64_t first = 0;
  for (int64_t size : sizes) {
    Shape shape = x.shape();
    shape[axis] = size;
    Tensor y = make(x.dtype(), shape);
    for (int64_t i = 0; i < y.numel(); ++i) {
      Index index = unravel(i, shape);
      index[axis] += first;
      copy_element(x, ravel(index, x.shape()), y, i);
    }
    first += size;
    outs.push_back(std::move(y));
  }
  return outs;
}

Tensor gather(const Tensor& x, const Tensor& indices, int64_t axis_attr) {
  const int64_t axis = positive_axis(axis_attr, x.rank());
  Shape out;
  for (int64_t d = 0; d < axis; ++d) out.push_back(x.shape()[d]);
  for (int64_t d : indices.shape()) out.push_back(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) out.push_back(x.shape()[d]);
  Tensor y = make(x.dtype(), out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const Index index = unravel(i, out);
    const Index which(index.begin() + axis, index.begin() + axis + indices.rank());
    int64_t k = get_int(indices, ravel(which, indices.shape()));
    if (k < 0) k += x.shape()[axis];
    Index src(index.begin(), index.begin() + axis);
    src.push_back(k);
    src.insert(src.end(), index.begin() + axis + indices.rank(), index.end());
    copy_element(x, ravel(src, x.shape()), y, i);
  }
  return y;
}

Tensor cast(const Tensor& x, DType to) {
  Tensor y = make(to, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (to == DType::kBool) put_int(y, i, get(x, i) != 0 ? 1 : 0);
    else if (is_integer(x.dtype()) || x.dtype() == DType::kBool) put_int(y, i, get_int(x, i));
    else put(y, i, get(x, i));  // float → integer truncates toward zero in put()
  }
  return y;
}

Shape reshape_shape(const Shape& in, const std::vector<int64_t>& target, bool allow_zero) {
  Shape out(target.begin(), target.end());
  int64_t product = 1, missing = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allow_zero) out[i] = in[i];
    if (out[i] == -1) missing = static_cast<int64_t>(i);
    else product *= out[i];
  }
  if (missing >= 0) out[missing] = shape_numel(in) / product;
  return out;
}

// The mean and the mean squared deviation of elements [first, first + count) of x, in double.
struct Moments {
  double mean = 0, variance = 0;
};
Moments moments(const Tensor& x, int64_t first, int64_t count) {
  Moments m;
  for (int64_t j = 0; j < count; ++j) m.mean += get(x, first + j);
  m.mean /= static_cast<double>(count);
  for (int64_t j = 0; j < count; ++j) m.variance += (get(x, first + j) - m.mean) * (get(x, first + j) - m.mean);
  m.variance /= static_cast<double>(count);
  return m;
}

// LayerNormalization in double, straight from the definition: per row of the normalized axes, the mean,
// the mean squared deviation, Y = (x - mean) / sqrt(var + epsilon) · scale + B; Mean and InvStdDev per row.
std::vector<Tensor> layer_norm(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  int64_t axis = node.attrs.get_int("axis");
  if (axis < 0) axis += rank;
  int64_t inner = 1;
  for (int64_t d = axis; d < rank; ++d) inner *= x.shape()[static_cast<size_t>(d)];
  const Shape normalized(x.shape().begin() + axis, x.shape().end());
  Shape stats = x.shape();
  for (int64_t d = axis; d < rank; ++d) stats[static_cast<size_t>(d)] = 1;
  Tensor y = make(DType::kFloat32, x.shape()), mean_out = make(DType::kFloat32, stats),
         inv_out = make(DType::kFloat32, stats);
  const double epsilon = node.attrs.get_float("epsilon");
  const bool has_bias = in.size() > 2 && in[2] != nullptr;
  for (int64_t row = 0; inner > 0 && row < x.numel() / inner; ++row) {
    const auto [mean, var] = moments(x, row * inner, inner);
    const double inv = 1 / std::sqrt(var + epsilon);
    for (int64_t j = 0; j < inner; ++j) {
      const Index at = unravel(j, normalized);
      double v = (get(x, row * inner + j) - mean) * inv * get(*in[1], broadcast_source(at, in[1]->shape()));
      if (has_bias) v += get(*in[2], broadcast_source(at, in[2]->shape()));
      put(y, row * inner + j, v);
    }
    put(mean_out, row, mean);
    put(inv_out, row, inv);
  }
  std::vector<Tensor> out;
  out.push_back(std::move(y));
  if (node.outputs.size() > 1) out.push_back(std::move(mean_out));
  if (node.outputs.size() > 2) out.push_back(std::move(inv_out));
  return out;
}

// InstanceNormalization in double, straight from the definition: per sample and channel, the mean and the
// mean squared deviation over the spatial axes, Y = (x - mean) / sqrt(var + epsilon) · scale[c] + B[c].
Tensor instance_norm(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  const int64_t channels = x.shape()[1];
  const int64_t inner = x.numel() / std::max<int64_t>(x.shape()[0] * channels, 1);
  Tensor y = make(DType::kFloat32, x.shape());
  const double epsilon = node.attrs.get_float("epsilon");
  for (int64_t row = 0; inner > 0 && row < x.numel() / inner; ++row) {
    const auto [mean, var] = moments(x, row * inner, inner);
    const int64_t c = row % channels;
    const double scale = get(*in[1], c) / std::sqrt(var + epsilon), bias = get(*in[2], c);
    for (int64_t j = 0; j < inner; ++j) put(y, row * inner + j, (get(x, row * inner + j) - mean) * scale + bias);
  }
  return y;
}

// MeanVarianceNormalization in double, from the definition: per group of elements that differ only along
// `axes`, Y = (x - mean) / (sqrt(mean squared deviation) + 1e-9).
Tensor mean_variance_norm(const ir::Node& node, const Tensor& x) {
  Shape stats = x.shape();
  for (int64_t a : node.attrs.get_ints("axes")) stats[static_cast<size_t>(positive_axis(a, x.rank()))] = 1;
  const int64_t groups = shape_numel(stats), count = x.numel() / std::max<int64_t>(groups, 1);
  std::vector<double> mean(static_cast<size_t>(groups)), variance(static_cast<size_t>(groups));
  const auto group = [&](int64_t i) { return static_cast<size_t>(broadcast_source(unravel(i, x.shape()), stats)); };
  for (int64_t i = 0; i < x.numel(); ++i) mean[group(i)] += get(x, i) / static_cast<double>(count);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double d = get(x, i) - mean[group(i)];
    variance[group(i)] += d * d / static_cast<double>(count);
  }
  Tensor y = make(DType::kFloat32, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    put(y, i, (get(x, i) - mean[group(i)]) / (std::sqrt(variance[group(i)]) + 1e-9));
  return y;
}

// ConstantOfShape: Y of the dims its input lists, every element the `value` attribute's one element (float32
// 0 when absent).
Expected<Tensor> constant_of_shape(const ir::Node& node, const Tensor& dims_input) {
  UCUDNN_ASSIGN_OR_RETURN(const std::vector<int64_t> dims, dims_input.to_int64_vector());
  const bool has_value = node.attrs.has("value");
  const DType dtype = has_value ? node.attrs.get_tensor("value").dtype() : DType::kFloat32;
  Tensor y = make(dtype, Shape(dims.begin(), dims.end()));
  for (int64_t i = 0; i < y.numel(); ++i) {
    if (has_value) {
      copy_element(node.attrs.get_tensor("value"), 0, y, i);
    } else {
      put(y, i, 0.0);
    }
  }
  return y;
}

// GroupNormalization in double, straight from the definition: per sample and group of C / G channels, the
// mean and the mean squared deviation over those channels' elements, then Y = (x - mean) / sqrt(var +
// epsilon) · scale + B with scale and B indexed by the group (opset 18) or the channel (from opset 21).
Tensor group_norm(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  const int64_t batch = x.shape()[0], channels = x.shape()[1], groups = node.attrs.get_int("num_groups");
  const int64_t spatial = x.numel() / std::max<int64_t>(batch * channels, 1);
  const int64_t per_group = channels / groups * spatial;
  Tensor y = make(DType::kFloat32, x.shape());
  const double epsilon = node.attrs.get_float("epsilon");
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t first = (n * groups + g) * per_group;
      const auto [mean, var] = moments(x, first, per_group);
      for (int64_t j = 0; j < per_group; ++j) {
        const int64_t affine = node.opset >= 21 ? g * (channels / groups) + j / spatial : g;
        put(y, first + j, (get(x, first + j) - mean) / std::sqrt(var + epsilon) * get(*in[1], affine) +
                              get(*in[2], affine));
      }
    }
  return y;
}

}  // namespace

Expected<std::vector<Tensor>> elementwise_reference(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const ir::Attributes& attrs = node.attrs;
  const Tensor* x = input(in, 0);
  std::vector<Tensor> out;
  switch (node.op) {
    case OpKind::kRelu: case OpKind::kLeakyRelu: case OpKind::kSigmoid: case OpKind::kTanh:
    case OpKind::kHardSigmoid: case OpKind::kHardSwish: case OpKind::kElu: case OpKind::kErf: case OpKind::kGelu:
    case OpKind::kSoftplus: case OpKind::kSqrt: case OpKind::kExp: case OpKind::kLog: case OpKind::kAbs:
    case OpKind::kNeg: case OpKind::kReciprocal: case OpKind::kSoftsign: case OpKind::kCelu: case OpKind::kSelu:
    case OpKind::kThresholdedRelu: case OpKind::kShrink: case OpKind::kFloor: case OpKind::kCeil:
    case OpKind::kRound: case OpKind::kSign: case OpKind::kSin: case OpKind::kCos: case OpKind::kTan:
    case OpKind::kAsin: case OpKind::kAcos: case OpKind::kAtan: case OpKind::kSinh: case OpKind::kCosh:
    case OpKind::kAsinh: case OpKind::kAcosh: case OpKind::kAtanh: {
      Tensor y = make(x->dtype(), x->shape());
      for (int64_t i = 0; i < x->numel(); ++i) put(y, i, unary(node.op, attrs, get(*x, i)));
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kLayerNormalization: return layer_norm(node, in);
    case OpKind::kInstanceNormalization: out.push_back(instance_norm(node, in)); break;
    case OpKind::kMeanVarianceNormalization: out.push_back(mean_variance_norm(node, *in[0])); break;
    case OpKind::kGroupNormalization: out.push_back(group_norm(node, in)); break;
    case OpKind::kSize: {
      Tensor y = make(DType::kInt64, {});
      put_int(y, 0, x->numel());
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kConstantOfShape: {
      UCUDNN_ASSIGN_OR_RETURN(Tensor y, constant_of_shape(node, *x));
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kPRelu: {
      Tensor y = make(x->dtype(), x->shape());
      for (int64_t i = 0; i < x->numel(); ++i) {
        const double v = get(*x, i);
        const double slope = get(*in[1], broadcast_source(unravel(i, x->shape()), in[1]->shape()));
        put(y, i, v >= 0 ? v : slope * v);
      }
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kClip: {
      Tensor y = make(x->dtype(), x->shape());
      const Tensor* lo = input(in, 1);
      const Tensor* hi = input(in, 2);
      for (int64_t i = 0; i < x->numel(); ++i) {
        double v = get(*x, i);
        if (lo != nullptr && v < get(*lo, 0)) v = get(*lo, 0);
        if (hi != nullptr && v > get(*hi, 0)) v = get(*hi, 0);
        put(y, i, v);
      }
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kMax: case OpKind::kMin: {  // any number of operands, folded left to right
      const Shape shape = broadcast_shape(in);
      Tensor y = make(x->dtype(), shape);
      for (int64_t i = 0; i < y.numel(); ++i) {
        const Index index = unravel(i, shape);
        size_t pick = 0;
        for (size_t k = 1; k < in.size(); ++k) {
          const double best = get(*in[pick], broadcast_source(index, in[pick]->shape()));
          const double v = get(*in[k], broadcast_source(index, in[k]->shape()));
          if (node.op == OpKind::kMax ? v > best : v < best) pick = k;
        }
        copy_element(*in[pick], broadcast_source(index, in[pick]->shape()), y, i);
      }
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kMod: {  // from the definitions: r = a - b·trunc(a/b) (fmod), or a - b·floor(a/b)
      const bool c_style = attrs.get_int("fmod") != 0;
      Tensor y = binary(OpKind::kSub, *x, *in[1]);  // the broadcast shape and dtype
      const Shape shape = y.shape();
      for (int64_t i = 0; i < y.numel(); ++i) {
        const Index index = unravel(i, shape);
        const double a = get(*x, broadcast_source(index, x->shape()));
        const double b = get(*in[1], broadcast_source(index, in[1]->shape()));
        const double q = c_style ? std::trunc(a / b) : std::floor(a / b);
        if (is_integer(y.dtype())) put_int(y, i, static_cast<int64_t>(a - b * q));
        else put(y, i, std::fmod(a, b));
      }
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kAdd: case OpKind::kSub: case OpKind::kMul: case OpKind::kDiv: case OpKind::kPow: {
      Tensor y = binary(node.op, *x, *in[1]);
      if (ir::fused_activation(node) == "Relu")  // Add → Relu fused by optimizer/passes (Note [fused nodes])
        for (int64_t i = 0; i < y.numel(); ++i) put(y, i, std::max(get(y, i), 0.0));
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kSum: case OpKind::kMean: {  // the inputs added left to right, as ONNX lists them
      Tensor y = copy_as(*x, x->shape());
      for (size_t i = 1; i < in.size(); ++i) y = binary(OpKind::kAdd, y, *in[i]);
      if (node.op == OpKind::kMean)
        for (int64_t i = 0; i < y.numel(); ++i) put(y, i, get(y, i) / static_cast<double>(in.size()));
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kTile: {  // Y[i0, i1, ...] = X[i0 mod d0, i1 mod d1, ...]
      const std::vector<int64_t> repeats = ints(in[1]);
      Shape shape = x->shape();
      for (size_t d = 0; d < shape.size(); ++d) shape[d] *= repeats[d];
      Tensor y = make(x->dtype(), shape);
      for (int64_t i = 0; i < y.numel(); ++i) {
        Index index = unravel(i, shape);
        for (size_t d = 0; d < index.size(); ++d) index[d] %= x->shape()[d];
        copy_element(*x, ravel(index, x->shape()), y, i);
      }
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kUpsample: {  // Resize with asymmetric coordinates, flooring nearest picks (upsample.cc)
      const std::vector<float> scales =
          node.opset < 9 ? attrs.get_floats("scales")
                         : std::vector<float>(in[1]->data<float>(), in[1]->data<float>() + in[1]->numel());
      const Tensor scales_tensor = Tensor::from_floats({static_cast<int64_t>(scales.size())}, scales);
      ir::Attributes resize_attrs;
      resize_attrs.set("mode", attrs.get_string("mode"));
      resize_attrs.set("coordinate_transformation_mode", std::string("asymmetric"));
      resize_attrs.set("nearest_mode", std::string("floor"));
      out.push_back(resize(*x, {x, nullptr, &scales_tensor}, resize_attrs));
      break;
    }
    case OpKind::kEqual: case OpKind::kLess: case OpKind::kGreater: case OpKind::kLessOrEqual:
    case OpKind::kGreaterOrEqual: case OpKind::kNot: case OpKind::kAnd: case OpKind::kOr: case OpKind::kXor:
    case OpKind::kWhere:
      out.push_back(logic(node.op, in));
      break;
    case OpKind::kIsNaN: case OpKind::kIsInf: out.push_back(float_test(node, *x)); break;
    case OpKind::kTrilu: out.push_back(trilu(node, in)); break;
    case OpKind::kCumSum: out.push_back(cumsum(node, in)); break;
    case OpKind::kTopK: {
      out = top_k(node, in);
      out.resize(node.outputs.size());
      break;
    }
    case OpKind::kIdentity: out.push_back(copy_as(*x, x->shape())); break;
    case OpKind::kDropout: {
      out.push_back(copy_as(*x, x->shape()));
      if (node.outputs.size() > 1) {
        Tensor mask = make(DType::kBool, x->shape());
        for (int64_t i = 0; i < mask.numel(); ++i) put_int(mask, i, 1);
        out.push_back(std::move(mask));
      }
      break;
    }
    case OpKind::kFlatten: {
      const int64_t axis = positive_axis(attrs.get_int("axis"), x->rank());
      int64_t rows = 1;
      for (int64_t d = 0; d < axis; ++d) rows *= x->shape()[d];
      out.push_back(copy_as(*x, {rows, x->numel() / rows}));
      break;
    }
    case OpKind::kReshape:
      out.push_back(copy_as(*x, reshape_shape(x->shape(), ints(in[1]), attrs.get_int("allowzero") != 0)));
      break;
    case OpKind::kSqueeze: {
      std::vector<int64_t> axes = ints(input(in, 1));
      for (int64_t& a : axes) a = positive_axis(a, x->rank());
      Shape shape;
      for (int64_t d = 0; d < x->rank(); ++d) {
        const bool listed = std::find(axes.begin(), axes.end(), d) != axes.end();
        if (axes.empty() ? x->shape()[d] != 1 : !listed) shape.push_back(x->shape()[d]);
      }
      out.push_back(copy_as(*x, shape));
      break;
    }
    case OpKind::kUnsqueeze: {
      std::vector<int64_t> axes = ints(in[1]);
      const int64_t rank = x->rank() + static_cast<int64_t>(axes.size());
      for (int64_t& a : axes) a = positive_axis(a, rank);
      Shape shape;
      size_t next = 0;
      for (int64_t d = 0; d < rank; ++d)
        shape.push_back(std::find(axes.begin(), axes.end(), d) != axes.end() ? 1 : x->shape()[next++]);
      out.push_back(copy_as(*x, shape));
      break;
    }
    case OpKind::kShape: {
      const int64_t rank = x->rank();
      auto fix = [rank](int64_t v) { return std::min(rank, std::max<int64_t>(0, v < 0 ? v + rank : v)); };
      const int64_t start = fix(attrs.get_int("start"));
      const int64_t end = attrs.has("end") ? fix(attrs.get_int("end")) : rank;
      std::vector<int64_t> dims;
      for (int64_t d = start; d < end; ++d) dims.push_back(x->shape()[d]);
      out.push_back(Tensor::from_int64s({static_cast<int64_t>(dims.size())}, dims));
      break;
    }
    case OpKind::kConstant: {
      const Tensor& v = attrs.get_tensor("value");
      out.push_back(copy_as(v, v.shape()));
      break;
    }
    case OpKind::kCast: out.push_back(cast(*x, dtype_from_onnx(static_cast<int>(attrs.get_int("to"))))); break;
    case OpKind::kCastLike: out.push_back(cast(*x, in[1]->dtype())); break;
    case OpKind::kRange: {  // numpy's arange, counted in double
      const double start = get(*x, 0), limit = get(*in[1], 0), delta = get(*in[2], 0);
      const auto n = static_cast<int64_t>(std::max(0.0, std::ceil((limit - start) / delta)));
      Tensor y = make(x->dtype(), {n});
      for (int64_t i = 0; i < n; ++i) {
        if (is_integer(y.dtype())) put_int(y, i, get_int(*x, 0) + i * get_int(*in[2], 0));
        else put(y, i, static_cast<float>(start) + static_cast<float>(i) * static_cast<float>(delta));
      }
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kEyeLike: {
      const DType dtype = attrs.has("dtype") ? dtype_from_onnx(static_cast<int>(attrs.get_int("dtype"))) : x->dtype();
      const int64_t k = attrs.get_int("k");
      Tensor y = make(dtype, x->shape());
      for (int64_t i = 0; i < y.numel(); ++i) put_int(y, i, i % x->shape()[1] - i / x->shape()[1] == k);
      out.push_back(std::move(y));
      break;
    }
    case OpKind::kConcat: out.push_back(concat(in, attrs.get_int("axis"))); break;
    case OpKind::kSplit: out = split(node, in); break;
    case OpKind::kSlice: out.push_back(slice(*x, in)); break;
    case OpKind::kTranspose: out.push_back(transpose(*x, attrs)); break;
    case OpKind::kDepthToSpace: case OpKind::kSpaceToDepth: out.push_back(depth_to_space(node, *x)); break;
    case OpKind::kPad: out.push_back(pad(*x, in, node.attrs)); break;
    case OpKind::kResize: out.push_back(resize(*x, in, node.attrs)); break;
    case OpKind::kGather: out.push_back(gather(*x, *in[1], attrs.get_int("axis"))); break;
    case OpKind::kReduceMean: case OpKind::kReduceMax: case OpKind::kReduceMin: case OpKind::kReduceProd:
    case OpKind::kReduceL1: case OpKind::kReduceL2: case OpKind::kReduceSumSquare: case OpKind::kReduceLogSum:
    case OpKind::kReduceLogSumExp:
      out.push_back(reduce(node.op, *x, input(in, 1), attrs));
      break;
    case OpKind::kArgMax: case OpKind::kArgMin: out.push_back(arg_extreme(node.op, *x, attrs)); break;
    case OpKind::kSoftmax: out.push_back(softmax(node, *x, false)); break;
    case OpKind::kLogSoftmax: out.push_back(softmax(node, *x, true)); break;
    case OpKind::kHardmax: out.push_back(hardmax(node, *x)); break;
    default: return unsupported(std::string("no elementwise reference for ") + op_name(node.op));
  }
  return out;
}

double element_as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat64: return t.data<double>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kUInt8: return t.data<uint8_t>()[i];
    case DType::kBool: return t.data<bool>()[i] ? 1 : 0;
    case DType::kFloat16: case DType::kBFloat16: return get(t, i);  // decoded apart from runtime/core/half.h
    default: return NAN;
  }
}

}  // namespace ucudnn::reference
