// CUDA kernels of the pooling_grad family (runtime/ops/pooling_grad.cc): MaxPoolGrad and
// AveragePoolGrad on our own gather kernels (pooling_grad_kernels.cu) for every geometry the
// shape rule accepts — cuDNN's cudnnPoolingBackward needs Y, pads symmetrically and may break
// max ties differently. prepare fixes the geometry; run is one launch (MaxPoolGrad: two, Note [max pool
// choices] in pooling_grad_kernels.cu, with one byte a window of workspace). NCHW, or channels-last for
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
  // MaxPoolGrad: each window's choice in the workspace (Note [max pool choices], pooling_grad_kernels.cu).
  size_t workspace_bytes() const override { return max ? max_pool_choice_bytes(geometry) : 0; }
  Status run(const RunArgs& a) override {
    if (max) {
      UCUDNN_CUDA_CHECK(launch_max_pool_grad(a.src[0].as<const float>(), a.src[1].as<const float>(),
                                             a.dst[0].as<float>(), geometry, a.workspace, a.ctx.stream()),
                        context);
    } else {
      UCUDNN_CUDA_CHECK(launch_average_pool_grad(a.src[0].as<const float>(), a.dst[0].as<float>(), geometry,
                                                 include_pad, a.ctx.stream()),
                        context);
    }
    return Status::ok();
  }
};

// The pool's geometry from the node and its memory shapes (dY, dX; X like dX for MaxPoolGrad), in
// NCHW or channels-last; `describe` names the node in errors.
Expected<PoolGeometry> pool_grad_geometry(const ir::Node& node, const Shape& dy_memory, const Shape& dx_memory,
                                          const std::string& describe) {
  const bool channels_last = ir::is_channels_last(node);
  if (channels_last && dx_memory.size() != 4) return unsupported(describe + ": channels-last pools that are not 2-D");
  // NCHW views of the shapes (a channels-last node's are NHWC).
  const auto nchw = [&](const Shape& s) { return channels_last ? ir::nhwc_to_nchw(s) : s; };
  const Shape dx = nchw(dx_memory), dy = nchw(dy_memory);
  if (dx.size() < 3 || dx.size() > 2 + static_cast<size_t>(kMaxPoolDims))
    return unsupported(describe + ": 1 to 3 spatial dims");
  const Shape spatial(dx.begin() + 2, dx.end());
  auto g = compute_window_geometry(node.attrs, spatial, node.attrs.get_ints("kernel_shape"),
                                   node.attrs.get_int("ceil_mode") != 0);
  if (!g) return g.status().with_context(describe);
  // The shape rule made dY's shape from the same geometry; a mismatch is our bug, not the model's.
  if (dy.size() != dx.size() || dy[0] != dx[0] || dy[1] != dx[1] || Shape(dy.begin() + 2, dy.end()) != g->output)
    return internal_error(describe + ": dY " + shape_to_string(dy) + " is not the pool's output " +
                          shape_to_string(g->output));
  PoolGeometry p;
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
  return p;
}

Expected<std::unique_ptr<KernelState>> prepare_pool_grad(const PrepareArgs& a, bool max) {
  for (size_t i = 0; i < a.src_shapes.size(); ++i)
    if (a.src_dtype(i) != DType::kFloat32) return a.unsupported_error("only float32");
  if (max && a.src_shapes[1] != a.dst_shapes[0])
    return internal_error(a.describe() + ": dX " + shape_to_string(a.dst_shapes[0]) + " is not X's shape");
  auto s = std::make_unique<PoolGradState>();
  UCUDNN_ASSIGN_OR_RETURN(s->geometry, pool_grad_geometry(a.node, a.src_shapes[0], a.dst_shapes[0], a.describe()));
  s->max = max;
  s->include_pad = !max && a.node.attrs.get_int("count_include_pad") != 0;
  s->context = a.describe();
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

size_t pool_grad_step_workspace(const ir::Graph& graph, const ir::Node& node) {
  if (node.op != OpKind::kMaxPoolGrad || node.inputs.empty() || node.outputs.empty()) return 0;
  auto g = pool_grad_geometry(node, graph.value(node.inputs[0]).shape, graph.value(node.outputs[0]).shape, "");
  return g ? max_pool_choice_bytes(*g) : 0;
}

const CudaKernel& cuda_kernel_MaxPoolGrad() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_pool_grad(a, true); }};
  return k;
}

const CudaKernel& cuda_kernel_AveragePoolGrad() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_pool_grad(a, false); }};
  return k;
}

}  // namespace ucudnn::cuda
