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
// Note [Winograd chunks]: the workspace holds the transformed input and GEMM output of a chunk of
// tiles, about 8 MiB (the L2 caches of a few cores; a fixed size, so the workspace does not depend
// on the thread count). Where the filters are large (deep layers), the tiles go through chunk by
// chunk, each in three passes over the threads: input transform, GEMMs (work items of [tiles, M]
// blocks of each of the 36 points, so the filters are read about once per chunk), output transform
// with the epilogue (bias, residual z, activation: Note [fused nodes]).
//
// Note [Winograd tile blocks]: in those three passes a tile's data moves between cores: the thread
// that transforms it is seldom the one that multiplies it. Where the transformed filters are small
// (at most 2.5 MiB, C·M up to about 128·128) and there are at least two blocks of 16 tiles or more
// per thread, each thread instead takes blocks of tiles through all three passes in its own part of
// the chunk buffers, a block's data about 1 MiB (half of a 2 MiB L2), so its tiles stay in its cache;
// every block then reads all the filters. The bounds are measured, not derived: on the device host
// at 8 threads and batch 16, blocks took 0.75× the time of chunks for C = M = 64 at 56×56, 0.62× for
// 32 at 112×112, 0.89× for 128 at 28×28, and 1.31× for 256 at 14×14, 2.1× for 512 at 7×7
// (docs/history/PERFORMANCE-2026-12.md, issue 15, eighth part).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/cpu/conv_algorithms.h"

namespace ucudnn::cpu::winograd {

// Whether the problem is one the algorithm runs (see above) in this build.
bool applies(const ConvProblem& problem);
// Workspace bytes of a call whose weights are not known constant (the most any prepared call
// needs); SIZE_MAX when it does not apply or does not fit.
size_t workspace_bytes(const ConvProblem& problem);
// Tiles in each thread's block (Note [Winograd tile blocks]) when `threads` threads run the problem;
// 0 where its tiles go through in chunks instead.
int64_t tiles_per_block(const ConvProblem& problem, int threads);
// The prepared convolution (conv_algorithms.h's prepare_conv); nullptr when it does not apply.
std::unique_ptr<PreparedConv> prepare(const ConvProblem& problem, const ConvEpilogue& epilogue,
                                      bool weights_constant);

}  // namespace ucudnn::cpu::winograd
