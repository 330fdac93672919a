// The cuDNN benchmarker: times every convolution algorithm of a kernel in its
// direction (forward, backward data, backward filter) on the GPU at each
// micro-batch size (CUDA events, warm-up, median), with the workspace cuDNN
// reports. Built only with the CUDA backend (target ucudnn_optimizer_cuda).
//
// Algorithm ids are cuDNN's cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
// values, so the executor runs exactly what was measured; forward also has ucudnn's
// own UCUDNN_DEPTHWISE after cuDNN's (runtime/cuda/depthwise_conv.h) and, from id 16, cuDNN
// graph-API engine configurations (runtime/cuda/cudnn_graph.h). Descriptors come from
// the CUDA backend's own kernel of the direction's op (runtime/cuda/conv.cc,
// conv_grad.cc: prepare with a fixed algorithm, as the executor prepares one
// micro-batch call), so the measured call has the executor's math type (Note
// [conv math type]). The
// bias and a fused activation are left out: the key does not carry them and
// they cost the same whichever algorithm runs.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "optimizer/bench/benchmarker.h"

namespace ucudnn::cuda {
class CudaContext;
}

namespace ucudnn::optimizer {

struct CudnnBenchmarkOptions {
  int warmup = 3;                 // runs before the timed ones, per algorithm and size (cuDNN
                                  // initialises lazily); the last is timed for dominated_factor
  int repeats = 10;               // median of this many timed runs
  size_t max_workspace_bytes = 0; // algorithms asking more are unavailable; 0 = whatever cudaMalloc gives
  // An algorithm whose timed warm-up run is this many times slower than a faster
  // one needing no more workspace keeps that one time, without the repeats
  // (Note [dominated algorithms] in cudnn_benchmarker.cc); infinity, or warmup < 2:
  // always the median.
  double dominated_factor = 2.0;
};

// The benchmarker for `ctx`'s GPU and math mode; `ctx` must outlive it.
std::unique_ptr<Benchmarker> make_cudnn_benchmarker(cuda::CudaContext& ctx, CudnnBenchmarkOptions options = {});

// cuDNN's name of forward algorithm `algorithm` without the prefix ("IMPLICIT_GEMM"), "UCUDNN_DEPTHWISE",
// "GRAPH_<position>" for a graph-API id (a measurement names its engine instead), or "ALGO_<n>".
std::string cudnn_fwd_algorithm_name(int algorithm);
// The same for any direction: cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t without the
// prefix ("FFT_TILING", "ALGO_1"), or "ALGO_<n>" when out of range.
std::string cudnn_algorithm_name(ConvDirection direction, int algorithm);

}  // namespace ucudnn::optimizer
