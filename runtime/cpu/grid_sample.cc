// GridSample on the CPU (NCHW; the descriptor: runtime/ops/grid_sample.h): threads over the output rows of
// every sample; each grid point's sampling (grid_sample_math.h) is done once per channel plane.
#include "runtime/ops/grid_sample.h"

#include <omp.h>

#include "runtime/cpu/cpu_kernel.h"

namespace ucudnn::cpu {

namespace {

constexpr int64_t kParallelElements = 1 << 14;  // fewer output elements run on one thread

Status run_grid_sample(const KernelArgs& args) {
  const Tensor& x = *args.src[0];
  const Tensor& grid = *args.src[1];
  auto p = resolve_grid_sample(args.node.attrs, x.shape(), grid.shape());
  if (!p) return Status(p.status().code(), args.node.describe() + ": " + p.status().message());
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t in_plane = p->in_h * p->in_w, points = p->out_h * p->out_w;
  const float* src = x.data<float>();
  const float* g = grid.data<float>();
  float* dst = args.dst[0]->data<float>();
  const GridSampleParams params = *p;
#pragma omp parallel for collapse(2) schedule(static) if (args.dst[0]->numel() > kParallelElements)
  for (int64_t i = 0; i < n; ++i)
    for (int64_t oh = 0; oh < params.out_h; ++oh)
      for (int64_t ow = 0; ow < params.out_w; ++ow) {
        const int64_t point = oh * params.out_w + ow;
        const float* xy = g + (i * points + point) * 2;
        for (int64_t k = 0; k < c; ++k)
          dst[(i * c + k) * points + point] = grid_sample_at(src + (i * c + k) * in_plane, xy[0], xy[1], params);
      }
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_GridSample() {
  static const CpuKernel k{.run = run_grid_sample};
  return k;
}

}  // namespace ucudnn::cpu
