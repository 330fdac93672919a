// Naive references for the compute-heavy ops (see conv_reference.h).
#include "tests/reference/conv_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "runtime/ir/fusion.h"

namespace ucudnn::reference {

namespace {

using Ints = std::vector<int64_t>;

// One spatial axis of a sliding window.
struct Axis {
  int64_t in = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 1;
};

Ints ints_or(const ir::Attributes& attrs, const char* name, size_t n, int64_t fill) {
  return attrs.has(name) ? attrs.get_ints(name) : Ints(n, fill);
}

// The spatial axes of X [N, C, spatial...] (spec formulas, written out again here);
// 1-D and 2-D windows get leading dummy axes so every loop below is 3-D.
std::vector<Axis> window_axes(const ir::Attributes& attrs, const Shape& x, const Ints& kernel, bool ceil_mode) {
  const size_t rank = x.size() - 2;
  const Ints strides = ints_or(attrs, "strides", rank, 1);
  const Ints dilations = ints_or(attrs, "dilations", rank, 1);
  const Ints pads = ints_or(attrs, "pads", 2 * rank, 0);
  const std::string auto_pad = attrs.has("auto_pad") ? attrs.get_string("auto_pad") : "NOTSET";
  std::vector<Axis> axes(rank < 3 ? 3 - rank : 0);
  for (size_t i = 0; i < rank; ++i) {
    Axis a;
    a.in = x[i + 2];
    a.kernel = kernel[i];
    a.stride = strides[i];
    a.dilation = dilations[i];
    const int64_t extent = (a.kernel - 1) * a.dilation + 1;
    if (auto_pad == "VALID") {
      a.out = (a.in - extent) / a.stride + 1;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      a.out = static_cast<int64_t>(std::ceil(static_cast<double>(a.in) / static_cast<double>(a.stride)));
      const int64_t total = std::max<int64_t>(0, (a.out - 1) * a.stride + extent - a.in);
      a.pad_begin = auto_pad == "SAME_LOWER" ? (total + 1) / 2 : total / 2;
      a.pad_end = total - a.pad_begin;
    } else {
      a.pad_begin = pads[i];
      a.pad_end = pads[i + rank];
      const double o = static_cast<double>(a.in + a.pad_begin + a.pad_end - extent) / static_cast<double>(a.stride);
      a.out = static_cast<int64_t>(ceil_mode ? std::ceil(o) : std::floor(o)) + 1;
      if (ceil_mode && (a.out - 1) * a.stride >= a.in + a.pad_begin) --a.out;
    }
    axes.push_back(a);
  }
  return axes;
}

// [N, C, out...] for the axes (dropping the dummy axes).
Shape window_output(const Shape& x, int64_t channels, const std::vector<Axis>& axes) {
  Shape y = {x[0], channels};
  for (size_t i = axes.size() - (x.size() - 2); i < axes.size(); ++i) y.push_back(axes[i].out);
  return y;
}

Tensor new_tensor(const Shape& shape) { return std::move(Tensor::allocate(DType::kFloat32, shape)).value(); }

// A Conv's fused activation (Note [fused nodes]) in double, written out here rather than through the
// kernels' ir::apply_conv_activation.
double reference_activation(const ir::Node& node, double v) {
  const std::string name = ir::fused_activation(node);
  if (name == "Relu") return std::max(v, 0.0);
  if (name == "SiLU") return v / (1.0 + std::exp(-v));
  if (name == "Sigmoid") return 1.0 / (1.0 + std::exp(-v));
  if (name == "HardSwish") return v * std::min(1.0, std::max(0.0, v / 6.0 + 0.5));
  if (name == "Clip")
    return std::min(std::max(v, double{node.attrs.get_float(ir::kFusedActivationMinAttr)}),
                    double{node.attrs.get_float(ir::kFusedActivationMaxAttr)});
  return v;
}

}  // namespace

Tensor reference_conv(const ir::Node& node, const std::vector<const Tensor*>& src) {
  const Tensor& x = *src[0];
  const Tensor& w = *src[1];
  const Tensor* b = src.size() > 2 ? src[2] : nullptr;
  // Note [fused nodes] (runtime/ir/fusion.h): a residual input z of Y's shape, and a fused activation.
  const Tensor* z = src.size() > ir::kConvResidualInput ? src[ir::kConvResidualInput] : nullptr;
  const int64_t group = node.attrs.has("group") ? node.attrs.get_int("group") : 1;
  const Ints kernel(w.shape().begin() + 2, w.shape().end());
  const std::vector<Axis> ax = window_axes(node.attrs, x.shape(), kernel, false);
  const Axis& ad = ax[0];
  const Axis& ah = ax[1];
  const Axis& aw = ax[2];
  const int64_t batch = x.dim(0), channels = x.dim(1), filters = w.dim(0);
  const int64_t cg = channels / group, mg = filters / group;
  Tensor y = new_tensor(window_output(x.shape(), filters, ax));
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  float* yd = y.data<float>();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t m = 0; m < filters; ++m)
      for (int64_t od = 0; od < ad.out; ++od)
        for (int64_t oh = 0; oh < ah.out; ++oh)
          for (int64_t ow = 0; ow < aw.out; ++ow) {
            double sum = b ? b->data<float>()[m] : 0.0;
            const int64_t g = m / mg;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t kd = 0; kd < ad.kernel; ++kd)
                for (int64_t kh = 0; kh < ah.kernel; ++kh)
                  for (int64_t kw = 0; kw < aw.kernel; ++kw) {
                    const int64_t id = od * ad.stride - ad.pad_begin + kd * ad.dilation;
                    const int64_t ih = oh * ah.stride - ah.pad_begin + kh * ah.dilation;
                    const int64_t iw = ow * aw.stride - aw.pad_begin + kw * aw.dilation;
                    if (id < 0 || id >= ad.in || ih < 0 || ih >= ah.in || iw < 0 || iw >= aw.in) continue;
                    const double xv = xd[(((n * channels + g * cg + c) * ad.in + id) * ah.in + ih) * aw.in + iw];
                    const double wv = wd[(((m * cg + c) * ad.kernel + kd) * ah.kernel + kh) * aw.kernel + kw];
                    sum += xv * wv;
                  }
            const int64_t at = (((n * filters + m) * ad.out + od) * ah.out + oh) * aw.out + ow;
            if (z != nullptr) sum += z->data<float>()[at];
            yd[at] = static_cast<float>(reference_activation(node, sum));
          }
  return y;
}

// ConvTranspose's spatial axes (the spec's formulas written out again): `out` is Y's size, `in` X's;
// a 1-D op gets a leading dummy axis.
std::vector<Axis> transposed_axes(const ir::Attributes& attrs, const Shape& x, const Ints& kernel) {
  const size_t rank = x.size() - 2;
  const Ints strides = ints_or(attrs, "strides", rank, 1);
  const Ints dilations = ints_or(attrs, "dilations", rank, 1);
  const Ints pads = ints_or(attrs, "pads", 2 * rank, 0);
  const Ints output_padding = ints_or(attrs, "output_padding", rank, 0);
  Ints output_shape = attrs.has("output_shape") ? attrs.get_ints("output_shape") : Ints{};
  if (output_shape.size() == rank + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  const std::string auto_pad = attrs.has("auto_pad") ? attrs.get_string("auto_pad") : "NOTSET";
  std::vector<Axis> axes(3 - rank);  // three axes, unit ones first
  for (size_t i = 0; i < rank; ++i) {
    Axis a;
    a.in = x[i + 2];
    a.kernel = kernel[i];
    a.stride = strides[i];
    a.dilation = dilations[i];
    const int64_t full = a.stride * (a.in - 1) + output_padding[i] + (a.kernel - 1) * a.dilation + 1;
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      a.out = output_shape.empty() ? a.in * a.stride : output_shape[i];
      const int64_t total = full - a.out;  // negative: output rows the kernel does not reach
      const auto half = static_cast<int64_t>(std::floor(static_cast<double>(total) / 2.0));
      a.pad_begin = auto_pad == "SAME_UPPER" ? half : total - half;
    } else if (auto_pad == "NOTSET") {
      a.pad_begin = pads[i];
      a.out = full - pads[i] - pads[i + rank];
    } else {  // VALID
      a.out = full;
    }
    axes.push_back(a);
  }
  return axes;
}

// Y [N, M, out...] = B + the scatter of every X element through its group's filters:
// Y[n, g·(M/group) + m, ih·s - pb + kh·d, ...] += X[n, g·(C/group) + c, ih, ...] · W[g·(C/group) + c, m, kh, ...].
Tensor reference_conv_transpose(const ir::Node& node, const std::vector<const Tensor*>& src) {
  const Tensor& x = *src[0];
  const Tensor& w = *src[1];
  const Tensor* b = src.size() > 2 ? src[2] : nullptr;
  const int64_t group = node.attrs.has("group") ? node.attrs.get_int("group") : 1;
  const Ints kernel(w.shape().begin() + 2, w.shape().end());
  const std::vector<Axis> ax = transposed_axes(node.attrs, x.shape(), kernel);  // (D, H, W), units first
  const int64_t batch = x.dim(0), channels = x.dim(1), mg = w.dim(1), filters = mg * group;
  const int64_t cg = channels / group;
  Shape y_shape = {batch, filters};
  for (size_t i = ax.size() - (x.shape().size() - 2); i < ax.size(); ++i) y_shape.push_back(ax[i].out);
  const int64_t in_volume = ax[0].in * ax[1].in * ax[2].in, out_volume = ax[0].out * ax[1].out * ax[2].out;
  const int64_t taps = ax[0].kernel * ax[1].kernel * ax[2].kernel;
  std::vector<double> sum(static_cast<size_t>(batch * filters * out_volume), 0.0);
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < in_volume; ++i) {
        const int64_t in[3] = {i / (ax[1].in * ax[2].in), i / ax[2].in % ax[1].in, i % ax[2].in};
        const double xv = xd[(n * channels + c) * in_volume + i];
        for (int64_t m = 0; m < mg; ++m)
          for (int64_t k = 0; k < taps; ++k) {
            const int64_t tap[3] = {k / (ax[1].kernel * ax[2].kernel), k / ax[2].kernel % ax[1].kernel,
                                    k % ax[2].kernel};
            int64_t o[3];
            bool inside = true;
            for (int a = 0; a < 3; ++a) {
              o[a] = in[a] * ax[a].stride - ax[a].pad_begin + tap[a] * ax[a].dilation;
              inside = inside && o[a] >= 0 && o[a] < ax[a].out;
            }
            if (!inside) continue;
            const int64_t filter = (c / cg) * mg + m;
            sum[static_cast<size_t>((n * filters + filter) * out_volume + (o[0] * ax[1].out + o[1]) * ax[2].out +
                                    o[2])] += xv * wd[(c * mg + m) * taps + k];
          }
      }
  Tensor y = new_tensor(y_shape);
  float* yd = y.data<float>();
  for (size_t i = 0; i < sum.size(); ++i) {
    const int64_t filter = static_cast<int64_t>(i) / out_volume % filters;
    yd[i] = static_cast<float>(sum[i] + (b ? b->data<float>()[filter] : 0.0));
  }
  return y;
}

Tensor reference_batch_norm(const ir::Node& node, const std::vector<const Tensor*>& src) {
  const Tensor& x = *src[0];
  const double epsilon = node.attrs.has("epsilon") ? node.attrs.get_float("epsilon") : 1e-5;
  const int64_t batch = x.dim(0), channels = x.dim(1), size = x.numel() / std::max<int64_t>(1, batch * channels);
  Tensor y = new_tensor(x.shape());
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < size; ++i) {
        const int64_t at = (n * channels + c) * size + i;
        const double normalized =
            (x.data<float>()[at] - src[3]->data<float>()[c]) / std::sqrt(src[4]->data<float>()[c] + epsilon);
        y.data<float>()[at] = static_cast<float>(normalized * src[1]->data<float>()[c] + src[2]->data<float>()[c]);
      }
  return y;
}

Tensor reference_lrn(const ir::Node& node, const std::vector<const Tensor*>& src) {
  const Tensor& x = *src[0];
  const int64_t size = node.attrs.get_int("size");
  const double alpha = node.attrs.has("alpha") ? node.attrs.get_float("alpha") : 1e-4;
  const double beta = node.attrs.has("beta") ? node.attrs.get_float("beta") : 0.75;
  const double bias = node.attrs.has("bias") ? node.attrs.get_float("bias") : 1.0;
  const int64_t batch = x.dim(0), channels = x.dim(1), spatial = x.numel() / std::max<int64_t>(1, batch * channels);
  Tensor y = new_tensor(x.shape());
  const float* xd = x.data<float>();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < spatial; ++i) {
        double square_sum = 0.0;
        const int64_t lo = c - static_cast<int64_t>(std::floor((size - 1) / 2.0));
        const int64_t hi = c + static_cast<int64_t>(std::ceil((size - 1) / 2.0));
        for (int64_t k = lo; k <= hi; ++k) {
          if (k < 0 || k >= channels) continue;
          const double v = xd[(n * channels + k) * spatial + i];
          square_sum += v * v;
        }
        const int64_t at = (n * channels + c) * spatial + i;
        y.data<float>()[at] = static_cast<float>(xd[at] / std::pow(bias + alpha / size * square_sum, beta));
      }
  return y;
}

namespace {

// The ONNX reference's max (numpy's max): a NaN in the window or plane gives NaN, where std::max would drop it.
double max_propagating_nan(double best, double v) {
  return std::isnan(best) || std::isnan(v) ? std::numeric_limits<double>::quiet_NaN() : std::max(best, v);
}

// Window pooling: `max` or average (with count_include_pad) over each window.
Tensor reference_window_pool(const ir::Node& node, const Tensor& x, bool max) {
  const bool ceil_mode = node.attrs.has("ceil_mode") && node.attrs.get_int("ceil_mode") != 0;
  const bool include_pad = node.attrs.has("count_include_pad") && node.attrs.get_int("count_include_pad") != 0;
  const std::vector<Axis> ax = window_axes(node.attrs, x.shape(), node.attrs.get_ints("kernel_shape"), ceil_mode);
  const int64_t planes = x.dim(0) * x.dim(1);
  Tensor y = new_tensor(window_output(x.shape(), x.dim(1), ax));
  const auto inside = [](const Axis& a, int64_t i) { return i >= 0 && i < a.in; };
  const auto inside_padded = [](const Axis& a, int64_t i) { return i >= -a.pad_begin && i < a.in + a.pad_end; };
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t od = 0; od < ax[0].out; ++od)
      for (int64_t oh = 0; oh < ax[1].out; ++oh)
        for (int64_t ow = 0; ow < ax[2].out; ++ow) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
          int64_t count = 0, count_padded = 0;
          for (int64_t kd = 0; kd < ax[0].kernel; ++kd)
            for (int64_t kh = 0; kh < ax[1].kernel; ++kh)
              for (int64_t kw = 0; kw < ax[2].kernel; ++kw) {
                const int64_t at[3] = {od * ax[0].stride - ax[0].pad_begin + kd * ax[0].dilation,
                                       oh * ax[1].stride - ax[1].pad_begin + kh * ax[1].dilation,
                                       ow * ax[2].stride - ax[2].pad_begin + kw * ax[2].dilation};
                if (inside_padded(ax[0], at[0]) && inside_padded(ax[1], at[1]) && inside_padded(ax[2], at[2]))
                  ++count_padded;
                if (!inside(ax[0], at[0]) || !inside(ax[1], at[1]) || !inside(ax[2], at[2])) continue;
                const double v = x.data<float>()[((p * ax[0].in + at[0]) * ax[1].in + at[1]) * ax[2].in + at[2]];
                ++count;
                sum += v;
                best = max_propagating_nan(best, v);
              }
          const int64_t divisor = include_pad ? count_padded : count;
          y.data<float>()[((p * ax[0].out + od) * ax[1].out + oh) * ax[2].out + ow] =
              static_cast<float>(max ? best : (divisor > 0 ? sum / static_cast<double>(divisor) : 0.0));
        }
  return y;
}

Tensor reference_global_pool(const Tensor& x, bool max) {
  Shape shape(x.shape().size(), 1);
  shape[0] = x.dim(0);
  shape[1] = x.dim(1);
  Tensor y = new_tensor(shape);
  const int64_t planes = x.dim(0) * x.dim(1), size = x.numel() / std::max<int64_t>(1, planes);
  for (int64_t p = 0; p < planes; ++p) {
    double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
    for (int64_t i = 0; i < size; ++i) {
      sum += x.data<float>()[p * size + i];
      best = max_propagating_nan(best, x.data<float>()[p * size + i]);
    }
    y.data<float>()[p] = static_cast<float>(max ? best : sum / static_cast<double>(size));
  }
  return y;
}

}  // namespace

Tensor reference_max_pool(const ir::Node& node, const std::vector<const Tensor*>& src) {
  return reference_window_pool(node, *src[0], true);
}
Tensor reference_max_pool_indices(const ir::Node& node, const Tensor& x) {
  const bool ceil_mode = node.attrs.has("ceil_mode") && node.attrs.get_int("ceil_mode") != 0;
  const bool column_major = node.attrs.get_int("storage_order") != 0;
  const std::vector<Axis> ax = window_axes(node.attrs, x.shape(), node.attrs.get_ints("kernel_shape"), ceil_mode);
  const Tensor values = reference_window_pool(node, x, true);
  Tensor indices = Tensor::allocate(DType::kInt64, values.shape()).value();
  const int64_t out_plane = ax[1].out * ax[2].out, in_plane = ax[1].in * ax[2].in;
  for (int64_t i = 0; i < values.numel(); ++i) {  // the first tap holding the window's maximum
    const int64_t p = i / out_plane, oh = i % out_plane / ax[2].out, ow = i % ax[2].out;
    int64_t found = -1;
    for (int64_t kh = 0; kh < ax[1].kernel && found < 0; ++kh)
      for (int64_t kw = 0; kw < ax[2].kernel && found < 0; ++kw) {
        const int64_t h = oh * ax[1].stride - ax[1].pad_begin + kh * ax[1].dilation;
        const int64_t w = ow * ax[2].stride - ax[2].pad_begin + kw * ax[2].dilation;
        if (h >= 0 && h < ax[1].in && w >= 0 && w < ax[2].in &&
            x.data<float>()[p * in_plane + h * ax[2].in + w] == values.data<float>()[i])
          found = p * in_plane + (column_major ? h + w * ax[1].in : h * ax[2].in + w);
      }
    indices.data<int64_t>()[i] = found;
  }
  return indices;
}
Tensor reference_average_pool(const ir::Node& node, const std::vector<const Tensor*>& src) {
  return reference_window_pool(node, *src[0], false);
}
Tensor reference_global_average_pool(const ir::Node&, const std::vector<const Tensor*>& src) {
  return reference_global_pool(*src[0], false);
}
Tensor reference_global_max_pool(const ir::Node&, const std::vector<const Tensor*>& src) {
  return reference_global_pool(*src[0], true);
}

Tensor reference_gemm(const ir::Node& node, const std::vector<const Tensor*>& src) {
  const ir::Attributes& attrs = node.attrs;
  const bool ta = attrs.has("transA") && attrs.get_int("transA") != 0;
  const bool tb = attrs.has("transB") && attrs.get_int("transB") != 0;
  const double alpha = attrs.has("alpha") ? attrs.get_float("alpha") : 1.0;
  const double beta = attrs.has("beta") ? attrs.get_float("beta") : 1.0;
  const Tensor& a = *src[0];
  const Tensor& b = *src[1];
  const Tensor* c = src.size() > 2 ? src[2] : nullptr;
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1), n = tb ? b.dim(0) : b.dim(1);
  Tensor y = new_tensor({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t l = 0; l < k; ++l) {
        const double av = ta ? a.data<float>()[l * a.dim(1) + i] : a.data<float>()[i * a.dim(1) + l];
        const double bv = tb ? b.data<float>()[j * b.dim(1) + l] : b.data<float>()[l * b.dim(1) + j];
        sum += av * bv;
      }
      double cv = 0.0;
      if (c != nullptr) {
        // Numpy broadcasting of C (rank <= 2) against [m, n]: align from the right.
        const Shape& cs = c->shape();
        const int64_t rows = cs.size() == 2 ? cs[0] : 1, cols = cs.empty() ? 1 : cs.back();
        cv = c->data<float>()[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
      }
      y.data<float>()[i * n + j] = static_cast<float>(alpha * sum + beta * cv);
    }
  return y;
}

Tensor reference_matmul(const ir::Node&, const std::vector<const Tensor*>& src) {
  Shape as = src[0]->shape(), bs = src[1]->shape();
  const bool a_vector = as.size() == 1, b_vector = bs.size() == 1;
  if (a_vector) as.insert(as.begin(), 1);
  if (b_vector) bs.push_back(1);
  const size_t rank = std::max(as.size(), bs.size());
  as.insert(as.begin(), rank - as.size(), 1);  // left-pad batch dims with 1s
  bs.insert(bs.begin(), rank - bs.size(), 1);
  const int64_t m = as[rank - 2], k = as[rank - 1], n = bs[rank - 1];
  Shape batch(rank - 2);
  for (size_t i = 0; i + 2 < rank; ++i) batch[i] = std::max(as[i], bs[i]);
  Shape out = batch;
  if (!a_vector) out.push_back(m);
  if (!b_vector) out.push_back(n);
  Tensor y = new_tensor(out);
  const int64_t count = shape_numel(batch);
  for (int64_t index = 0; index < count; ++index) {
    // Batch coordinates of this output matrix, mapped into A and B (size-1 dims repeat).
    int64_t rest = index, a_matrix = 0, b_matrix = 0, a_scale = 1, b_scale = 1;
    for (size_t i = rank - 2; i-- > 0;) {
      const int64_t coordinate = rest % batch[i];
      rest /= batch[i];
      a_matrix += (as[i] == 1 ? 0 : coordinate) * a_scale;
      b_matrix += (bs[i] == 1 ? 0 : coordinate) * b_scale;
      a_scale *= as[i];
      b_scale *= bs[i];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t l = 0; l < k; ++l)
          sum += static_cast<double>(src[0]->data<float>()[a_matrix * m * k + i * k + l]) *
                 src[1]->data<float>()[b_matrix * k * n + l * n + j];
        y.data<float>()[(index * m + i) * n + j] = static_cast<float>(sum);
      }
  }
  return y;
}

Tensor reference_for(const ir::Node& node, const std::vector<const Tensor*>& src) {
  switch (node.op) {
    case OpKind::kConv: return reference_conv(node, src);
    case OpKind::kConvTranspose: return reference_conv_transpose(node, src);
    case OpKind::kBatchNormalization: return reference_batch_norm(node, src);
    case OpKind::kLRN: return reference_lrn(node, src);
    case OpKind::kMaxPool: return reference_max_pool(node, src);
    case OpKind::kAveragePool: return reference_average_pool(node, src);
    case OpKind::kGlobalAveragePool: return reference_global_average_pool(node, src);
    case OpKind::kGlobalMaxPool: return reference_global_max_pool(node, src);
    case OpKind::kGemm: return reference_gemm(node, src);
    case OpKind::kMatMul: return reference_matmul(node, src);
    default: return Tensor();
  }
}

}  // namespace ucudnn::reference
