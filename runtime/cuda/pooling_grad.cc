// CUDA kernels of the pooling_grad family (runtime/ops/pooling_grad.cc): MaxPoolGrad and
// AveragePoolGrad on our own gather kernels (pooling_grad_kernels.cu) for every geometry the
// shape rule accepts — cuDNN's cudnnPoolingBackward needs Y, pads symmetrically and may break
// max ties differently. prepare fixes the geometry; run is one launch. NCHW, or channels-last for
// 2-D pools (Note [channels-last], runtime/ir/layout.h: dY, X and dX [N, H, W, C]).
#include <memory>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/pooling_grad_kernels.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn::cuda {

namespace {

class PoolGradState final : public KernelState {
 public:
  bool max = true, include_pad = false;
  PoolGeometry geometry;
  Status run(const RunArgs& a) override {
    if (max) {
      UCUDNN_CUDA_CHECK(launch_max_pool_grad(a.src[0].as<const float>(), a.src[1].as<const float>(),
                                             a.dst[0].as<float>(), geometry, a.ctx.stream()),
                        context);
    } else {
      UCUDNN_CUDA_CHECK(launch_average_pool_grad(a.src[0].as<const float>(), a.dst[0].as<float>(), geometry,
                                                 include_pad, a.ctx.stream()),
                        context);
    }
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_pool_grad(const PrepareArgs& a, bool max) {
  const bool channels_last = ir::is_channels_last(a.node);
  if (channels_last && a.dst_shapes[0].size() != 4) return a.unsupported_error("channels-last pools that are not 2-D");
  for (size_t i = 0; i < a.src_shapes.size(); ++i)
    if (a.src_dtype(i) != DType::kFloat32) return a.unsupported_error("only float32");
  // NCHW views of the shapes (a channels-last node's are NHWC).
  const auto nchw = [&](const Shape& s) { return channels_last ? ir::nhwc_to_nchw(s) : s; };
  const Shape dx = nchw(a.dst_shapes[0]);
  const Shape dy = nchw(a.src_shapes[0]);
  if (dx.size() < 3 || dx.size() > 2 + static_cast<size_t>(kMaxPoolDims))
    return a.unsupported_error("1 to 3 spatial dims");
  if (max && nchw(a.src_shapes[1]) != dx)
    return internal_error(a.describe() + ": dX " + shape_to_string(dx) + " is not X's shape");
  const Shape spatial(dx.begin() + 2, dx.end());
  auto g = compute_window_geometry(a.node.attrs, spatial, a.node.attrs.get_ints("kernel_shape"),
                                   a.node.attrs.get_int("ceil_mode") != 0);
  if (!g) return g.status().with_context(a.describe());
  // The shape rule made dY's shape from the same geometry; a mismatch is our bug, not the model's.
  if (dy.size() != dx.size() || dy[0] != dx[0] || dy[1] != dx[1] || Shape(dy.begin() + 2, dy.end()) != g->output)
    return internal_error(a.describe() + ": dY " + shape_to_string(dy) + " is not the pool's output " +
                          shape_to_string(g->output));
  auto s = std::make_unique<PoolGradState>();
  s->max = max;
  s->include_pad = !max && a.node.attrs.get_int("count_include_pad") != 0;
  s->context = a.describe();
  PoolGeometry& p = s->geometry;
  p.rank = static_cast<int>(g->rank());
  p.batch = dx[0];
  p.channels = dx[1];
  p.channels_last = channels_last;
  for (size_t d = 0; d < g->rank(); ++d) {
    p.input[d] = g->input[d];
    p.output[d] = g->output[d];
    p.kernel[d] = g->kernel[d];
    p.stride[d] = g->stride[d];
    p.dilation[d] = g->dilation[d];
    p.pad_begin[d] = g->pad_begin[d];
    p.pad_end[d] = g->pad_end[d];
  }
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_MaxPoolGrad() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_pool_grad(a, true); }};
  return k;
}

const CudaKernel& cuda_kernel_AveragePoolGrad() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_pool_grad(a, false); }};
  return k;
}

}  // namespace ucudnn::cuda
