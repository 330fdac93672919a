// CPU kernels of MaxPool, AveragePool (1-D/2-D windows, reduced to 2-D) and
// GlobalAveragePool, GlobalMaxPool. Plain loops, threads over (n, c) planes (NCHW MaxPool's interior
// windows vectorised along the output row: runtime/cpu/max_pool_rows.h); a
// channels-last node (Note [channels-last]: X [N, H, W, C]) threads over output rows (the global
// pools: over spans of input rows) and runs each tap over the C contiguous channels.
// AveragePool's divisor: the taps inside the input (count_include_pad = 0) or
// inside the padded input [-pad_begin, in + pad_end) (count_include_pad = 1), as
// PyTorch counts them. A MaxPool window with no tap inside the input gives -inf.
// The max pools propagate NaN (a window or plane holding one gives NaN), as
// cuDNN with CUDNN_PROPAGATE_NAN, our CUDA kernels and the ONNX reference do.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/float_sums.h"
#include "runtime/cpu/max_pool_rows.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn::cpu {

namespace {

// Elements below which waking the threads costs more than it saves.
constexpr int64_t kParallelThreshold = 16384;

// max(best, v) that keeps a NaN (std::max(best, NaN) is best: the comparison is false).
inline float max_propagating_nan(float best, float v) { return v > best || std::isnan(v) ? v : best; }

// A window pool reduced to 2-D (a 1-D pool has in_h = kernel_h = out_h = 1).
struct PoolProblem {
  int64_t channels = 1;  // channels-last (X [N, H, W, C]): C, planes = N and each element is a row of C
  int64_t planes = 0, in_h = 1, in_w = 1, kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1, pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t out_h = 1, out_w = 1;
};

Expected<PoolProblem> pool_problem(const KernelArgs& args) {
  const ir::Node& node = args.node;
  const bool channels_last = ir::is_channels_last(node);
  if (channels_last && args.src[0]->rank() != 4)
    return unsupported(node.describe() + ": a channels-last CPU pool is 2-D, got X " + args.src[0]->describe());
  const Shape x = channels_last ? ir::nhwc_to_nchw(args.src[0]->shape()) : args.src[0]->shape();
  if (x.size() != 3 && x.size() != 4)
    return unsupported(node.describe() + ": CPU pooling handles 1-D and 2-D windows, got X " + shape_to_string(x));
  const bool ceil_mode = node.attrs.has("ceil_mode") && node.attrs.get_int("ceil_mode") != 0;
  auto g = compute_window_geometry(node.attrs, Shape(x.begin() + 2, x.end()), node.attrs.get_ints("kernel_shape"),
                                   ceil_mode);
  if (!g) return Status(g.status().code(), node.describe() + " with X " + shape_to_string(x) + ": " + g.status().message());
  Shape expected = {x[0], x[1]};
  expected.insert(expected.end(), g->output.begin(), g->output.end());
  if (channels_last) expected = ir::nchw_to_nhwc(expected);
  if (args.dst[0]->shape() != expected)
    return invalid_argument(node.describe() + ": Y is " + shape_to_string(args.dst[0]->shape()) + ", expected " +
                            shape_to_string(expected));
  PoolProblem p;
  p.channels = channels_last ? x[1] : 1;
  p.planes = channels_last ? x[0] : x[0] * x[1];
  const size_t w = g->rank() - 1;
  p.in_w = x.back();
  p.kernel_w = g->kernel[w];
  p.stride_w = g->stride[w];
  p.dilation_w = g->dilation[w];
  p.pad_left = g->pad_begin[w];
  p.pad_right = g->pad_end[w];
  p.out_w = g->output[w];
  if (g->rank() == 2) {
    p.in_h = x[2];
    p.kernel_h = g->kernel[0];
    p.stride_h = g->stride[0];
    p.dilation_h = g->dilation[0];
    p.pad_top = g->pad_begin[0];
    p.pad_bottom = g->pad_end[0];
    p.out_h = g->output[0];
  }
  return p;
}

// Runs `reduce(plane_src, h0, w0, out)` for every output element; h0/w0 are the window's
// first input coordinates (may be negative). `out` is one float (NCHW) or the C channels of
// one output pixel (NHWC), and plane_src the sample's [H, W, C] then; tap (ih, iw) is at
// plane_src + (ih·W + iw)·channels.
template <typename Reduce>
void for_each_window(const PoolProblem& p, const float* src, float* dst, Reduce reduce) {
  const int64_t in_plane = p.in_h * p.in_w * p.channels, out_plane = p.out_h * p.out_w * p.channels;
#pragma omp parallel for collapse(2) schedule(static) if (p.planes * in_plane > kParallelThreshold)
  for (int64_t i = 0; i < p.planes; ++i)
    for (int64_t oh = 0; oh < p.out_h; ++oh) {
      const float* s = src + i * in_plane;
      float* d = dst + i * out_plane + oh * p.out_w * p.channels;
      for (int64_t ow = 0; ow < p.out_w; ++ow)
        reduce(s, oh * p.stride_h - p.pad_top, ow * p.stride_w - p.pad_left, d + ow * p.channels);
    }
}

// The taps of the window at (h0, w0) AveragePool divides by (see the top of the file).
int64_t average_divisor(const PoolProblem& p, int64_t h0, int64_t w0, bool include_pad) {
  int64_t rows_in = 0, rows_padded = 0, cols_in = 0, cols_padded = 0;
  for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
    const int64_t iw = w0 + kw * p.dilation_w;
    cols_in += iw >= 0 && iw < p.in_w;
    cols_padded += iw < p.in_w + p.pad_right;
  }
  for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
    const int64_t ih = h0 + kh * p.dilation_h;
    rows_padded += ih < p.in_h + p.pad_bottom;
    rows_in += ih >= 0 && ih < p.in_h;
  }
  return include_pad ? rows_padded * cols_padded : rows_in * cols_in;
}

// Calls tap(offset) for each tap of the window at (h0, w0) inside the input, offset = (ih·W + iw)·channels.
template <typename Tap>
inline void for_each_tap(const PoolProblem& p, int64_t h0, int64_t w0, Tap tap) {
  for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
    const int64_t ih = h0 + kh * p.dilation_h;
    if (ih < 0 || ih >= p.in_h) continue;
    for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
      const int64_t iw = w0 + kw * p.dilation_w;
      if (iw >= 0 && iw < p.in_w) tap((ih * p.in_w + iw) * p.channels);
    }
  }
}

// MaxPool with its Indices output (NCHW: the layout pass keeps such a node there): each maximum's flat index
// in X, its position in the plane row-major, or column-major (ih + iw·H) with storage_order 1.
Status run_max_pool_with_indices(const KernelArgs& args, const PoolProblem& p) {
  if (p.channels != 1) return unsupported(args.node.describe() + ": MaxPool's Indices output in a channels-last graph");
  const bool column_major = args.node.attrs.get_int("storage_order") != 0;
  const float* src = args.src[0]->data<float>();
  float* dst = args.dst[0]->data<float>();
  int64_t* indices = args.dst[1]->data<int64_t>();
  const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
#pragma omp parallel for collapse(2) schedule(static) if (p.planes * in_plane > kParallelThreshold)
  for (int64_t i = 0; i < p.planes; ++i)
    for (int64_t oh = 0; oh < p.out_h; ++oh)
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        const int64_t h0 = oh * p.stride_h - p.pad_top, w0 = ow * p.stride_w - p.pad_left;
        float best = -std::numeric_limits<float>::infinity();
        int64_t best_h = -1, best_w = -1;
        for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
          const int64_t ih = h0 + kh * p.dilation_h;
          if (ih < 0 || ih >= p.in_h) continue;
          for (int64_t kw = 0; kw < p.kernel_w; ++kw) {
            const int64_t iw = w0 + kw * p.dilation_w;
            if (iw < 0 || iw >= p.in_w) continue;
            const float v = src[i * in_plane + ih * p.in_w + iw];
            if (best_h < 0 || v > best || std::isnan(v)) {  // as max_propagating_nan; the last NaN's index
              best = v;
              best_h = ih;
              best_w = iw;
            }
          }
        }
        const int64_t at = i * out_plane + oh * p.out_w + ow;
        dst[at] = best;
        // A window with no tap inside X (possible with large pads) names no element: -1.
        indices[at] =
            best_h < 0 ? -1 : i * in_plane + (column_major ? best_h + best_w * p.in_h : best_h * p.in_w + best_w);
      }
  return Status::ok();
}

// NCHW MaxPool: threads over (plane, output row); each row's interior windows through the vectorised
// max_pool_row (Note [max pool rows keep the window order], runtime/cpu/max_pool_rows.h), its edge
// windows through the scalar loop.
void run_max_pool_planes(const PoolProblem& p, const float* src, float* dst) {
  const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  const InteriorColumns cols = interior_columns(p.in_w, p.out_w, p.kernel_w, p.stride_w, p.dilation_w, p.pad_left);
#pragma omp parallel for collapse(2) schedule(static) if (p.planes * in_plane > kParallelThreshold)
  for (int64_t i = 0; i < p.planes; ++i)
    for (int64_t oh = 0; oh < p.out_h; ++oh) {
      const float* s = src + i * in_plane;
      float* d = dst + i * out_plane + oh * p.out_w;
      const int64_t h0 = oh * p.stride_h - p.pad_top;
      auto edge = [&](int64_t ow) {
        float best = -std::numeric_limits<float>::infinity();
        for_each_tap(p, h0, ow * p.stride_w - p.pad_left, [&](int64_t at) { best = max_propagating_nan(best, s[at]); });
        d[ow] = best;
      };
      for (int64_t ow = 0; ow < cols.first; ++ow) edge(ow);
      const TapsInside rows = taps_inside(h0, p.kernel_h, p.dilation_h, p.in_h);
      max_pool_row({s, p.in_w, h0 + rows.first * p.dilation_h, rows.count, p.dilation_h, p.kernel_w, p.stride_w,
                    p.dilation_w, p.pad_left, cols.first, cols.last},
                   d);
      for (int64_t ow = cols.last; ow < p.out_w; ++ow) edge(ow);
    }
}

Status run_max_pool(const KernelArgs& args) {
  UCUDNN_ASSIGN_OR_RETURN(PoolProblem p, pool_problem(args));
  if (args.dst.size() > 1 && args.dst[1] != nullptr) return run_max_pool_with_indices(args, p);
  if (p.channels == 1) {
    run_max_pool_planes(p, args.src[0]->data<float>(), args.dst[0]->data<float>());
    return Status::ok();
  }
  const int64_t c = p.channels;
  for_each_window(p, args.src[0]->data<float>(), args.dst[0]->data<float>(),
                  [&p, c](const float* s, int64_t h0, int64_t w0, float* d) {
                    std::fill(d, d + c, -std::numeric_limits<float>::infinity());
                    for_each_tap(p, h0, w0, [&](int64_t at) {
                      for (int64_t k = 0; k < c; ++k) d[k] = max_propagating_nan(d[k], s[at + k]);
                    });
                  });
  return Status::ok();
}

Status run_average_pool(const KernelArgs& args) {
  UCUDNN_ASSIGN_OR_RETURN(PoolProblem p, pool_problem(args));
  const bool include_pad =
      args.node.attrs.has("count_include_pad") && args.node.attrs.get_int("count_include_pad") != 0;
  const int64_t c = p.channels;
  for_each_window(p, args.src[0]->data<float>(), args.dst[0]->data<float>(),
                  [&p, c, include_pad](const float* s, int64_t h0, int64_t w0, float* d) {
                    std::fill(d, d + c, 0.0f);
                    for_each_tap(p, h0, w0, [&](int64_t at) {
                      for (int64_t k = 0; k < c; ++k) d[k] += s[at + k];
                    });
                    const int64_t count = average_divisor(p, h0, w0, include_pad);
                    for (int64_t k = 0; k < c; ++k) d[k] = count > 0 ? d[k] / static_cast<float>(count) : 0.0f;
                  });
  return Status::ok();
}

// X [N, H, W, C] → Y [N, 1, 1, C]. Each task reads a contiguous span of one sample's H·W rows
// (whole rows of C channels, so memory is read in order), folding it into a partial row of C; the
// partials of a sample are then folded together. A sample is cut into as many spans as keep every
// thread busy (one span each at N >= threads).
template <bool kMax>
Status run_global_pool_nhwc(const KernelArgs& args) {
  const Tensor& x = *args.src[0];
  if (x.rank() != 4) return unsupported(args.node.describe() + ": a channels-last global pool reads 4-D X, got " +
                                        x.describe());
  const int64_t n = x.dim(0), rows = x.dim(1) * x.dim(2), c = x.dim(3);
  if (n * c > 0 && rows == 0)
    return invalid_argument(args.node.describe() + ": cannot pool X " + x.describe() + " over an empty spatial axis");
  if (args.dst[0]->shape() != Shape{n, 1, 1, c})
    return invalid_argument(args.node.describe() + ": Y is " + args.dst[0]->describe() + " for X " + x.describe());
  if (n * c == 0) return Status::ok();
  const bool parallel = x.numel() > kParallelThreshold;
  const int64_t threads = parallel ? omp_get_max_threads() : 1;
  const int64_t spans = std::clamp<int64_t>((threads + n - 1) / n, 1, rows);
  // The sums in double (as the NCHW path), the maxima in float.
  using Acc = std::conditional_t<kMax, float, double>;
  std::vector<Acc> partial(static_cast<size_t>(n * spans * c));
  const float* src = x.data<float>();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t task = 0; task < n * spans; ++task) {
    const int64_t i = task / spans, span = task % spans;
    const int64_t first = rows * span / spans, last = rows * (span + 1) / spans;
    Acc* acc = partial.data() + task * c;
    std::fill(acc, acc + c, kMax ? -std::numeric_limits<Acc>::infinity() : Acc{0});
    for (int64_t r = first; r < last; ++r) {
      const float* row = src + (i * rows + r) * c;
      for (int64_t k = 0; k < c; ++k) {
        if constexpr (kMax) acc[k] = max_propagating_nan(acc[k], row[k]);
        else acc[k] += row[k];
      }
    }
  }
  float* dst = args.dst[0]->data<float>();
#pragma omp parallel for collapse(2) schedule(static) if (parallel && n * c * spans > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < c; ++k) {
      Acc v = partial[static_cast<size_t>(i * spans * c + k)];
      for (int64_t span = 1; span < spans; ++span) {
        const Acc p = partial[static_cast<size_t>((i * spans + span) * c + k)];
        if constexpr (kMax) v = max_propagating_nan(v, p);
        else v += p;
      }
      if constexpr (kMax) dst[i * c + k] = v;
      else dst[i * c + k] = static_cast<float>(v / static_cast<double>(rows));
    }
  return Status::ok();
}

template <bool kMax>
Status run_global_pool(const KernelArgs& args) {
  const Tensor& x = *args.src[0];
  if (ir::is_channels_last(args.node)) return run_global_pool_nhwc<kMax>(args);
  if (x.rank() < 3) return invalid_argument(args.node.describe() + ": X " + x.describe() + " must have rank >= 3");
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t size = planes == 0 ? 0 : x.numel() / planes;
  if (planes > 0 && size == 0)
    return invalid_argument(args.node.describe() + ": cannot pool X " + x.describe() + " over an empty spatial axis");
  if (args.dst[0]->numel() != planes)
    return invalid_argument(args.node.describe() + ": Y is " + args.dst[0]->describe() + " for X " + x.describe());
  const float* src = x.data<float>();
  float* dst = args.dst[0]->data<float>();
#pragma omp parallel for schedule(static) if (x.numel() > kParallelThreshold)
  for (int64_t i = 0; i < planes; ++i) {
    const float* s = src + i * size;
    if constexpr (kMax) {
      float best = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < size; ++j) best = max_propagating_nan(best, s[j]);
      dst[i] = best;
    } else {
      dst[i] = static_cast<float>(sum_in_float_runs(s, size) / static_cast<double>(size));
    }
  }
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_MaxPool() {
  static const CpuKernel k{.run = run_max_pool};
  return k;
}

const CpuKernel& cpu_kernel_AveragePool() {
  static const CpuKernel k{.run = run_average_pool};
  return k;
}

const CpuKernel& cpu_kernel_GlobalAveragePool() {
  static const CpuKernel k{.run = run_global_pool<false>};
  return k;
}

const CpuKernel& cpu_kernel_GlobalMaxPool() {
  static const CpuKernel k{.run = run_global_pool<true>};
  return k;
}

}  // namespace ucudnn::cpu
