// CUDA kernels of SoftmaxGrad, LogSoftmaxGrad (cudnnSoftmaxBackward),
// SoftmaxCrossEntropyMean and SoftmaxCrossEntropyMeanGrad (our own:
// softmax_loss_kernels.cu, which also holds ReduceSum's kernel; elementwise.cc prepares it).
//
// Labels outside [0, C) are refused as on the CPU: a constant labels tensor is
// checked at prepare; labels computed at run time are read to the host before
// the launch (Note [values checked on the host], elementwise.cc) — N values.
#include <string>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/cudnn_descriptors.h"
#include "runtime/cuda/elementwise.h"
#include "runtime/cuda/softmax_loss_kernels.h"

namespace ucudnn::cuda {

namespace {

using StateOr = Expected<std::unique_ptr<KernelState>>;

const float kOne = 1.0f, kZero = 0.0f;

// ---- SoftmaxGrad / LogSoftmaxGrad ------------------------------------------------

class SoftmaxGradState final : public KernelState {
 public:
  TensorDescriptor desc;
  cudnnSoftmaxAlgorithm_t algorithm = CUDNN_SOFTMAX_ACCURATE;
  Status run(const RunArgs& a) override {
    // inputs (dY, Y); cuDNN takes (Y, dY).
    UCUDNN_CUDNN_CHECK(cudnnSoftmaxBackward(a.ctx.cudnn(), algorithm, CUDNN_SOFTMAX_MODE_CHANNEL, &kOne, desc.get(),
                                            a.src[1].data, desc.get(), a.src[0].data, &kZero, desc.get(),
                                            a.dst[0].data),
                       "");
    return Status::ok();
  }
};

StateOr prepare_softmax_grad(const PrepareArgs& a, bool log) {
  const Shape& shape = a.src_shapes[0];
  const int64_t raw_axis = a.node.attrs.get_int("axis");
  const int64_t axis = normalize_axis(raw_axis, static_cast<int64_t>(shape.size()));
  if (axis < 0) return invalid_argument(a.describe() + ": axis " + std::to_string(raw_axis) + " is out of range");
  const AxisSplit split = split_at_axis(shape, axis);
  // CHANNEL mode normalises over C for every (N, H, W): [outer, n, inner, 1].
  auto s = std::make_unique<SoftmaxGradState>();
  s->algorithm = log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
  UCUDNN_RETURN_IF_ERROR(set_tensor_descriptor(s->desc, {split.outer, shape[axis], split.inner, 1}, a.describe()));
  return std::unique_ptr<KernelState>(std::move(s));
}

// ---- SoftmaxCrossEntropyMean and its gradient -------------------------------------

// InvalidArgument naming the first label outside [0, classes), as the CPU's (the caller adds the node).
Status check_labels(const std::vector<int64_t>& labels, int64_t classes) {
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < 0 || labels[i] >= classes)
      return invalid_argument("label " + std::to_string(labels[i]) + " at index " + std::to_string(i) +
                              " is outside [0, " + std::to_string(classes) + ")");
  return Status::ok();
}

class LossState final : public KernelState {
 public:
  bool gradient = false;
  size_t labels_input = 1;
  bool check_at_run = false;  // labels computed at run time
  bool capturable() const override { return !check_at_run; }  // it reads the labels to the host
  int64_t rows = 0, classes = 0;
  float smoothing = 0.0f;
  Status run(const RunArgs& a) override {
    const DeviceTensor& labels = a.src[labels_input];
    if (check_at_run) {  // Note [values checked on the host]
      UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> values, read_ints_to_host(labels, a.ctx));
      UCUDNN_RETURN_IF_ERROR(check_labels(values, classes));  // the backend adds the node
    }
    if (gradient) {
      UCUDNN_CUDA_CHECK(launch_softmax_cross_entropy_grad(a.src[0].as<const float>(), a.src[1].as<const float>(),
                                                          labels.as<const int64_t>(), a.dst[0].as<float>(), rows,
                                                          classes, smoothing, a.ctx.stream()),
                        "");
    } else {
      UCUDNN_CUDA_CHECK(launch_softmax_cross_entropy(a.src[0].as<const float>(), labels.as<const int64_t>(),
                                                     a.dst[0].as<float>(), a.dst[1].as<float>(), rows, classes,
                                                     smoothing, a.ctx.stream()),
                        "");
    }
    return Status::ok();
  }
};

StateOr prepare_loss(const PrepareArgs& a, bool gradient) {
  auto s = std::make_unique<LossState>();
  s->gradient = gradient;
  s->labels_input = gradient ? 2 : 1;
  const Shape& scores = a.src_shapes[gradient ? 1 : 0];
  s->rows = scores[0];
  s->classes = scores[1];
  s->smoothing = a.node.attrs.get_float("label_smoothing");
  if (const Tensor* labels = a.constant(s->labels_input)) {
    UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> values, labels->to_int64_vector());
    if (Status status = check_labels(values, s->classes); !status.is_ok()) return status.with_context(a.describe());
  } else {
    s->check_at_run = true;
  }
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_SoftmaxGrad() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_softmax_grad(a, false); }};
  return k;
}

const CudaKernel& cuda_kernel_LogSoftmaxGrad() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_softmax_grad(a, true); }};
  return k;
}

const CudaKernel& cuda_kernel_SoftmaxCrossEntropyMean() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_loss(a, false); }};
  return k;
}

const CudaKernel& cuda_kernel_SoftmaxCrossEntropyMeanGrad() {
  static const CudaKernel k{.prepare = [](const PrepareArgs& a) { return prepare_loss(a, true); }};
  return k;
}


}  // namespace ucudnn::cuda
