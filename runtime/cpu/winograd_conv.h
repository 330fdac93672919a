// Winograd F(4×4, 3×3) convolution on the CPU (conv_algorithms.h's kWinograd4x3): 3×3 kernels,
// stride 1, no dilation, one group, channels-last X and Y (NHWC, W [M, 3, 3, C]). Each 6×6 input
// tile becomes 36 points (Bᵀ d B), the 3×3 filters 36 [C, M] matrices (G g Gᵀ), and the convolution
// 36 GEMMs whose [tiles, M] results become 4×4 output tiles (Aᵀ m A): 36 multiplies per 16 outputs
// and channel pair instead of 144, for more rounding (Lavin and Gray, arXiv 1509.09308). The GEMMs
// are oneDNN's sgemm, so the algorithm needs a build with oneDNN.
//
// Note [Winograd weights]: with constant weights the prepared convolution holds the transformed
// filters (36/9 = 4× the layer's weights; made at the first run, looked up again only when a run
// passes another W pointer), shared with every other prepared convolution of the same W values and
// shape (Note [shared converted weights], shared_weights.h). Otherwise it transforms them into its
// workspace on every run; the workspace query is the latter's.
//
// Note [Winograd chunks]: the tiles go through in chunks whose transformed input and output take
// about 8 MiB (the L2 caches of a few cores; a fixed size, so the workspace does not depend on the
// thread count), each chunk in three passes over the threads: input transform, GEMMs, output
// transform with the epilogue (bias, residual z, activation: Note [fused nodes]).
#pragma once

#include <cstddef>
#include <memory>

#include "runtime/cpu/conv_algorithms.h"

namespace ucudnn::cpu::winograd {

// Whether the problem is one the algorithm runs (see above) in this build.
bool applies(const ConvProblem& problem);
// Workspace bytes of a call whose weights are not known constant (the most any prepared call
// needs); SIZE_MAX when it does not apply or does not fit.
size_t workspace_bytes(const ConvProblem& problem);
// The prepared convolution (conv_algorithms.h's prepare_conv); nullptr when it does not apply.
std::unique_ptr<PreparedConv> prepare(const ConvProblem& problem, const ConvEpilogue& epilogue,
                                      bool weights_constant);

}  // namespace ucudnn::cpu::winograd
