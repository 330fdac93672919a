// Resize on the CPU (NCHW; the descriptor and the coordinates: runtime/ops/resize.h). Each axis's
// source indices (and linear or cubic weights) are tabulated once per call; the rows of every plane are then
// split over the threads.
#include <omp.h>

#include <vector>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ops/resize.h"

namespace ucudnn::cpu {

namespace {

constexpr int64_t kParallelElements = 1 << 14;  // fewer output elements run on one thread

std::vector<int64_t> nearest_indices(const ResizeParams& p, const ResizeAxis& a) {
  std::vector<int64_t> indices(static_cast<size_t>(a.out));
  for (int64_t i = 0; i < a.out; ++i)
    indices[static_cast<size_t>(i)] =
        resize_nearest_index(resize_source_coordinate(a, p.coordinates, i), p.rounding, a.in);
  return indices;
}

std::vector<LinearTap> linear_taps(const ResizeParams& p, const ResizeAxis& a) {
  std::vector<LinearTap> taps(static_cast<size_t>(a.out));
  for (int64_t i = 0; i < a.out; ++i)
    taps[static_cast<size_t>(i)] = resize_linear_tap(resize_source_coordinate(a, p.coordinates, i), a.in);
  return taps;
}

std::vector<CubicTaps> cubic_taps(const ResizeParams& p, const ResizeAxis& a) {
  std::vector<CubicTaps> taps(static_cast<size_t>(a.out));
  for (int64_t i = 0; i < a.out; ++i)
    taps[static_cast<size_t>(i)] =
        resize_cubic_taps(resize_source_coordinate(a, p.coordinates, i), a.in, p.cubic_a, p.exclude_outside);
  return taps;
}

Status run_resize(const KernelArgs& args) {
  const Tensor& x = *args.src[0];
  const Tensor* scales = args.src.size() > 2 ? args.src[2] : nullptr;
  const Tensor* sizes = args.src.size() > 3 ? args.src[3] : nullptr;
  auto resolved = resolve_resize(args.node.attrs, x.shape(), scales, sizes);
  if (!resolved) return Status(resolved.status().code(), args.node.describe() + ": " + resolved.status().message());
  const ResizeParams& p = resolved->params;
  if (resolved->output != args.dst[0]->shape())
    return internal_error(args.node.describe() + ": Y is " + shape_to_string(args.dst[0]->shape()) +
                          " but the resize gives " + shape_to_string(resolved->output));
  Tensor& y = *args.dst[0];
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t in_plane = p.h.in * p.w.in, out_h = p.h.out, out_w = p.w.out;
  const float* src = x.data<float>();
  float* dst = y.data<float>();
  const bool parallel = y.numel() > kParallelElements && num_threads() > 1;
  if (p.mode == ResizeMode::kNearest) {
    const std::vector<int64_t> rows = nearest_indices(p, p.h), cols = nearest_indices(p, p.w);
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
    for (int64_t plane = 0; plane < planes; ++plane)
      for (int64_t oh = 0; oh < out_h; ++oh) {
        const float* in_row = src + plane * in_plane + rows[static_cast<size_t>(oh)] * p.w.in;
        float* out_row = dst + (plane * out_h + oh) * out_w;
        for (int64_t ow = 0; ow < out_w; ++ow) out_row[ow] = in_row[cols[static_cast<size_t>(ow)]];
      }
    return Status::ok();
  }
  if (p.mode == ResizeMode::kCubic) {
    const std::vector<CubicTaps> rows = cubic_taps(p, p.h), cols = cubic_taps(p, p.w);
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
    for (int64_t plane = 0; plane < planes; ++plane)
      for (int64_t oh = 0; oh < out_h; ++oh) {
        const CubicTaps& r = rows[static_cast<size_t>(oh)];
        float* out_row = dst + (plane * out_h + oh) * out_w;
        for (int64_t ow = 0; ow < out_w; ++ow) {
          const CubicTaps& c = cols[static_cast<size_t>(ow)];
          float sum = 0.0f;
          for (int i = 0; i < 4; ++i) {
            const float* row = src + plane * in_plane + r.index[i] * p.w.in;
            float across = 0.0f;
            for (int j = 0; j < 4; ++j) across += c.weight[j] * row[c.index[j]];
            sum += r.weight[i] * across;
          }
          out_row[ow] = sum;
        }
      }
    return Status::ok();
  }
  const std::vector<LinearTap> rows = linear_taps(p, p.h), cols = linear_taps(p, p.w);
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (int64_t plane = 0; plane < planes; ++plane)
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const LinearTap& r = rows[static_cast<size_t>(oh)];
      const float* top = src + plane * in_plane + r.first * p.w.in;
      const float* bottom = src + plane * in_plane + r.second * p.w.in;
      float* out_row = dst + (plane * out_h + oh) * out_w;
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const LinearTap& c = cols[static_cast<size_t>(ow)];
        const float upper = top[c.first] + (top[c.second] - top[c.first]) * c.weight;
        const float lower = bottom[c.first] + (bottom[c.second] - bottom[c.first]) * c.weight;
        out_row[ow] = upper + (lower - upper) * r.weight;
      }
    }
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_Resize() {
  static const CpuKernel k{.run = run_resize};
  return k;
}

}  // namespace ucudnn::cpu
