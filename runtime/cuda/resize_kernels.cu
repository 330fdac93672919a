// Resize's CUDA kernel (see resize_kernels.h): a grid-stride loop over Y.
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/resize_kernels.h"

namespace ucudnn::cuda {

namespace {

__global__ void resize_kernel(const float* x, float* y, int64_t n, ResizeParams p) {
  UCUDNN_GRID_LOOP(i, n) {
    const int64_t ow = i % p.w.out;
    const int64_t oh = i / p.w.out % p.h.out;
    const float* plane = x + i / (p.w.out * p.h.out) * (p.h.in * p.w.in);
    const float sh = resize_source_coordinate(p.h, p.coordinates, oh);
    const float sw = resize_source_coordinate(p.w, p.coordinates, ow);
    if (p.mode == ResizeMode::kNearest) {
      y[i] = plane[resize_nearest_index(sh, p.rounding, p.h.in) * p.w.in + resize_nearest_index(sw, p.rounding, p.w.in)];
      continue;
    }
    if (p.mode == ResizeMode::kCubic) {
      const CubicTaps r = resize_cubic_taps(sh, p.h.in, p.cubic_a, p.exclude_outside);
      const CubicTaps c = resize_cubic_taps(sw, p.w.in, p.cubic_a, p.exclude_outside);
      float sum = 0.0f;
      for (int k = 0; k < 4; ++k) {
        const float* row = plane + r.index[k] * p.w.in;
        float across = 0.0f;
        for (int j = 0; j < 4; ++j) across += c.weight[j] * row[c.index[j]];
        sum += r.weight[k] * across;
      }
      y[i] = sum;
      continue;
    }
    const LinearTap r = resize_linear_tap(sh, p.h.in), c = resize_linear_tap(sw, p.w.in);
    const float* top = plane + r.first * p.w.in;
    const float* bottom = plane + r.second * p.w.in;
    const float upper = top[c.first] + (top[c.second] - top[c.first]) * c.weight;
    const float lower = bottom[c.first] + (bottom[c.second] - bottom[c.first]) * c.weight;
    y[i] = upper + (lower - upper) * r.weight;
  }
}

}  // namespace

cudaError_t launch_resize(const float* x, float* y, int64_t planes, const ResizeParams& params, cudaStream_t stream) {
  const int64_t n = planes * params.h.out * params.w.out;
  if (n == 0) return cudaSuccess;
  resize_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, n, params);
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
