// GridSample on the GPU (runtime/ops/grid_sample.h): the parameters resolved at prepare from the call's
// shapes, then one kernel (grid_sample_kernels.cu).
#include "runtime/ops/grid_sample.h"

#include <memory>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/grid_sample_kernels.h"
#include "runtime/ir/layout.h"

namespace ucudnn::cuda {

namespace {

class GridSampleState final : public KernelState {
 public:
  GridSampleParams params;
  int64_t n = 0, c = 0;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_grid_sample(a.src[0].as<const float>(), a.src[1].as<const float>(), a.dst[0].as<float>(),
                                         n, c, params, a.ctx.stream()),
                      context);
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_grid_sample(const PrepareArgs& a) {
  if (ir::is_channels_last(a.node)) return a.unsupported_error("channels-last GridSample");
  auto p = resolve_grid_sample(a.node.attrs, a.src_shapes[0], a.src_shapes[1]);
  if (!p) return Status(p.status().code(), a.describe() + ": " + p.status().message());
  auto s = std::make_unique<GridSampleState>();
  s->params = *p;
  s->n = a.src_shapes[0][0];
  s->c = a.src_shapes[0][1];
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_GridSample() {
  static const CudaKernel k{.prepare = prepare_grid_sample};
  return k;
}

}  // namespace ucudnn::cuda
