// The CPU's backward convolutions (ConvGradData, ConvGradFilter; runtime/cpu/conv_grad.cc): their
// algorithms, which the optimizer times and chooses like the forward ones (conv_algorithms.h).
//
// Both directions work on the forward problem (ConvProblem: X, W and Y = dY's shapes) and offer:
//
//   kGemm              the WHOLE micro-batch at once: dY gathered from [N, K, P] into a [K, N·P]
//                      matrix, one GEMM per group over all N·P columns. Data: col = W_gᵀ·dY_g
//                      ([C·R·S, N·P]), then col2im into dX. Filter: im2col(X) ([C·R·S, N·P]),
//                      dW_g = dY_g·col_gᵀ. Workspace: 4·(C·R·S·N·P + (N > 1 ? K·N·P : 0)) bytes.
//   kGemmPerSample     one sample at a time: the same GEMMs on [C·R·S, P] columns (data: col2im
//                      per sample; filter: dW += per sample). Workspace: 4·C·R·S·P bytes.
//   kGemm1x1           1x1 kernel, stride 1, no padding: X and dX already are the [C, P]
//                      matrices, so one GEMM per sample and group. No workspace; only such convs.
//   kOnednn            oneDNN's backward-data or backward-weights convolution (onednn_conv_grad.h),
//                      JIT-compiled for the CPU's ISA, in its preferred blocked layouts. Workspace:
//                      oneDNN's scratchpad + the blocked copies of the tensors whose layout differs
//                      (data: dY, W, dX; filter: X, dY, and dW, which ConvGradFilter always has room
//                      for, to accumulate). Applies only in a build with oneDNN (UCUDNN_ONEDNN) where
//                      oneDNN has an implementation in that direction; so does the one below.
//   kOnednnPlain       the same on X (or dX) and dY as they lie (NCHW): no reorders of activations
//                      (in NCHW mostly oneDNN's GEMM-based implementation).
//
// Algorithm -1 is the default, chosen as the forward's: the whole-batch GEMM when N > 1, the
// output plane is at most kSmallOutputPlane and its workspace at most kDefaultWorkspaceLimit;
// kGemm1x1 when it applies; else per sample. An algorithm that does not apply answers SIZE_MAX
// workspace bytes, and Unsupported when run. ConvGradFilter honours KernelArgs::accumulate (the
// micro-batches after the first add to dW); ConvGradData's dX is always overwritten.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/ir/graph.h"

namespace ucudnn::cpu {

// The ids are the same in both directions (and stable: the benchmark database stores them).
enum class CpuConvGradAlgorithm : int {
  kGemm = 0,
  kGemmPerSample = 1,
  kGemm1x1 = 2,
  kOnednn = 3,
  kOnednnPlain = 4,
};
// The same in every build; an algorithm this build lacks (oneDNN's) never applies.
inline constexpr int kNumCpuConvGradDataAlgorithms = 5;
inline constexpr int kNumCpuConvGradFilterAlgorithms = 5;

// "gemm", "gemm_per_sample", "gemm_1x1", "onednn", "onednn_plain"; "?" when out of range.
const char* cpu_conv_grad_algorithm_name(int algorithm);

// The forward problem of a ConvGradData (inputs dY, W; X = input_shape with dY's batch) or
// ConvGradFilter (inputs X, dY; W = filter_shape) node on these input shapes; errors name the node.
Expected<ConvProblem> conv_grad_problem(const ir::Node& node, const std::vector<Shape>& src_shapes);

// Whether `algorithm` can run this problem in direction `op` (kConvGradData or kConvGradFilter):
// oneDNN may have a primitive for one direction and not the other.
bool conv_grad_algorithm_applies(OpKind op, const ConvProblem& problem, int algorithm);
// The algorithm -1 stands for (one of the GEMMs, the same in both directions).
int conv_grad_default_algorithm(const ConvProblem& problem);
// Scratch bytes of `algorithm` (-1 → default) in direction `op`; SIZE_MAX when it does not apply.
size_t conv_grad_workspace_bytes(OpKind op, const ConvProblem& problem, int algorithm);

// One backward convolution made ready for one direction, problem and algorithm: what the algorithm
// builds once (oneDNN's primitive and its reorders) lives here, so runs only compute. One object is not
// to be run from two threads at once.
class PreparedConvGrad {
 public:
  virtual ~PreparedConvGrad() = default;
  // Scratch bytes run() needs: conv_grad_workspace_bytes(op, problem, algorithm).
  virtual size_t workspace_bytes() const = 0;
  // ConvGradData: dst = dX from src0 = dY, src1 = W (accumulate must be false). ConvGradFilter:
  // dst = dW from src0 = X, src1 = dY; with `accumulate` dW += that (β = 1, Note [fused nodes]).
  virtual void run(const float* src0, const float* src1, float* dst, bool accumulate, void* workspace) = 0;
};

// The prepared backward convolution of `op`; nullptr when `algorithm` (not -1) does not apply.
std::unique_ptr<PreparedConvGrad> prepare_conv_grad(OpKind op, const ConvProblem& problem, int algorithm);

}  // namespace ucudnn::cpu
