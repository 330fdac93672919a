// The ops cuDNN has besides convolution: BatchNormalization (inference), LRN,
// MaxPool/AveragePool/GlobalAveragePool/GlobalMaxPool, Softmax/LogSoftmax.
//
// Each prepare builds its descriptors once; run is one cuDNN call. What cuDNN
// cannot express but ONNX allows runs on our own kernels (window_kernels.cu):
// pools with asymmetric padding (ceil_mode that changes the output size,
// SAME_* with odd total padding), dilations or 3 spatial axes in any layout
// (Note [pool padding]); LRN sizes or parameters cuDNN rejects; BatchNormalization
// with an epsilon below CUDNN_BN_MIN_EPSILON or a rank above 5. Unsupported,
// as on the CPU: BatchNormalization in training mode. MaxPool with its Indices output runs our window kernel.
#include <cfloat>

#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/cudnn_descriptors.h"
#include "runtime/cuda/window_kernels.h"
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

// Our own kernel (window_kernels.cu) where cuDNN's BN cannot run: epsilon below
// CUDNN_BN_MIN_EPSILON, or X of rank above 5.
class OwnBatchNormState final : public KernelState {
 public:
  int64_t batch = 0, channels = 0, inner = 1;
  float epsilon = 1e-5f;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_batch_norm(a.src[0].as<const float>(), a.dst[0].as<float>(), batch, channels, inner,
                                        a.src[1].as<const float>(), a.src[2].as<const float>(),
                                        a.src[3].as<const float>(), a.src[4].as<const float>(), epsilon,
                                        a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_batch_norm(const PrepareArgs& a) {
  if (a.node.attrs.get_int("training_mode") != 0) return a.unsupported_error("training_mode = 1");
  if (a.node.outputs.size() > 1) return a.unsupported_error("running mean/var outputs (training)");
  const Shape& xs = a.src_shapes[0];
  if (xs.size() < 2) return invalid_argument(a.describe() + ": X must have rank >= 2");
  const double epsilon = a.node.attrs.get_float("epsilon");
  if (xs.size() > 5 || epsilon < CUDNN_BN_MIN_EPSILON) {
    auto s = std::make_unique<OwnBatchNormState>();
    s->batch = xs[0];
    s->channels = xs[1];
    s->inner = shape_numel(Shape(xs.begin() + 2, xs.end()));
    s->epsilon = static_cast<float>(epsilon);
    return std::unique_ptr<KernelState>(std::move(s));
  }
  auto s = std::make_unique<BatchNormState>();
  s->epsilon = epsilon;
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

// Our own kernel (window_kernels.cu) for the LRNs cuDNN rejects.
class OwnLrnState final : public KernelState {
 public:
  int64_t batch = 0, channels = 0, inner = 1, size = 1;
  float alpha = 0, beta = 0, bias = 0;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_lrn(a.src[0].as<const float>(), a.dst[0].as<float>(), batch, channels, inner, size, alpha,
                                 beta, bias, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

Expected<std::unique_ptr<KernelState>> prepare_lrn(const PrepareArgs& a) {
  const int64_t size = a.node.attrs.get_int("size");
  const double alpha = a.node.attrs.get_float("alpha"), beta = a.node.attrs.get_float("beta");
  const double bias = a.node.attrs.get_float("bias");
  const Shape& xs = a.src_shapes[0];
  if (size < 1) return invalid_argument(a.describe() + ": size must be >= 1");
  if (xs.size() < 2) return invalid_argument(a.describe() + ": X must have rank >= 2");
  // ONNX and cuDNN agree on x / (k + alpha / n * Σ x²)^beta over a centred window;
  // cuDNN centres even windows differently and limits size, beta and k: those,
  // and ranks cuDNN's LRN does not take, run on our kernel.
  if (size > CUDNN_LRN_MAX_N || size % 2 == 0 || beta < CUDNN_LRN_MIN_BETA || bias < CUDNN_LRN_MIN_K ||
      xs.size() > 5) {
    auto s = std::make_unique<OwnLrnState>();
    s->batch = xs[0];
    s->channels = xs[1];
    s->inner = shape_numel(Shape(xs.begin() + 2, xs.end()));
    s->size = size;
    s->alpha = static_cast<float>(alpha);
    s->beta = static_cast<float>(beta);
    s->bias = static_cast<float>(bias);
    return std::unique_ptr<KernelState>(std::move(s));
  }
  auto s = std::make_unique<LrnState>();
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->x, xs, a.describe()));
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

// Our own kernel (window_kernels.cu) for the pools cuDNN cannot express.
class WindowPoolState final : public KernelState {
 public:
  PoolMode mode = PoolMode::kMax;
  PoolGeometry geometry;
  bool indices = false, column_major = false;  // MaxPool's Indices output, and its storage_order
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_window_pool(mode, a.src[0].as<const float>(), a.dst[0].as<float>(), geometry,
                                         a.ctx.stream(), indices ? a.dst[1].as<int64_t>() : nullptr, column_major),
                      "");
    return Status::ok();
  }
};

class GlobalAveragePoolState final : public KernelState {
 public:
  int64_t batch = 0, channels = 0, spatial = 1;
  bool channels_last = false;
  Status run(const RunArgs& a) override {
    UCUDNN_CUDA_CHECK(launch_global_average_pool(a.src[0].as<const float>(), a.dst[0].as<float>(), batch, channels,
                                                 spatial, channels_last, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

// Note [pool padding]: cuDNN pads both sides of an axis alike, has no ceil mode
// and no pool dilations. A pool runs on cuDNN when its geometry is symmetric,
// undilated and cuDNN's (floor) output size is ONNX's; every other one (ceil_mode
// that changes the output, SAME_* with odd total padding, explicit asymmetric
// pads, dilations) runs on our kernel, which follows runtime/cpu/pooling.cc.
bool cudnn_expresses(const WindowGeometry& g) {
  for (size_t d = 0; d < g.rank(); ++d) {
    if (g.dilation[d] != 1 || g.pad_begin[d] != g.pad_end[d]) return false;
    if ((g.input[d] + 2 * g.pad_begin[d] - g.kernel[d]) / g.stride[d] + 1 != g.output[d]) return false;
  }
  return true;
}

// The cuDNN pool for `g` (a global pool: the whole spatial extent), or nullptr
// when cuDNN's own output shape differs from ONNX's after all.
Expected<std::unique_ptr<KernelState>> prepare_cudnn_pool(const PrepareArgs& a, const WindowGeometry& g,
                                                          cudnnPoolingMode_t mode, const Shape& xs, const Shape& ys,
                                                          bool nhwc) {
  std::vector<int> window(g.kernel.begin(), g.kernel.end()), pads(g.pad_begin.begin(), g.pad_begin.end());
  std::vector<int> strides(g.stride.begin(), g.stride.end());
  while (window.size() < 2) {  // Note [cuDNN rank]
    window.push_back(1);
    pads.push_back(0);
    strides.push_back(1);
  }
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
  if (expected != cudnn_dims(ys)) return std::unique_ptr<KernelState>();
  return std::unique_ptr<KernelState>(std::move(s));
}

std::unique_ptr<WindowPoolState> prepare_window_pool(const WindowGeometry& g, PoolMode mode, const Shape& xs,
                                                     bool nhwc) {
  auto s = std::make_unique<WindowPoolState>();
  s->mode = mode;
  PoolGeometry& p = s->geometry;
  p.rank = static_cast<int>(g.rank());
  p.batch = xs[0];
  p.channels = xs[1];
  p.channels_last = nhwc;
  for (size_t d = 0; d < g.rank(); ++d) {
    p.input[d] = g.input[d];
    p.output[d] = g.output[d];
    p.kernel[d] = g.kernel[d];
    p.stride[d] = g.stride[d];
    p.dilation[d] = g.dilation[d];
    p.pad_begin[d] = g.pad_begin[d];
    p.pad_end[d] = g.pad_end[d];
  }
  return s;
}

Expected<std::unique_ptr<KernelState>> prepare_pool(const PrepareArgs& a, bool max, bool global) {
  // cuDNN's dims are in NCHW order whatever the memory layout (Note [channels-last]).
  const bool nhwc = ir::is_channels_last(a.node);
  if (nhwc && a.src_shapes[0].size() != 4) return a.unsupported_error("channels-last pooling other than 2-D");
  const Shape xs = nhwc ? ir::nhwc_to_nchw(a.src_shapes[0]) : a.src_shapes[0];
  const Shape ys = nhwc ? ir::nhwc_to_nchw(a.dst_shapes[0]) : a.dst_shapes[0];
  if (xs.size() < 3 || xs.size() > 5) return a.unsupported_error("1 to 3 spatial dims");
  const bool indices = max && !global && a.node.outputs.size() > 1 && a.node.outputs[1] != ir::kNoValue;
  if (indices && nhwc) return a.unsupported_error("MaxPool's Indices output in a channels-last graph");
  const Shape spatial(xs.begin() + 2, xs.end());
  if (global && !max) {
    auto s = std::make_unique<GlobalAveragePoolState>();
    s->batch = xs[0];
    s->channels = xs[1];
    s->spatial = shape_numel(spatial);
    s->channels_last = nhwc;
    return std::unique_ptr<KernelState>(std::move(s));
  }
  WindowGeometry g;
  if (global) {
    g.input = g.kernel = spatial;
    g.stride = g.dilation = g.output = std::vector<int64_t>(spatial.size(), 1);
    g.pad_begin = g.pad_end = std::vector<int64_t>(spatial.size(), 0);
  } else {
    auto geometry = compute_window_geometry(a.node.attrs, spatial, a.node.attrs.get_ints("kernel_shape"),
                                            a.node.attrs.get_int("ceil_mode") != 0);
    if (!geometry) return geometry.status().with_context(a.describe());
    g = std::move(*geometry);
  }
  // The shape rule made Y from the same geometry; a mismatch is our bug, not the model's.
  if (ys.size() != xs.size() || ys[0] != xs[0] || ys[1] != xs[1] || Shape(ys.begin() + 2, ys.end()) != g.output)
    return internal_error(a.describe() + ": Y " + shape_to_string(a.dst_shapes[0]) + " is not the pool's output " +
                          shape_to_string(g.output));
  const bool include_pad = !max && !global && a.node.attrs.get_int("count_include_pad") != 0;
  if (cudnn_expresses(g) && !indices) {
    cudnnPoolingMode_t mode = CUDNN_POOLING_MAX;
    if (!max)
      mode = include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<KernelState> cudnn, prepare_cudnn_pool(a, g, mode, xs, ys, nhwc));
    if (cudnn) return cudnn;
  }
  PoolMode mode = PoolMode::kMax;
  if (!max) mode = include_pad ? PoolMode::kAverageIncludePad : PoolMode::kAverageExcludePad;
  std::unique_ptr<WindowPoolState> s = prepare_window_pool(g, mode, xs, nhwc);
  s->indices = indices;
  s->column_major = indices && a.node.attrs.get_int("storage_order") != 0;
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
