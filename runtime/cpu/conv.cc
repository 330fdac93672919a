// CPU kernel of Conv: checks the (micro-batch) shapes, picks the algorithm
// (-1 → default) and runs it from conv_algorithms.h. N comes from src[0].
#include <limits>

#include "runtime/cpu/conv_algorithms.h"
#include "runtime/ir/fusion.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ir/layout.h"

namespace ucudnn::cpu {

namespace {

size_t conv_workspace(const ir::Node& node, const std::vector<Shape>& src_shapes, int algorithm) {
  if (src_shapes.size() < 2) return std::numeric_limits<size_t>::max();
  auto problem = conv_problem(node, src_shapes[0], src_shapes[1]);
  if (!problem) return std::numeric_limits<size_t>::max();
  return conv_workspace_bytes(*problem, algorithm);
}

Status run_conv(const KernelArgs& args) {
  if (args.src.size() < 2 || args.src[0] == nullptr || args.src[1] == nullptr || args.dst.empty())
    return internal_error(args.node.describe() + ": Conv kernel called without X, W or Y");
  if (ir::is_channels_last(args.node)) return channels_last_unsupported(args.node);
  const Tensor& x = *args.src[0];
  const Tensor& w = *args.src[1];
  const Tensor* bias = args.src.size() > 2 ? args.src[2] : nullptr;  // may be absent (nullptr) beside a z
  Tensor& y = *args.dst[0];
  UCUDNN_ASSIGN_OR_RETURN(ConvProblem problem, conv_problem(args.node, x.shape(), w.shape()));
  Shape expected = {problem.batch, problem.out_channels};
  if (x.rank() == 4) expected.push_back(problem.out_h);
  expected.push_back(problem.out_w);
  if (y.shape() != expected)
    return invalid_argument(args.node.describe() + ": Y is " + shape_to_string(y.shape()) + " but X " +
                            shape_to_string(x.shape()) + " and W " + shape_to_string(w.shape()) + " give " +
                            shape_to_string(expected));
  if (bias != nullptr && bias->shape() != Shape{problem.out_channels})
    return invalid_argument(args.node.describe() + ": B is " + shape_to_string(bias->shape()) + ", expected [" +
                            std::to_string(problem.out_channels) + "]");
  const int algorithm = args.algorithm == kDefaultCpuConvAlgorithm ? conv_default_algorithm(problem) : args.algorithm;
  if (!conv_algorithm_applies(problem, algorithm))
    return unsupported(args.node.describe() + ": CPU convolution algorithm " + std::to_string(args.algorithm) + " (" +
                       cpu_conv_algorithm_name(args.algorithm) + ") does not apply to X " + shape_to_string(x.shape()) +
                       ", W " + shape_to_string(w.shape()));
  const size_t needed = conv_workspace_bytes(problem, algorithm);
  if (args.workspace_bytes < needed || (needed > 0 && args.workspace == nullptr))
    return invalid_argument(args.node.describe() + ": algorithm " + cpu_conv_algorithm_name(algorithm) + " needs " +
                            std::to_string(needed) + " workspace bytes, got " + std::to_string(args.workspace_bytes));
  run_conv_algorithm(problem, algorithm, x.data<float>(), w.data<float>(), bias ? bias->data<float>() : nullptr,
                     y.data<float>(), static_cast<float*>(args.workspace));
  if (args.src.size() > ir::kConvResidualInput && args.src[ir::kConvResidualInput] != nullptr) {
    // Note [fused nodes]: y += z before the activation.
    const Tensor& z = *args.src[ir::kConvResidualInput];
    if (z.shape() != y.shape() || z.dtype() != DType::kFloat32)
      return invalid_argument(args.node.describe() + ": residual input " + z.describe() + " does not match Y " +
                              y.describe());
    float* out = y.data<float>();
    const float* add = z.data<float>();
    const int64_t n = y.numel();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) out[i] += add[i];
  }
  return apply_fused_activation(args.node, y);
}

}  // namespace

const CpuKernel& cpu_kernel_Conv() {
  static const CpuKernel k{.workspace_bytes = conv_workspace, .run = run_conv};
  return k;
}

}  // namespace ucudnn::cpu
