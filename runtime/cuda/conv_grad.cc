// ConvGradData and ConvGradFilter on the GPU: cudnnConvolutionBackwardData / BackwardFilter.
// Which algorithm runs is the plan's (a cudnnConvolutionBwdDataAlgo_t / BwdFilterAlgo_t; the
// optimizer times them); -1 is ALGO_1 in both directions (deterministic, every geometry).
//
// prepare: the descriptors of the forward convolution for this call's batch (X or dX, W or dW,
// dY; the convolution descriptor shared with runtime/cuda/conv.cc, so the math type follows Note
// [conv math type]) and the workspace bytes from cudnnGetConvolutionBackward*WorkspaceSize — a
// pure query. run: one cuDNN call; ConvGradFilter's micro-batches after the first accumulate into
// dW (β = 1, PrepareArgs::accumulate).
// Note [conv asymmetric padding] (conv.cc) in the backward directions: cuDNN pads min(begin, end)
// on both sides; ConvGradFilter pads the rest into a copy of X at the start of the workspace,
// ConvGradData computes the gradient of that padded X there and crops it into dX.
// Channels-last nodes (Note [channels-last], runtime/ir/layout.h: X, dX, dY [N, H, W, C], W and dW
// [K, R, S, C/group]) get NHWC descriptors, as the forward's do (conv.cc), and cuDNN picks its NHWC
// kernels. Assumptions: float32; NCHW 1-D or 2-D, or NHWC 2-D.
#include <algorithm>

#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/cudnn_descriptors.h"
#include "runtime/cuda/kernels.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn::cuda {

namespace {

constexpr size_t kWorkspaceAlignment = 256;  // cuDNN's workspace after the padded X stays aligned

class ConvGradState final : public KernelState {
 public:
  bool data = true;  // ConvGradData; else ConvGradFilter
  TensorDescriptor x, dy;  // x: X or dX as cuDNN sees it (padded when `padded`)
  FilterDescriptor w;
  ConvolutionDescriptor conv;
  int algorithm = 1;
  size_t cudnn_workspace = 0;
  bool accumulate = false;

  // Note [conv asymmetric padding]: the padded X (or dX) at the start of the workspace.
  bool padded = false;
  int64_t padded_numel = 0;   // filter: the padded X's; data: dX's (the crop's output)
  size_t padded_bytes = 0;    // rounded up to kWorkspaceAlignment
  StridedLayout layout;       // launch_pad's: dims and strides of the side it reads
  int64_t src_dims[kMaxDims] = {}, pad_begin[kMaxDims] = {};

  size_t workspace_bytes() const override { return padded_bytes + cudnn_workspace; }

  Status run(const RunArgs& a) override {
    if (workspace_bytes() > 0 && (a.workspace == nullptr || a.workspace_bytes < workspace_bytes()))
      return invalid_argument("needs " + std::to_string(workspace_bytes()) + " workspace bytes, got " +
                              std::to_string(a.workspace_bytes));
    void* scratch = static_cast<char*>(a.workspace) + padded_bytes;
    const float one = 1.0f, zero = 0.0f;
    cudnnHandle_t h = a.ctx.cudnn();
    if (data) {
      void* dx = padded ? a.workspace : a.dst[0].data;
      UCUDNN_CUDNN_CHECK(cudnnConvolutionBackwardData(h, &one, w.get(), a.src[1].data, dy.get(), a.src[0].data,
                                                      conv.get(), static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm),
                                                      scratch, cudnn_workspace, &zero, x.get(), dx),
                         "backward-data algorithm " + std::to_string(algorithm));
      if (padded)
        UCUDNN_CUDA_CHECK(launch_pad(static_cast<const float*>(a.workspace), a.dst[0].as<float>(), padded_numel,
                                     layout, src_dims, pad_begin, PadMode::kConstant, 0.0f, a.ctx.stream()),
                          "cropping dX (Note [conv asymmetric padding])");
      return Status::ok();
    }
    const void* x_data = a.src[0].data;
    if (padded) {
      UCUDNN_CUDA_CHECK(launch_pad(a.src[0].as<const float>(), static_cast<float*>(a.workspace), padded_numel, layout,
                                   src_dims, pad_begin, PadMode::kConstant, 0.0f, a.ctx.stream()),
                        "padding X (Note [conv asymmetric padding])");
      x_data = a.workspace;
    }
    const float* beta = accumulate ? &one : &zero;
    UCUDNN_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, &one, x.get(), x_data, dy.get(), a.src[1].data, conv.get(),
                                                      static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm),
                                                      scratch, cudnn_workspace, beta, w.get(), a.dst[0].data),
                       "backward-filter algorithm " + std::to_string(algorithm));
    return Status::ok();
  }
};

// Note [conv asymmetric padding]: cuDNN's pads (min(begin, end) per axis) into *pads; when some
// axis pads unequally, s's launch_pad parameters (pad X into the workspace, or crop the padded dX
// out of it) and returns the padded X's shape, else X's. `x` is in memory order (spatial dims from
// 1 when `nhwc`, else from 2), and so is the result.
Shape pad_asymmetrically(const Shape& x, const WindowGeometry& g, bool nhwc, ConvGradState* s, std::vector<int>* pads) {
  Shape padded = x;
  std::vector<int64_t> begin(x.size(), 0);
  const size_t first_spatial = nhwc ? 1 : 2;
  for (size_t d = 0; d < g.rank(); ++d) {
    const int64_t common = std::min(g.pad_begin[d], g.pad_end[d]);
    pads->push_back(static_cast<int>(common));
    begin[first_spatial + d] = g.pad_begin[d] - common;
    padded[first_spatial + d] += g.pad_begin[d] + g.pad_end[d] - 2 * common;
    s->padded = s->padded || g.pad_begin[d] != g.pad_end[d];
  }
  if (!s->padded) return x;
  // Filter: read X, write the padded X. Data: read the padded dX, write dX (negative pads crop).
  const Shape& read = s->data ? padded : x;
  const Shape& written = s->data ? x : padded;
  const std::vector<int64_t> strides = shape_strides(read);
  s->layout.rank = static_cast<int>(x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    s->layout.dims[d] = written[d];
    s->layout.strides[0][d] = strides[d];
    s->src_dims[d] = read[d];
    s->pad_begin[d] = s->data ? -begin[d] : begin[d];
  }
  s->padded_numel = shape_numel(written);
  const size_t bytes = static_cast<size_t>(shape_numel(padded)) * sizeof(float);
  s->padded_bytes = (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  return padded;
}

// The descriptors of the forward convolution X ⊛ W = dY behind the node; the shapes in memory order.
Status build_descriptors(const PrepareArgs& a, const Shape& x_memory, const Shape& w_memory, const Shape& dy_memory,
                         ConvGradState* s) {
  const std::string context = a.describe();
  const bool nhwc = ir::is_channels_last(a.node);
  if (a.src_dtype(0) != DType::kFloat32 || a.src_dtype(1) != DType::kFloat32)
    return a.unsupported_error("only float32 convolutions");
  if (nhwc && (x_memory.size() != 4 || w_memory.size() != 4 || dy_memory.size() != 4))
    return a.unsupported_error("channels-last convolutions other than 2-D");
  // cuDNN's dims are in NCHW order whatever the memory layout.
  const auto nchw = [nhwc](const Shape& shape) { return nhwc ? ir::nhwc_to_nchw(shape) : shape; };
  const Shape xs = nchw(x_memory), ws = nchw(w_memory), dys = nchw(dy_memory);
  if (xs.size() < 3 || xs.size() > 4 || ws.size() != xs.size() || dys.size() != xs.size())
    return a.unsupported_error("1-D and 2-D convolutions with X, W and dY of one rank");
  UCUDNN_ASSIGN_OR_RETURN(WindowGeometry g,
                          compute_window_geometry(a.node.attrs, Shape(xs.begin() + 2, xs.end()),
                                                  std::vector<int64_t>(ws.begin() + 2, ws.end()), false));
  std::vector<int> pads;
  const Shape padded_xs = nchw(pad_asymmetrically(x_memory, g, nhwc, s, &pads));
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->x, padded_xs, context, nhwc));
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->dy, dys, context, nhwc));
  UCUDNN_RETURN_IF_ERROR(set_filter_descriptor(s->w, ws, context, nhwc));
  UCUDNN_RETURN_IF_ERROR(
      set_convolution_descriptor(s->conv, std::move(pads), g, a.node.attrs.get_int("group"), a.ctx.math(), context));
  // dY must be what cuDNN's forward convolution of these descriptors outputs.
  std::vector<int> expected(4);
  UCUDNN_CUDNN_CHECK(cudnnGetConvolutionNdForwardOutputDim(s->conv.get(), s->x.get(), s->w.get(),
                                                           static_cast<int>(expected.size()), expected.data()),
                     context);
  if (expected != cudnn_dims(dys))
    return a.unsupported_error("cuDNN's convolution output differs from dY " + shape_to_string(dys));
  return Status::ok();
}

// The plan's algorithm (-1 → ALGO_1), checked against cuDNN's count for the direction.
Status choose_algorithm(const PrepareArgs& a, int count, const char* direction, ConvGradState* s) {
  if (a.algorithm < -1 || a.algorithm >= count)
    return invalid_argument(a.describe() + ": no cuDNN " + direction + " algorithm " + std::to_string(a.algorithm) +
                            " (0 to " + std::to_string(count - 1) + ", -1 is the default)");
  s->algorithm = a.algorithm == -1 ? 1 : a.algorithm;
  return Status::ok();
}

Expected<std::unique_ptr<KernelState>> prepare_conv_grad_data(const PrepareArgs& a) {
  if (a.accumulate) return internal_error(a.describe() + ": dX is cut with the batch, never accumulated");
  auto s = std::make_unique<ConvGradState>();
  s->data = true;
  if (a.src_shapes.size() != 2 || a.dst_shapes.size() != 1) return internal_error(a.describe() + ": not 2 inputs, 1 output");
  UCUDNN_RETURN_IF_ERROR(build_descriptors(a, a.dst_shapes[0], a.src_shapes[1], a.src_shapes[0], s.get()));
  UCUDNN_RETURN_IF_ERROR(choose_algorithm(a, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, "backward-data", s.get()));
  UCUDNN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
                         a.ctx.cudnn(), s->w.get(), s->dy.get(), s->conv.get(), s->x.get(),
                         static_cast<cudnnConvolutionBwdDataAlgo_t>(s->algorithm), &s->cudnn_workspace),
                     a.describe() + ", backward-data algorithm " + std::to_string(s->algorithm));
  return std::unique_ptr<KernelState>(std::move(s));
}

Expected<std::unique_ptr<KernelState>> prepare_conv_grad_filter(const PrepareArgs& a) {
  auto s = std::make_unique<ConvGradState>();
  s->data = false;
  s->accumulate = a.accumulate;
  if (a.src_shapes.size() != 2 || a.dst_shapes.size() != 1) return internal_error(a.describe() + ": not 2 inputs, 1 output");
  UCUDNN_RETURN_IF_ERROR(build_descriptors(a, a.src_shapes[0], a.dst_shapes[0], a.src_shapes[1], s.get()));
  UCUDNN_RETURN_IF_ERROR(choose_algorithm(a, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, "backward-filter", s.get()));
  UCUDNN_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
                         a.ctx.cudnn(), s->x.get(), s->dy.get(), s->conv.get(), s->w.get(),
                         static_cast<cudnnConvolutionBwdFilterAlgo_t>(s->algorithm), &s->cudnn_workspace),
                     a.describe() + ", backward-filter algorithm " + std::to_string(s->algorithm));
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_ConvGradData() {
  static const CudaKernel k{.prepare = prepare_conv_grad_data};
  return k;
}

const CudaKernel& cuda_kernel_ConvGradFilter() {
  static const CudaKernel k{.prepare = prepare_conv_grad_filter};
  return k;
}

}  // namespace ucudnn::cuda
