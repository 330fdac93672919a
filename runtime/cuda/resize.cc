// Resize on the GPU (runtime/ops/resize.h): the parameters resolved at prepare from the call's shapes
// and the constant scales or sizes, then one kernel (resize_kernels.cu).
#include <memory>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/resize_kernels.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/resize.h"

namespace ucudnn::cuda {

namespace {

class ResizeState final : public KernelState {
 public:
  ResizeParams params;
  int64_t planes = 0;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_resize(a.src[0].as<const float>(), a.dst[0].as<float>(), planes, params, a.ctx.stream()),
                      context);
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_resize(const PrepareArgs& a) {
  if (ir::is_channels_last(a.node)) return a.unsupported_error("channels-last Resize");
  if (a.src_dtype(0) != DType::kFloat32) return a.unsupported_error("only float32");
  auto resolved = resolve_resize(a.node.attrs, a.src_shapes[0], a.constant(2), a.constant(3));
  if (!resolved) return Status(resolved.status().code(), a.describe() + ": " + resolved.status().message());
  if (resolved->output != a.dst_shapes[0])
    return internal_error(a.describe() + ": Y is " + shape_to_string(a.dst_shapes[0]) + " but the resize gives " +
                          shape_to_string(resolved->output));
  auto s = std::make_unique<ResizeState>();
  s->params = resolved->params;
  s->planes = a.src_shapes[0][0] * a.src_shapes[0][1];
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_Resize() {
  static const CudaKernel k{.prepare = prepare_resize};
  return k;
}

}  // namespace ucudnn::cuda
