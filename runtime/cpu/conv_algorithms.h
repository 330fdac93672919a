// The CPU convolution algorithms the μ-cuDNN optimizer chooses among on the CPU.
//
// Each trades workspace for speed, like cuDNN's forward algorithms:
//
//   kIm2colGemm           im2col of the WHOLE micro-batch into a [K, N·P] matrix
//                         (K = C/group·R·S, P = OH·OW), one GEMM per group over all
//                         N·P columns into a [M, N·P] scratch, then a scatter to
//                         NCHW (no scratch when N == 1). Fastest for deep layers
//                         with small P, where per-sample GEMMs are thin.
//                         Workspace: 4·(N·C·R·S·P + (N > 1 ? N·M·P : 0)) bytes —
//                         grows linearly with the micro-batch.
//   kDirect               Direct nested loops, threads over (n, m) planes. No
//                         workspace; slow for dense convs, but the right choice for
//                         depthwise (C/group == 1) convolutions.
//   kGemm1x1              1x1 kernel, stride 1, no padding: the input already is
//                         the [C, P] matrix, so one GEMM per sample and group.
//                         No workspace. Only applies to such convs.
//   kIm2colGemmPerSample  im2col of ONE sample at a time ([K, P]), one GEMM per
//                         sample and group straight into the output.
//                         Workspace: 4·C·R·S·P bytes, independent of N.
//   kOnednnDirect         oneDNN's direct convolution (onednn_conv.h), JIT-compiled
//                         for the CPU's ISA, in its preferred blocked layouts.
//                         Workspace: oneDNN's scratchpad + the blocked copies of X
//                         and Y (+ of W where W is not constant). Applies only in a
//                         build with oneDNN (UCUDNN_ONEDNN) where oneDNN has an
//                         implementation; so do the three below.
//   kOnednnWinograd       oneDNN's Winograd convolution (3x3, stride 1; AVX-512 only).
//   kOnednnAuto           oneDNN's own choice of direct or Winograd (only where
//                         Winograd exists; elsewhere it would be kOnednnDirect).
//   kOnednnPlain          oneDNN's direct convolution on X and Y as they lie (NCHW,
//                         or NHWC in a channels-last graph): no reorders.
//   kWinograd4x3          Winograd F(4×4, 3×3) (winograd_conv.h): 3×3, stride 1, one
//                         group, channels-last only; 4× fewer multiplies than direct,
//                         more rounding (within 1e-4 of a layer's output scale). Its
//                         GEMMs are oneDNN's, so it needs oneDNN too. Workspace: the
//                         transformed tiles of one chunk (~8 MiB), + the transformed
//                         weights (4× W) where W is not constant. The CPU benchmarker
//                         times it for constant weights only (inference): training
//                         stays on the exact algorithms (Note [Winograd for inference]).
//
// Channels-last (NHWC) Convs (Note [channels-last]: X [N, H, W, C], W [M, R, S, C/group],
// Y [N, OH, OW, M]) run through oneDNN only: kOnednnPlain on the tensors as they lie, or
// kOnednnDirect with its blocked copies, or kWinograd4x3; the Eigen algorithms are NCHW and do
// not apply.
// A build without oneDNN therefore has no channels-last CPU convolution.
//
// The oneDNN algorithms fuse the Conv node's epilogue (bias, residual z, activation: Note
// [fused nodes]) into the primitive as post-ops, Winograd into its output transform; the others
// add it after the GEMMs, or, when z lies in Y already (Note [residual in place]), accumulate the
// GEMMs into Y.
// An algorithm that does not apply (kGemm1x1 on a 3x3) makes workspace_bytes
// return SIZE_MAX and run return Unsupported. Algorithm -1 is the default, in
// order: kDirect for depthwise (C/group == 1); kIm2colGemm when N > 1, the output
// plane is at most kSmallOutputPlane and its workspace at most
// kDefaultWorkspaceLimit; kGemm1x1 when it applies; else kIm2colGemmPerSample.
// The default needs at most max(kDefaultWorkspaceLimit, one sample's im2col).
//
// All functions take N from the shapes they are given (a micro-batch), never from
// the node, so the executor may call them on views of a slice of the batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/backend/backend.h"
#include "runtime/core/status.h"
#include "runtime/ir/conv_activation.h"
#include "runtime/ir/graph.h"
#include "runtime/ops/conv_problem.h"

namespace ucudnn::cpu {

enum class CpuConvAlgorithm : int {
  kIm2colGemm = 0,
  kDirect = 1,
  kGemm1x1 = 2,
  kIm2colGemmPerSample = 3,
  kOnednnDirect = 4,
  kOnednnWinograd = 5,
  kOnednnAuto = 6,
  kOnednnPlain = 7,
  kWinograd4x3 = 8,
};
// The same in every build (ids stay stable in the benchmark database); an algorithm
// this build lacks never applies (cpu_conv_algorithm_available).
inline constexpr int kNumCpuConvAlgorithms = 9;
// Bumped when what a stored CPU timing means changes (v2: oneDNN's workspace query covers its fused
// epilogues; v3: micro-batches are timed on the slices of a whole batch, Note [micro-batches read cold
// data]; v4: Winograd's tile blocks, Note [Winograd tile blocks]; v5: the fastest of runs taken in turns,
// Note [interleaved timing], optimizer/bench/cpu_benchmarker.cc; v6: ConvGradData and ConvGradFilter
// have oneDNN's algorithms, conv_grad.h's ids 3 and 4, which rows of v5 lack): the benchmarker's device
// key carries it, so rows of another version are measured anew.
inline constexpr int kCpuConvTimingsVersion = 6;
inline constexpr int kDefaultCpuConvAlgorithm = -1;
// Largest workspace the default (-1) picks kIm2colGemm for.
inline constexpr size_t kDefaultWorkspaceLimit = size_t{16} << 20;
// Output planes (OH·OW) up to this size make the default prefer kIm2colGemm.
inline constexpr int64_t kSmallOutputPlane = 256;

// "im2col_gemm", "direct", "gemm_1x1", "im2col_gemm_per_sample", "onednn_direct", "onednn_winograd",
// "onednn_auto", "onednn_plain", "winograd_4x3"; "?" when out of range.
const char* cpu_conv_algorithm_name(int algorithm);
// Whether this build has `algorithm` (false for the oneDNN ones and kWinograd4x3 without UCUDNN_ONEDNN).
bool cpu_conv_algorithm_available(int algorithm);
// Whether `algorithm` is one of oneDNN's.
bool is_onednn_algorithm(int algorithm);
// Whether this build runs channels-last (NHWC) graphs on the CPU: it needs oneDNN (see above).
bool cpu_runs_channels_last();

// ConvProblem and conv_problem: runtime/ops/conv_problem.h (the optimizer keys kernels by them too).
using ::ucudnn::ConvProblem;
using ::ucudnn::conv_problem;

// Whether `algorithm` can run this problem.
bool conv_algorithm_applies(const ConvProblem& problem, int algorithm);
// The algorithm -1 stands for.
int conv_default_algorithm(const ConvProblem& problem);
// Scratch bytes of `algorithm` (-1 → default); SIZE_MAX when it does not apply.
size_t conv_workspace_bytes(const ConvProblem& problem, int algorithm);

// Building blocks shared with the backward convolutions (conv_grad.cc), OpenMP-threaded.
// im2col: the column matrix of samples [0, samples) of x: row r = (c, kh, kw) over all C·R·S,
// column n·P + p (leading dimension samples·P); zeros where the window reads padding.
void im2col(const ConvProblem& problem, const float* x, int64_t samples, float* col);
// col2im, im2col's adjoint: x (samples × [C, H, W], overwritten) = the sum, for every input
// element, of the column entries im2col would copy it to.
void col2im(const ConvProblem& problem, const float* col, int64_t samples, float* x);

// What a Conv node computes after the convolution (Note [fused nodes]): Y = act(conv + B + z), act one of
// ir::ConvActivationKind (Relu; SiLU, HardSwish, Sigmoid, Clip from fuse_any_conv_activation).
struct ConvEpilogue {
  bool bias = false;
  bool residual = false;
  ir::ConvActivation activation;
};

// y = act(y + bias + z) in one pass (bias and z may be null), in Y's layout (NCHW or NHWC).
void apply_conv_epilogue(const ConvProblem& problem, const float* bias, const float* z,
                         const ir::ConvActivation& activation, float* y);

// One convolution made ready for one problem, algorithm and epilogue: what the algorithm
// builds once (oneDNN's primitive) lives here, and constant weights converted at the first run
// (shared: Note [shared converted weights]), so later runs only compute. One object is not to be
// run from two threads at once.
class PreparedConv {
 public:
  virtual ~PreparedConv() = default;
  // Scratch bytes run() needs: at most conv_workspace_bytes(problem, algorithm).
  virtual size_t workspace_bytes() const = 0;
  // Y = epilogue(conv(X, W)); bias and z are read only when the epilogue has them. z may be y
  // (Note [residual in place], runtime/plan/liveness.cc) where adds_residual_in_place().
  virtual void run(const float* x, const float* w, const float* bias, const float* z, float* y,
                   void* workspace) = 0;
  // Whether run() accepts z == y: Y then holds z before the call and the convolution adds to it
  // (the Eigen algorithms accumulate into Y; oneDNN's sum post-op does; Winograd reads each element of z
  // before it writes it). False only where oneDNN could not fuse the epilogue (the bare primitive writes Y).
  virtual bool adds_residual_in_place() const = 0;
  // The buffer the object keeps between runs: W converted once when constant, from the first run on,
  // shared with other objects (Note [shared converted weights]); none for the Eigen algorithms.
  virtual runtime::KeptBuffer kept() const { return {}; }
};

// The prepared convolution; nullptr when `algorithm` (not -1) does not apply. weights_constant:
// every run passes the same W values (an inference session's initializer); then an algorithm
// may keep W converted between runs, converting again only when run with another W pointer.
// Otherwise (training: W changes every step) it converts W on every run.
std::unique_ptr<PreparedConv> prepare_conv(const ConvProblem& problem, int algorithm, const ConvEpilogue& epilogue,
                                           bool weights_constant);

}  // namespace ucudnn::cpu
