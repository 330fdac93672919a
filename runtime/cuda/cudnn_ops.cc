// The ops cuDNN has besides convolution: BatchNormalization (inference), LRN,
// MaxPool/AveragePool/GlobalAveragePool/GlobalMaxPool, Softmax/LogSoftmax.
//
// Each prepare builds its descriptors once; run is one cuDNN call. Limits of
// cuDNN that ONNX allows are reported as Unsupported at load, naming the node:
// asymmetric pool padding (ceil_mode that changes the output size, SAME_*
// with odd total padding), pool dilations, MaxPool's Indices output, LRN
// sizes cuDNN rejects, BatchNormalization in training mode.
#include <cfloat>

#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/cudnn_descriptors.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn::cuda {

namespace {

const float kOne = 1.0f, kZero = 0.0f;

// ---- BatchNormalization ----------------------------------------------------

class BatchNormState final : public KernelState {
 public:
  TensorDescriptor x, stats;
  double epsilon = 1e-5;
  Status run(const RunArgs& a) override {
    // Note [BN inference formula]: cuDNN computes scale * (x - mean) / sqrt(var + eps) + bias,
    // exactly ONNX's formula, reading mean/var/scale/bias as [1, C, 1, 1].
    UCUDNN_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
                           a.ctx.cudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, x.get(), a.src[0].data, x.get(),
                           a.dst[0].data, stats.get(), a.src[1].data, a.src[2].data, a.src[3].data, a.src[4].data,
                           epsilon),
                       "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_batch_norm(const PrepareArgs& a) {
  if (a.node.attrs.get_int("training_mode") != 0) return a.unsupported_error("training_mode = 1");
  if (a.node.outputs.size() > 1) return a.unsupported_error("running mean/var outputs (training)");
  const Shape& xs = a.src_shapes[0];
  if (xs.size() < 2 || xs.size() > 5) return a.unsupported_error("input rank 2 to 5");
  auto s = std::make_unique<BatchNormState>();
  s->epsilon = a.node.attrs.get_float("epsilon");
  if (s->epsilon < CUDNN_BN_MIN_EPSILON) return a.unsupported_error("epsilon below CUDNN_BN_MIN_EPSILON");
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->x, xs, a.describe()));
  Shape stats(xs.size(), 1);
  stats[1] = xs[1];
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->stats, stats, a.describe()));
  return std::unique_ptr<KernelState>(std::move(s));
}

// ---- LRN ---------------------------------------------------------------------

class LrnState final : public KernelState {
 public:
  TensorDescriptor x;
  LrnDescriptor lrn;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDNN_CHECK(cudnnLRNCrossChannelForward(a.ctx.cudnn(), lrn.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1, &kOne,
                                                   x.get(), a.src[0].data, &kZero, x.get(), a.dst[0].data),
                       "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_lrn(const PrepareArgs& a) {
  const int64_t size = a.node.attrs.get_int("size");
  const double alpha = a.node.attrs.get_float("alpha"), beta = a.node.attrs.get_float("beta");
  const double bias = a.node.attrs.get_float("bias");
  // ONNX and cuDNN agree on x / (k + alpha / n * Σ x²)^beta over a centred window;
  // cuDNN centres even windows differently, so only odd sizes run here.
  if (size < CUDNN_LRN_MIN_N || size > CUDNN_LRN_MAX_N || size % 2 == 0)
    return a.unsupported_error("LRN size " + std::to_string(size) + " (cuDNN: odd, 1..16)");
  if (beta < CUDNN_LRN_MIN_BETA || bias < CUDNN_LRN_MIN_K) return a.unsupported_error("LRN beta < 0.01 or bias < 1e-5");
  auto s = std::make_unique<LrnState>();
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->x, a.src_shapes[0], a.describe()));
  UCUDNN_RETURN_IF_ERROR(s->lrn.create(a.describe()));
  UCUDNN_CUDNN_CHECK(cudnnSetLRNDescriptor(s->lrn.get(), static_cast<unsigned>(size), alpha, beta, bias), a.describe());
  return std::unique_ptr<KernelState>(std::move(s));
}

// ---- Pooling -----------------------------------------------------------------

class PoolState final : public KernelState {
 public:
  TensorDescriptor x, y;
  PoolingDescriptor pool;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDNN_CHECK(cudnnPoolingForward(a.ctx.cudnn(), pool.get(), &kOne, x.get(), a.src[0].data, &kZero, y.get(),
                                           a.dst[0].data),
                       "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_pool(const PrepareArgs& a, bool max, bool global) {
  // cuDNN's dims are in NCHW order whatever the memory layout (Note [channels-last]).
  const bool nhwc = ir::is_channels_last(a.node);
  if (nhwc && a.src_shapes[0].size() != 4) return a.unsupported_error("channels-last pooling other than 2-D");
  const Shape xs = nhwc ? ir::nhwc_to_nchw(a.src_shapes[0]) : a.src_shapes[0];
  const Shape ys = nhwc ? ir::nhwc_to_nchw(a.dst_shapes[0]) : a.dst_shapes[0];
  if (xs.size() < 3 || xs.size() > 5) return a.unsupported_error("1 to 3 spatial dims");
  if (a.node.outputs.size() > 1) return a.unsupported_error("MaxPool's Indices output");
  const Shape spatial(xs.begin() + 2, xs.end());
  std::vector<int> window, pads, strides;
  if (global) {
    window.assign(spatial.begin(), spatial.end());
    pads.assign(spatial.size(), 0);
    strides.assign(spatial.size(), 1);
  } else {
    UCUDNN_ASSIGN_OR_RETURN(WindowGeometry g,
                            compute_window_geometry(a.node.attrs, spatial, a.node.attrs.get_ints("kernel_shape"),
                                                    a.node.attrs.get_int("ceil_mode") != 0));
    for (int64_t d : g.dilation)
      if (d != 1) return a.unsupported_error("pooling dilations (cuDNN has none)");
    // Note [pool padding]: cuDNN pads both sides of an axis alike and has no
    // ceil mode; ONNX's ceil_mode and SAME_* padding only run here when they
    // give the same output as symmetric padding (checked below).
    if (g.pad_begin != g.pad_end) return a.unsupported_error("asymmetric pool padding");
    window.assign(g.kernel.begin(), g.kernel.end());
    pads.assign(g.pad_begin.begin(), g.pad_begin.end());
    strides.assign(g.stride.begin(), g.stride.end());
  }
  while (window.size() < 2) {  // Note [cuDNN rank]
    window.push_back(1);
    pads.push_back(0);
    strides.push_back(1);
  }
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX;
  if (!max)
    mode = (!global && a.node.attrs.get_int("count_include_pad") != 0) ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                                      : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  auto s = std::make_unique<PoolState>();
  const std::string context = a.describe();
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->x, xs, context, nhwc));
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->y, ys, context, nhwc));
  UCUDNN_RETURN_IF_ERROR(s->pool.create(context));
  UCUDNN_CUDNN_CHECK(cudnnSetPoolingNdDescriptor(s->pool.get(), mode, CUDNN_PROPAGATE_NAN,
                                                 static_cast<int>(window.size()), window.data(), pads.data(),
                                                 strides.data()),
                     context);
  std::vector<int> expected(window.size() + 2);
  UCUDNN_CUDNN_CHECK(cudnnGetPoolingNdForwardOutputDim(s->pool.get(), s->x.get(), static_cast<int>(expected.size()),
                                                       expected.data()),
                     context);
  if (expected != cudnn_dims(ys))
    return a.unsupported_error("ceil_mode or padding that cuDNN cannot express (Note [pool padding])");
  return std::unique_ptr<KernelState>(std::move(s));
}

// ---- Softmax / LogSoftmax ----------------------------------------------------

class SoftmaxState final : public KernelState {
 public:
  TensorDescriptor x;
  cudnnSoftmaxAlgorithm_t algorithm = CUDNN_SOFTMAX_ACCURATE;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDNN_CHECK(cudnnSoftmaxForward(a.ctx.cudnn(), algorithm, CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, x.get(),
                                           a.src[0].data, &kZero, x.get(), a.dst[0].data),
                       "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_softmax(const PrepareArgs& a, bool log) {
  const Shape& in = a.src_shapes[0];
  const int64_t rank = static_cast<int64_t>(in.size());
  const bool old = a.node.opset < 13;  // Note [softmax axis by opset] (runtime/ops/reductions.cc)
  const int64_t raw_axis = a.node.attrs.has("axis") ? a.node.attrs.get_int("axis") : (old ? 1 : -1);
  const int64_t axis = normalize_axis(raw_axis, rank);
  if (axis < 0) return invalid_argument(a.describe() + ": axis " + std::to_string(raw_axis) + " is out of range");
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= in[d];
    else if (d == axis || old) n *= in[d];
    else inner *= in[d];
  }
  // CHANNEL mode normalises over C for every (N, H, W): [outer, n, inner, 1].
  auto s = std::make_unique<SoftmaxState>();
  s->algorithm = log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->x, {outer, n, inner, 1}, a.describe()));
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_BatchNormalization() {
  static const CudaKernel k{.prepare = prepare_batch_norm};
  return k;
}
const CudaKernel& cuda_kernel_LRN() {
  static const CudaKernel k{.prepare = prepare_lrn};
  return k;
}
const CudaKernel& cuda_kernel_MaxPool() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_pool(a, true, false); }};
  return k;
}
const CudaKernel& cuda_kernel_AveragePool() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_pool(a, false, false); }};
  return k;
}
const CudaKernel& cuda_kernel_GlobalAveragePool() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_pool(a, false, true); }};
  return k;
}
const CudaKernel& cuda_kernel_GlobalMaxPool() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_pool(a, true, true); }};
  return k;
}
const CudaKernel& cuda_kernel_Softmax() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_softmax(a, false); }};
  return k;
}
const CudaKernel& cuda_kernel_LogSoftmax() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_softmax(a, true); }};
  return k;
}

}  // namespace ucudnn::cuda
