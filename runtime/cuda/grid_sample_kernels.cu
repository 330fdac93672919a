// GridSample's CUDA kernel (see grid_sample_kernels.h): a grid-stride loop over Y.
#include "runtime/cuda/grid_loop.cuh"
#include "runtime/cuda/grid_sample_kernels.h"

namespace ucudnn::cuda {

namespace {

__global__ void grid_sample_kernel(const float* x, const float* grid, float* y, int64_t total, int64_t c,
                                   GridSampleParams p) {
  const int64_t points = p.out_h * p.out_w;
  UCUDNN_GRID_LOOP(i, total) {
    const int64_t point = i % points;
    const int64_t plane = i / points;  // sample · c + channel
    const float* xy = grid + (plane / c * points + point) * 2;
    y[i] = grid_sample_at(x + plane * p.in_h * p.in_w, xy[0], xy[1], p);
  }
}

}  // namespace

cudaError_t launch_grid_sample(const float* x, const float* grid, float* y, int64_t n, int64_t c,
                               const GridSampleParams& params, cudaStream_t stream) {
  const int64_t total = n * c * params.out_h * params.out_w;
  if (total == 0) return cudaSuccess;
  grid_sample_kernel<<<blocks_for(total), kThreads, 0, stream>>>(x, grid, y, total, c, params);
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
