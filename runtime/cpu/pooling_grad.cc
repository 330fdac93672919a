// CPU kernels of MaxPoolGrad and AveragePoolGrad (1-D/2-D windows, reduced to 2-D), the adjoints of
// runtime/cpu/pooling.cc's pools. Threads over (n, c) planes; each zeroes its plane of dX and then
// scatters every window's dY into it in output order, so overlapping windows sum deterministically
// (MaxPoolGrad finds a row's interior choices vectorised first: runtime/cpu/max_pool_rows.h).
// MaxPoolGrad recomputes each window's choice from X with the forward's predicate (v > best or v is
// NaN, starting from the window's first tap inside the input): the first maximum in row-major window
// order gets the gradient, as PyTorch; a window with a NaN gives it to its last NaN (PyTorch's rule);
// a window with no tap inside the input gives nothing. AveragePoolGrad spreads dY / count over the
// window's taps inside the input, count as the forward's divisor (count_include_pad).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/max_pool_rows.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn::cpu {

namespace {

// One spatial axis of the window pool (a 1-D pool's leading axis is a unit one).
struct PoolAxis {
  int64_t in = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0, out = 1;
  // Position of tap k of window o (may lie in the padding).
  int64_t at(int64_t o, int64_t k) const { return o * stride - pad_begin + k * dilation; }
};

struct PoolGradProblem {
  int64_t planes = 0;
  PoolAxis h, w;
};

// The geometry of a backward pool whose dX is `dx` and dY is `dy` (checked against each other).
Expected<PoolGradProblem> pool_grad_problem(const ir::Node& node, const Shape& dx, const Shape& dy) {
  if (ir::is_channels_last(node)) return channels_last_unsupported(node);
  if (dx.size() != 3 && dx.size() != 4)
    return unsupported(node.describe() + ": CPU pooling handles 1-D and 2-D windows, got dX " + shape_to_string(dx));
  const bool ceil_mode = node.attrs.has("ceil_mode") && node.attrs.get_int("ceil_mode") != 0;
  auto g = compute_window_geometry(node.attrs, Shape(dx.begin() + 2, dx.end()), node.attrs.get_ints("kernel_shape"),
                                   ceil_mode);
  if (!g) return g.status().with_context(node.describe() + " with dX " + shape_to_string(dx));
  Shape expected = {dx[0], dx[1]};
  expected.insert(expected.end(), g->output.begin(), g->output.end());
  if (dy != expected)
    return invalid_argument(node.describe() + ": dY is " + shape_to_string(dy) + ", expected " +
                            shape_to_string(expected) + " for dX " + shape_to_string(dx));
  PoolGradProblem p;
  p.planes = dx[0] * dx[1];
  for (size_t d = 0; d < g->rank(); ++d) {
    PoolAxis& a = g->rank() == 2 && d == 0 ? p.h : p.w;
    a = {g->input[d], g->kernel[d], g->stride[d], g->dilation[d], g->pad_begin[d], g->pad_end[d], g->output[d]};
  }
  return p;
}

// Runs `window(dx_plane, dy_value, oh, ow)` for every window of every plane, after zeroing the plane.
template <typename Window>
void scatter_windows(const PoolGradProblem& p, const float* dy, float* dx, Window window) {
  const int64_t in_plane = p.h.in * p.w.in, out_plane = p.h.out * p.w.out;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < p.planes; ++i) {
    float* d = dx + i * in_plane;
    for (int64_t j = 0; j < in_plane; ++j) d[j] = 0.0f;
    const float* g = dy + i * out_plane;
    for (int64_t oh = 0; oh < p.h.out; ++oh)
      for (int64_t ow = 0; ow < p.w.out; ++ow) window(i, d, g[oh * p.w.out + ow], oh, ow);
  }
}

// The tap (offset ih·W + iw in the plane) of the window (oh, ow) that gets its gradient, −1 when the
// window has no tap inside the input; the scalar rule the top of the file states.
int64_t chosen_tap(const PoolGradProblem& p, const float* s, int64_t oh, int64_t ow) {
  int64_t chosen = -1;
  float best = 0.0f;
  for (int64_t kh = 0; kh < p.h.kernel; ++kh) {
    const int64_t ih = p.h.at(oh, kh);
    if (ih < 0 || ih >= p.h.in) continue;
    for (int64_t kw = 0; kw < p.w.kernel; ++kw) {
      const int64_t iw = p.w.at(ow, kw);
      if (iw < 0 || iw >= p.w.in) continue;
      const int64_t at = ih * p.w.in + iw;
      if (chosen < 0 || s[at] > best || std::isnan(s[at])) {
        chosen = at;
        best = s[at];
      }
    }
  }
  return chosen;
}

// Output columns whose choices are found at once by the vectorised rows (stack arrays).
constexpr int64_t kChunk = 128;

// Threads over planes; per output row the edge windows' choices come from chosen_tap and the interior
// ones from max_pool_row_argmax (the same choice: Note [max pool rows keep the window order],
// runtime/cpu/max_pool_rows.h), and dY is added in output order either way.
Status run_max_pool_grad(const KernelArgs& args) {
  const Tensor& x = *args.src[1];
  Tensor& dx = *args.dst[0];
  if (x.shape() != dx.shape())
    return invalid_argument(args.node.describe() + ": X " + x.describe() + " and dX " + dx.describe() + " differ");
  UCUDNN_ASSIGN_OR_RETURN(PoolGradProblem p, pool_grad_problem(args.node, dx.shape(), args.src[0]->shape()));
  const float* src = x.data<float>();
  const float* dy = args.src[0]->data<float>();
  float* dst = dx.data<float>();
  const int64_t in_plane = p.h.in * p.w.in, out_plane = p.h.out * p.w.out;
  // The vectorised rows index the plane with int32 (the scalar loop covers larger planes).
  const InteriorColumns cols = in_plane <= std::numeric_limits<int32_t>::max()
                                   ? interior_columns(p.w.in, p.w.out, p.w.kernel, p.w.stride, p.w.dilation,
                                                      p.w.pad_begin)
                                   : InteriorColumns{p.w.out, p.w.out};
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < p.planes; ++i) {
    const float* s = src + i * in_plane;
    float* d = dst + i * in_plane;
    std::fill(d, d + in_plane, 0.0f);
    for (int64_t oh = 0; oh < p.h.out; ++oh) {
      const float* g = dy + i * out_plane + oh * p.w.out;
      auto edge = [&](int64_t ow) {
        const int64_t chosen = chosen_tap(p, s, oh, ow);
        if (chosen >= 0) d[chosen] += g[ow];
      };
      for (int64_t ow = 0; ow < cols.first; ++ow) edge(ow);
      const TapsInside rows = taps_inside(p.h.at(oh, 0), p.h.kernel, p.h.dilation, p.h.in);
      if (rows.count > 0) {
        const MaxPoolRow row{s, p.w.in, p.h.at(oh, rows.first), rows.count, p.h.dilation, p.w.kernel,
                             p.w.stride, p.w.dilation, p.w.pad_begin, cols.first, cols.last};
        float best[kChunk];
        int32_t at[kChunk];
        for (int64_t first = cols.first; first < cols.last; first += kChunk) {
          const int64_t last = std::min(cols.last, first + kChunk);
          max_pool_row_argmax(row, first, last, best, at);
          for (int64_t ow = first; ow < last; ++ow) d[at[ow - first]] += g[ow];
        }
      }
      for (int64_t ow = cols.last; ow < p.w.out; ++ow) edge(ow);
    }
  }
  return Status::ok();
}

// Taps of window o along `a` inside the input (exclude) or inside the padded input (include).
int64_t window_taps(const PoolAxis& a, int64_t o, bool include_pad) {
  int64_t taps = 0;
  for (int64_t k = 0; k < a.kernel; ++k) {
    const int64_t at = a.at(o, k);
    taps += include_pad ? at < a.in + a.pad_end : at >= 0 && at < a.in;
  }
  return taps;
}

Status run_average_pool_grad(const KernelArgs& args) {
  Tensor& dx = *args.dst[0];
  UCUDNN_ASSIGN_OR_RETURN(PoolGradProblem p, pool_grad_problem(args.node, dx.shape(), args.src[0]->shape()));
  const bool include_pad = args.node.attrs.get_int("count_include_pad") != 0;
  scatter_windows(p, args.src[0]->data<float>(), dx.data<float>(),
                  [&p, include_pad](int64_t, float* d, float g, int64_t oh, int64_t ow) {
                    const int64_t count = window_taps(p.h, oh, include_pad) * window_taps(p.w, ow, include_pad);
                    if (count == 0) return;
                    const float share = g / static_cast<float>(count);
                    for (int64_t kh = 0; kh < p.h.kernel; ++kh) {
                      const int64_t ih = p.h.at(oh, kh);
                      if (ih < 0 || ih >= p.h.in) continue;
                      for (int64_t kw = 0; kw < p.w.kernel; ++kw) {
                        const int64_t iw = p.w.at(ow, kw);
                        if (iw >= 0 && iw < p.w.in) d[ih * p.w.in + iw] += share;
                      }
                    }
                  });
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_MaxPoolGrad() {
  static const CpuKernel k{.run = run_max_pool_grad};
  return k;
}

const CpuKernel& cpu_kernel_AveragePoolGrad() {
  static const CpuKernel k{.run = run_average_pool_grad};
  return k;
}

}  // namespace ucudnn::cpu
