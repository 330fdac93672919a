// CPU kernel of Conv: checks the (micro-batch) shapes, picks the algorithm (-1 → default)
// and runs it from conv_algorithms.h with the node's epilogue (bias, residual z, Relu or another
// activation: Note [fused nodes]). The backend prepares a call once (prepare_conv: oneDNN's primitive, and
// its reordered weights when W is a constant of the graph); `run` is the same computation
// prepared on the spot, for callers without a prepared call. N comes from X.
#include <limits>

#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"

namespace ucudnn::cpu {

namespace {

// A Conv call's shapes, checked, and what they make: the problem, the epilogue, the algorithm.
struct ConvSetup {
  ConvProblem problem;
  ConvEpilogue epilogue;
  int algorithm = kDefaultCpuConvAlgorithm;
};

// `src` holds X, W, B, z ({} where absent; `present` says which are there), `y` Y's shape.
Expected<ConvSetup> conv_setup(const ir::Node& node, const std::vector<Shape>& src, const std::vector<bool>& present,
                               const Shape& y, int algorithm) {
  if (src.size() < 2 || !present[0] || !present[1])
    return internal_error(node.describe() + ": Conv kernel called without X or W");
  ConvSetup s;
  UCUDNN_ASSIGN_OR_RETURN(s.problem, conv_problem(node, src[0], src[1]));
  const ConvProblem& p = s.problem;
  Shape expected = {p.batch, p.out_channels};
  if (src[0].size() == 4) expected.push_back(p.out_h);
  expected.push_back(p.out_w);
  if (p.channels_last) expected = ir::nchw_to_nhwc(expected);
  if (y != expected)
    return invalid_argument(node.describe() + ": Y is " + shape_to_string(y) + " but X " + shape_to_string(src[0]) +
                            " and W " + shape_to_string(src[1]) + " give " + shape_to_string(expected));
  s.epilogue.bias = src.size() > 2 && present[2];
  if (s.epilogue.bias && src[2] != Shape{p.out_channels})
    return invalid_argument(node.describe() + ": B is " + shape_to_string(src[2]) + ", expected [" +
                            std::to_string(p.out_channels) + "]");
  s.epilogue.residual = src.size() > ir::kConvResidualInput && present[ir::kConvResidualInput];
  if (s.epilogue.residual && src[ir::kConvResidualInput] != y)
    return invalid_argument(node.describe() + ": residual input of shape " +
                            shape_to_string(src[ir::kConvResidualInput]) + " does not match Y " + shape_to_string(y));
  UCUDNN_ASSIGN_OR_RETURN(s.epilogue.activation, ir::conv_activation(node));
  s.algorithm = algorithm == kDefaultCpuConvAlgorithm ? conv_default_algorithm(p) : algorithm;
  if (p.channels_last && !cpu_runs_channels_last())
    return unsupported(node.describe() + ": a channels-last (NHWC) convolution runs on the CPU through oneDNN, " +
                       "which this build lacks (install libdnnl-dev and rebuild, or plan with --layout nchw)");
  if (!conv_algorithm_applies(p, s.algorithm))
    return unsupported(node.describe() + ": CPU convolution algorithm " + std::to_string(algorithm) + " (" +
                       cpu_conv_algorithm_name(algorithm) + ") does not apply to X " + shape_to_string(src[0]) +
                       ", W " + shape_to_string(src[1]));
  return s;
}

Status check_workspace(const ir::Node& node, int algorithm, size_t needed, const void* workspace, size_t bytes) {
  if (bytes >= needed && (needed == 0 || workspace != nullptr)) return Status::ok();
  return invalid_argument(node.describe() + ": algorithm " + cpu_conv_algorithm_name(algorithm) + " needs " +
                          std::to_string(needed) + " workspace bytes, got " + std::to_string(bytes));
}

size_t conv_workspace(const ir::Node& node, const std::vector<Shape>& src_shapes, int algorithm) {
  if (src_shapes.size() < 2) return std::numeric_limits<size_t>::max();
  auto problem = conv_problem(node, src_shapes[0], src_shapes[1]);
  if (!problem) return std::numeric_limits<size_t>::max();
  return conv_workspace_bytes(*problem, algorithm);
}

// A plan that puts Y on z's bytes (Note [residual in place]) needs a convolution that adds z there.
Status check_residual_in_place(const ir::Node& node, const PreparedConv& conv, const float* z, const float* y) {
  if (z != y || conv.adds_residual_in_place()) return Status::ok();
  return unsupported(node.describe() + ": the plan writes Y over the residual input z, but oneDNN could not fuse " +
                     "this convolution's epilogue with its planned algorithm, so it cannot add z where it lies " +
                     "(a plan made by another build or machine? plan again here)");
}

// Every input float32, as the CPU convolutions compute.
Status check_float(const ir::Node& node, const std::vector<DType>& dtypes) {
  for (size_t i = 0; i < dtypes.size(); ++i)
    if (dtypes[i] != DType::kUndefined && dtypes[i] != DType::kFloat32)
      return unsupported(node.describe() + ": input " + std::to_string(i) + " is " + dtype_name(dtypes[i]) +
                         "; the CPU convolution computes float32");
  return Status::ok();
}

Status run_conv(const KernelArgs& args) {
  if (args.dst.empty() || args.dst[0] == nullptr) return internal_error(args.node.describe() + ": Conv without Y");
  std::vector<Shape> shapes;
  std::vector<bool> present;
  std::vector<DType> dtypes;
  for (const Tensor* t : args.src) {
    shapes.push_back(t ? t->shape() : Shape{});
    present.push_back(t != nullptr);
    dtypes.push_back(t ? t->dtype() : DType::kUndefined);
  }
  UCUDNN_RETURN_IF_ERROR(check_float(args.node, dtypes));
  Tensor& y = *args.dst[0];
  UCUDNN_ASSIGN_OR_RETURN(ConvSetup s, conv_setup(args.node, shapes, present, y.shape(), args.algorithm));
  std::unique_ptr<PreparedConv> conv = prepare_conv(s.problem, s.algorithm, s.epilogue, /*weights_constant=*/false);
  UCUDNN_RETURN_IF_ERROR(
      check_workspace(args.node, s.algorithm, conv->workspace_bytes(), args.workspace, args.workspace_bytes));
  auto data = [&](size_t i) { return i < args.src.size() && args.src[i] ? args.src[i]->data<float>() : nullptr; };
  UCUDNN_RETURN_IF_ERROR(check_residual_in_place(args.node, *conv, data(ir::kConvResidualInput), y.data<float>()));
  conv->run(data(0), data(1), data(2), data(ir::kConvResidualInput), y.data<float>(), args.workspace);
  return Status::ok();
}

// The backend's prepared Conv: shapes checked once, the PreparedConv made once.
class ConvCall final : public runtime::Kernel {
 public:
  ConvCall(const ir::Node& node, std::vector<Shape> src_shapes, Shape y_shape, ConvSetup setup,
           std::unique_ptr<PreparedConv> conv)
      : node_(node), src_shapes_(std::move(src_shapes)), y_shape_(std::move(y_shape)), setup_(setup),
        conv_(std::move(conv)) {}

  size_t workspace_bytes() const override { return conv_->workspace_bytes(); }
  runtime::KeptBuffer kept() const override { return conv_->kept(); }

  Status run(const runtime::KernelIo& io) override {
    if (io.dst.empty() || io.src.size() < 2 || io.dst[0].shape != y_shape_)
      return internal_error(node_.describe() + ": Conv run with other tensors than it was prepared for");
    for (size_t i = 0; i < io.src.size() && i < src_shapes_.size(); ++i)
      if (io.src[i].dtype != DType::kUndefined && io.src[i].shape != src_shapes_[i])
        return internal_error(node_.describe() + ": input " + std::to_string(i) + " is " +
                              shape_to_string(io.src[i].shape) + ", prepared for " + shape_to_string(src_shapes_[i]));
    UCUDNN_RETURN_IF_ERROR(
        check_workspace(node_, setup_.algorithm, conv_->workspace_bytes(), io.workspace, io.workspace_bytes));
    use_session_threads();
    auto data = [&](size_t i) -> const float* {
      return i < io.src.size() && io.src[i].dtype != DType::kUndefined ? io.src[i].as<const float>() : nullptr;
    };
    UCUDNN_RETURN_IF_ERROR(
        check_residual_in_place(node_, *conv_, data(ir::kConvResidualInput), io.dst[0].as<float>()));
    conv_->run(data(0), data(1), data(2), data(ir::kConvResidualInput), io.dst[0].as<float>(), io.workspace);
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  std::vector<Shape> src_shapes_;
  Shape y_shape_;
  ConvSetup setup_;
  std::unique_ptr<PreparedConv> conv_;
};

// W is constant when it is an initializer (or folded constant) of the graph: an inference
// session's weights. The training graph makes parameters graph inputs (training_graph.h).
bool weights_constant(const runtime::KernelRequest& r) {
  return r.node.inputs.size() > 1 && r.node.inputs[1] != ir::kNoValue &&
         r.graph.value(r.node.inputs[1]).constant.has_value();
}

Expected<std::unique_ptr<runtime::Kernel>> prepare_conv_call(const runtime::KernelRequest& r) {
  if (r.dst_shapes.empty()) return internal_error(r.node.describe() + ": Conv prepared without Y");
  std::vector<bool> present;
  std::vector<DType> dtypes;
  for (size_t i = 0; i < r.src_shapes.size(); ++i) {
    const bool there = i < r.node.inputs.size() && r.node.inputs[i] != ir::kNoValue;
    present.push_back(there);
    dtypes.push_back(there ? r.graph.value(r.node.inputs[i]).dtype : DType::kUndefined);
  }
  UCUDNN_RETURN_IF_ERROR(check_float(r.node, dtypes));
  UCUDNN_ASSIGN_OR_RETURN(ConvSetup s, conv_setup(r.node, r.src_shapes, present, r.dst_shapes[0], r.algorithm));
  std::unique_ptr<PreparedConv> conv = prepare_conv(s.problem, s.algorithm, s.epilogue, weights_constant(r));
  return std::unique_ptr<runtime::Kernel>(new ConvCall(r.node, r.src_shapes, r.dst_shapes[0], s, std::move(conv)));
}

}  // namespace

const CpuKernel& cpu_kernel_Conv() {
  static const CpuKernel k{.workspace_bytes = conv_workspace, .run = run_conv, .prepare = prepare_conv_call};
  return k;
}

}  // namespace ucudnn::cpu
