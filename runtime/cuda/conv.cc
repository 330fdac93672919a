// Conv on the GPU through cuDNN's convolution descriptor API. Which algorithm
// runs is the plan's (the optimizer times them: optimizer/bench/cudnn_benchmarker.cc).
//
// prepare: x/w/y/bias descriptors for this call's batch (a micro-batch has its
// own), the convolution descriptor (pads, strides, dilations, groups, math
// type), the algorithm (the plan's, or IMPLICIT_GEMM, which needs no
// workspace), and its workspace bytes from cudnnGetConvolutionForwardWorkspaceSize.
// run: cudnnConvolutionForward, then the bias with cudnnAddTensor; with a Relu
// fused by optimizer/passes (attribute "activation" = "Relu") and a bias, one
// cudnnConvolutionBiasActivationForward call (Note [fused conv fallback]),
// which also adds a residual input z (Note [fused nodes]) for free.
// Channels-last nodes (Note [channels-last], runtime/ir/layout.h) get NHWC
// descriptors for x, y and the filter (KRSC); cuDNN then picks NHWC kernels.
// Assumptions: float32 NCHW or 2-D NHWC, 1–3 spatial dims. Asymmetric pads:
// Note [conv asymmetric padding] (cuDNN has one pad per axis).
// Algorithm kDepthwiseForwardAlgorithm is ours, not cuDNN's: runtime/cuda/depthwise_conv.h.
// Algorithms kGraphEngineBase.. are cuDNN graph-API engine configurations (runtime/cuda/cudnn_graph.h):
// the same descriptors, the convolution by that plan, the epilogue step by step.
#include <algorithm>

#include "runtime/ir/fusion.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/cudnn_descriptors.h"
#include "runtime/cuda/cudnn_graph.h"
#include "runtime/cuda/depthwise_conv.h"
#include "runtime/cuda/kernels.h"
#include "runtime/cuda/window_kernels.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn::cuda {

std::vector<int> cudnn_dims(const Shape& shape) {
  std::vector<int> dims(shape.begin(), shape.end());
  while (dims.size() < 4) dims.push_back(1);
  return dims;
}

Status set_tensor_descriptor(TensorDescriptor& desc, const Shape& shape, const std::string& context,
                             bool channels_last) {
  UCUDNN_RETURN_IF_ERROR(desc.create(context));
  if (channels_last) {
    if (shape.size() != 4) return internal_error(context + ": a channels-last tensor must be 4-D");
    UCUDNN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(desc.get(), CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT,
                                                  static_cast<int>(shape[0]), static_cast<int>(shape[1]),
                                                  static_cast<int>(shape[2]), static_cast<int>(shape[3])),
                       context);
    return Status::ok();
  }
  const std::vector<int> dims = cudnn_dims(shape);
  std::vector<int> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  UCUDNN_CUDNN_CHECK(cudnnSetTensorNdDescriptor(desc.get(), CUDNN_DATA_FLOAT, static_cast<int>(dims.size()),
                                                dims.data(), strides.data()),
                     context);
  return Status::ok();
}

Status set_filter_descriptor(FilterDescriptor& desc, const Shape& w, const std::string& context,
                             bool channels_last) {
  UCUDNN_RETURN_IF_ERROR(desc.create(context));
  const std::vector<int> dims = cudnn_dims(w);
  UCUDNN_CUDNN_CHECK(cudnnSetFilterNdDescriptor(desc.get(), CUDNN_DATA_FLOAT,
                                                channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                static_cast<int>(dims.size()), dims.data()),
                     context);
  return Status::ok();
}

Status set_convolution_descriptor(ConvolutionDescriptor& desc, std::vector<int> pads, const WindowGeometry& g,
                                  int64_t group, MathMode math, const std::string& context) {
  std::vector<int> strides(g.stride.begin(), g.stride.end());
  std::vector<int> dilations(g.dilation.begin(), g.dilation.end());
  while (pads.size() < 2) {  // Note [cuDNN rank]: a 1-D convolution is a 2-D one with a unit axis
    pads.push_back(0);
    strides.push_back(1);
    dilations.push_back(1);
  }
  UCUDNN_RETURN_IF_ERROR(desc.create(context));
  UCUDNN_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(desc.get(), static_cast<int>(pads.size()), pads.data(),
                                                     strides.data(), dilations.data(), CUDNN_CROSS_CORRELATION,
                                                     CUDNN_DATA_FLOAT),
                     context);
  UCUDNN_CUDNN_CHECK(cudnnSetConvolutionGroupCount(desc.get(), static_cast<int>(group)), context);
  // Note [conv math type]: for float32 data CUDNN_DEFAULT_MATH lets cuDNN use
  // TF32 tensor cores on sm_80+ (what PyTorch does with allow_tf32); only
  // CUDNN_FMA_MATH guarantees full FP32. CUDNN_TENSOR_OP_MATH would add nothing
  // for float32, and ..._ALLOW_CONVERSION would allow FP16 down-conversion.
  UCUDNN_CUDNN_CHECK(
      cudnnSetConvolutionMathType(desc.get(), math == MathMode::kTf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH), context);
  return Status::ok();
}

namespace {

constexpr size_t kZ = ir::kConvResidualInput;
constexpr size_t kWorkspaceAlignment = 256;  // cuDNN's workspace after the padded X stays aligned as allocations are

class ConvState final : public KernelState {
 public:
  TensorDescriptor x, y, bias;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
  cudnnConvolutionFwdAlgo_t algorithm = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace = 0;
  bool has_bias = false;
  bool has_z = false;  // a residual input (Note [fused nodes], runtime/ir/fusion.h)
  // The activation fused into this Conv (Note [fused nodes]). A Relu runs in cuDNN's fused call or
  // as a pass of its own; any other (SiLU, ...) in one pass that adds the bias and applies it.
  ir::ConvActivation activation;
  int64_t out_channels = 0, channel_inner = 1;  // Y's channel of element i: (i / channel_inner) % out_channels
  bool fused = false;  // a Relu and a bias: try cudnnConvolutionBiasActivationForward
  ActivationDescriptor relu_descriptor;
  std::unique_ptr<GraphConvPlan> graph;  // a graph-API engine configuration runs instead of `algorithm`

  // Note [conv asymmetric padding]: cuDNN takes one pad per axis. With pads
  // (begin, end) unequal, cuDNN pads min(begin, end) on both sides and we pad
  // the rest into a copy of X at the start of the workspace (zeros, as
  // convolution padding is); cuDNN's own workspace follows it.
  bool pad_input = false;
  int64_t padded_x_numel = 0;
  size_t padded_x_bytes = 0;  // rounded up to kWorkspaceAlignment
  StridedLayout pad_layout;   // dims: the padded X; strides[0]: X's
  int64_t x_dims[kMaxDims] = {}, pad_begin[kMaxDims] = {};

  size_t workspace_bytes() const override { return padded_x_bytes + workspace; }
  std::string algorithm_name() const override { return graph ? graph->config().name() : std::string(); }

  Status run(const RunArgs& a) override {
    if (has_z && a.src[kZ].data == a.dst[0].data)  // Note [residual in place]: a CPU plan's, not ours
      return invalid_argument(context + ": the plan writes Y over the residual input z; the GPU's Conv writes Y " +
                              "before it adds z");
    const void* x_data = a.src[0].data;
    void* cudnn_workspace = a.workspace;
    if (pad_input) {
      if (a.workspace == nullptr || a.workspace_bytes < workspace_bytes())
        return invalid_argument("the padded X and cuDNN's workspace need " + std::to_string(workspace_bytes()) +
                                " workspace bytes, got " + std::to_string(a.workspace_bytes));
      UCUDNN_CUDA_CHECK(launch_pad(a.src[0].as<const float>(), static_cast<float*>(a.workspace), padded_x_numel,
                                   pad_layout, x_dims, pad_begin, PadMode::kConstant, 0.0f, a.ctx.stream()),
                        "padding X (Note [conv asymmetric padding])");
      x_data = a.workspace;
      cudnn_workspace = static_cast<char*>(a.workspace) + padded_x_bytes;
    }
    return convolve(a, x_data, cudnn_workspace);
  }

 private:
  Status convolve(const RunArgs& a, const void* x_data, void* cudnn_workspace) {
    const float one = 1.0f, zero = 0.0f;
    cudnnHandle_t h = a.ctx.cudnn();
    if (fused) {
      // Note [fused conv fallback]: y = relu(conv(x, w) + alpha2·z + bias): with a
      // residual input alpha2 = 1; without one z aliases y and alpha2 = 0 (never
      // read). cuDNN documents the fused call for every forward algorithm with
      // RELU, but an engine may still answer NOT_SUPPORTED for a shape; then this
      // call site falls back to the step-by-step form for good.
      const float alpha2 = has_z ? 1.0f : 0.0f;
      void* z = has_z ? a.src[kZ].data : a.dst[0].data;
      const cudnnStatus_t status = cudnnConvolutionBiasActivationForward(
          h, &one, x.get(), x_data, w.get(), a.src[1].data, conv.get(), algorithm, cudnn_workspace, workspace,
          &alpha2, y.get(), z, bias.get(), a.src[2].data, relu_descriptor.get(), y.get(), a.dst[0].data);
      if (status == CUDNN_STATUS_SUCCESS) return Status::ok();
      if (status != CUDNN_STATUS_NOT_SUPPORTED)
        return cudnn_error(status, "cudnnConvolutionBiasActivationForward", "algorithm " + std::to_string(algorithm));
      fused = false;
    }
    if (graph)
      UCUDNN_RETURN_IF_ERROR(graph->run(a.ctx, x_data, a.src[1].data, a.dst[0].data, cudnn_workspace,
                                        a.workspace_bytes - (pad_input ? padded_x_bytes : 0)));
    else
      UCUDNN_CUDNN_CHECK(cudnnConvolutionForward(h, &one, x.get(), x_data, w.get(), a.src[1].data, conv.get(),
                                                 algorithm, cudnn_workspace, workspace, &zero, y.get(), a.dst[0].data),
                         "algorithm " + std::to_string(algorithm));
    const bool relu = activation.kind == ir::ConvActivationKind::kRelu;
    if (activation.kind != ir::ConvActivationKind::kIdentity && !relu) {  // act(conv + B + z): z first
      if (has_z)
        UCUDNN_CUDNN_CHECK(cudnnAddTensor(h, &one, y.get(), a.src[kZ].data, &one, y.get(), a.dst[0].data),
                           "residual input");
      UCUDNN_CUDA_CHECK(launch_bias_activation(a.dst[0].as<float>(), has_bias ? a.src[2].as<const float>() : nullptr,
                                               a.dst[0].numel(), out_channels, channel_inner, activation,
                                               a.ctx.stream()),
                        "bias and fused activation");
      return Status::ok();
    }
    if (has_bias)
      UCUDNN_CUDNN_CHECK(cudnnAddTensor(h, &one, bias.get(), a.src[2].data, &one, y.get(), a.dst[0].data), "bias");
    if (has_z)
      UCUDNN_CUDNN_CHECK(cudnnAddTensor(h, &one, y.get(), a.src[kZ].data, &one, y.get(), a.dst[0].data),
                         "residual input");
    if (relu)
      UCUDNN_CUDA_CHECK(launch_unary(ir::PointwiseOp::kRelu, a.dst[0].as<const float>(), a.dst[0].as<float>(),
                                     a.dst[0].numel(), 0, 0, a.ctx.stream()),
                        "fused Relu");
    return Status::ok();
  }
};

// Note [conv asymmetric padding]: fills `s`'s explicit padding of X when some
// axis of `g` pads unequally, leaves the symmetric part min(begin, end) in
// `pads` (cuDNN's), and returns X's shape in cuDNN's NCHW dim order as cuDNN reads it.
Shape pad_asymmetrically(const PrepareArgs& a, const WindowGeometry& g, bool nhwc, ConvState* s,
                         std::vector<int>* pads) {
  const Shape& x_memory = a.src_shapes[0];  // in memory order: NCHW, or NHWC (spatial dims 1, 2)
  Shape padded = x_memory;
  std::vector<int64_t> begin(x_memory.size(), 0);
  const size_t first_spatial = nhwc ? 1 : 2;
  for (size_t d = 0; d < g.rank(); ++d) {
    const int64_t common = std::min(g.pad_begin[d], g.pad_end[d]);
    (*pads)[d] = static_cast<int>(common);
    begin[first_spatial + d] = g.pad_begin[d] - common;
    padded[first_spatial + d] += g.pad_begin[d] + g.pad_end[d] - 2 * common;
    s->pad_input = s->pad_input || g.pad_begin[d] != g.pad_end[d];
  }
  if (s->pad_input) {
    const std::vector<int64_t> strides = shape_strides(x_memory);
    s->pad_layout.rank = static_cast<int>(x_memory.size());
    for (size_t d = 0; d < x_memory.size(); ++d) {
      s->pad_layout.dims[d] = padded[d];
      s->pad_layout.strides[0][d] = strides[d];
      s->x_dims[d] = x_memory[d];
      s->pad_begin[d] = begin[d];
    }
    s->padded_x_numel = shape_numel(padded);
    const size_t bytes = static_cast<size_t>(s->padded_x_numel) * sizeof(float);
    s->padded_x_bytes = (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  }
  return nhwc ? ir::nhwc_to_nchw(padded) : padded;
}

// Descriptors of a Conv call, without choosing the algorithm.
Status build_descriptors(const PrepareArgs& a, ConvState* s) {
  const std::string context = a.describe();
  if (a.src_dtype(0) != DType::kFloat32) return a.unsupported_error("only float32 convolutions");
  // cuDNN's dims are in NCHW order whatever the memory layout.
  const bool nhwc = ir::is_channels_last(a.node);
  if (nhwc && (a.src_shapes[0].size() != 4 || a.src_shapes[1].size() != 4))
    return a.unsupported_error("channels-last convolutions other than 2-D");
  const Shape xs = nhwc ? ir::nhwc_to_nchw(a.src_shapes[0]) : a.src_shapes[0];
  const Shape ws = nhwc ? ir::nhwc_to_nchw(a.src_shapes[1]) : a.src_shapes[1];  // [K, R, S, C] → [K, C, R, S]
  const Shape ys = nhwc ? ir::nhwc_to_nchw(a.dst_shapes[0]) : a.dst_shapes[0];
  if (xs.size() < 3 || xs.size() > 5) return a.unsupported_error("1 to 3 spatial dims");
  UCUDNN_ASSIGN_OR_RETURN(
      WindowGeometry g, compute_window_geometry(a.node.attrs, Shape(xs.begin() + 2, xs.end()),
                                                std::vector<int64_t>(ws.begin() + 2, ws.end()), false));
  std::vector<int> pads(g.pad_begin.begin(), g.pad_begin.end());
  const Shape padded_xs = pad_asymmetrically(a, g, nhwc, s, &pads);
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->x, padded_xs, context, nhwc));
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->y, ys, context, nhwc));
  UCUDNN_RETURN_IF_ERROR(set_filter_descriptor(s->w, ws, context, nhwc));
  UCUDNN_RETURN_IF_ERROR(
      set_convolution_descriptor(s->conv, std::move(pads), g, a.node.attrs.get_int("group"), a.ctx.math(), context));
  // cuDNN's output shape must equal the one the shape rule inferred.
  const std::vector<int> wdims = cudnn_dims(ws);
  std::vector<int> expected(wdims.size());
  UCUDNN_CUDNN_CHECK(cudnnGetConvolutionNdForwardOutputDim(s->conv.get(), s->x.get(), s->w.get(),
                                                           static_cast<int>(expected.size()), expected.data()),
                     context);
  if (expected != cudnn_dims(ys))
    return a.unsupported_error("cuDNN's output shape differs from ONNX's " + shape_to_string(a.dst_shapes[0]));
  UCUDNN_ASSIGN_OR_RETURN(s->activation, ir::conv_activation(a.node));  // Note [fused nodes]
  const bool relu = s->activation.kind == ir::ConvActivationKind::kRelu;
  s->has_bias = a.has_src(2);
  s->has_z = a.has_src(kZ);
  if (s->has_z && s->activation.kind != ir::ConvActivationKind::kIdentity && !relu)
    return a.unsupported_error("a residual input with a fused activation other than Relu");
  s->out_channels = ys[1];
  s->channel_inner = nhwc ? 1 : shape_numel(Shape(ys.begin() + 2, ys.end()));
  if (s->has_z && a.src_shapes[kZ] != a.dst_shapes[0])
    return a.unsupported_error("a residual input of shape " + shape_to_string(a.src_shapes[kZ]) + " unlike Y's");
  s->fused = relu && s->has_bias;
  if (s->fused) {
    UCUDNN_RETURN_IF_ERROR(s->relu_descriptor.create(context));
    UCUDNN_CUDNN_CHECK(cudnnSetActivationDescriptor(s->relu_descriptor.get(), CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0),
                       context);
  }
  if (s->has_bias) {
    Shape bias_shape(xs.size(), 1);  // [1, K, 1, 1]: the same bytes in either layout
    bias_shape[1] = ws[0];
    UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->bias, bias_shape, context));
  }
  return Status::ok();
}

Expected<std::unique_ptr<KernelState>> prepare_conv(const PrepareArgs& a) {
  if (a.algorithm == kDepthwiseForwardAlgorithm) return prepare_depthwise_conv(a);  // ours, not cuDNN's
  auto s = std::make_unique<ConvState>();
  UCUDNN_RETURN_IF_ERROR(build_descriptors(a, s.get()));
  if (is_graph_engine_algorithm(a.algorithm)) {
    UCUDNN_ASSIGN_OR_RETURN(s->graph, prepare_graph_conv(a.ctx, s->x, s->w, s->conv, s->y,
                                                         a.algorithm - kGraphEngineBase, a.describe()));
    s->workspace = s->graph->workspace_bytes();
    s->fused = false;  // the bias, z and Relu after the graph's convolution, step by step
    return std::unique_ptr<KernelState>(std::move(s));
  }
  if (a.algorithm >= 0) {
    if (a.algorithm >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT)
      return invalid_argument(a.describe() + ": no forward algorithm " + std::to_string(a.algorithm) +
                              " (cuDNN's are 0.." + std::to_string(CUDNN_CONVOLUTION_FWD_ALGO_COUNT - 1) +
                              ", UCUDNN_DEPTHWISE is " + std::to_string(kDepthwiseForwardAlgorithm) +
                              ", cuDNN graph-API engine configurations " + std::to_string(kGraphEngineBase) + ".." +
                              std::to_string(kGraphEngineBase + kMaxGraphEngineConfigs - 1) + ")");
    s->algorithm = static_cast<cudnnConvolutionFwdAlgo_t>(a.algorithm);
  }
  UCUDNN_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(a.ctx.cudnn(), s->x.get(), s->w.get(), s->conv.get(),
                                                             s->y.get(), s->algorithm, &s->workspace),
                     a.describe() + ", algorithm " + std::to_string(s->algorithm));
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_Conv() {
  static const CudaKernel k{.prepare = prepare_conv};
  return k;
}

}  // namespace ucudnn::cuda
