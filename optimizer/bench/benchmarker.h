// Benchmarker: measures every algorithm of a convolution kernel (in its direction:
// forward, backward data or backward filter) at a list of micro-batch sizes — time
// (of several runs after warm-up: cuDNN's median, the CPU's fastest, Note [interleaved timing])
// and workspace.
// An algorithm that fails or does not apply is recorded as unavailable, not fatal.
// One implementation per backend: CPU (cpu_benchmarker.cc) and cuDNN (CUDA build).
#pragma once

#include <vector>

#include "optimizer/benchmark_table.h"
#include "optimizer/conv_kernels.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn::optimizer {

class Benchmarker {
 public:
  virtual ~Benchmarker() = default;
  // A key with only the device part filled (name, versions, math type, layout).
  virtual ConvKernelKey device_key() const = 0;
  // Times every algorithm of `kernel` (its representative node in `graph`) at each size.
  virtual Expected<KernelTimings> measure(const ir::Graph& graph, const ConvKernel& kernel,
                                          const std::vector<int64_t>& sizes) = 0;
};

// Note [interleaved timing] (cpu_benchmarker.cc): the algorithms run in turns, a run each per round.
struct CpuBenchmarkOptions {
  int warmup = 1;        // untimed rounds
  int repeats = 3;       // timed rounds at least; each algorithm's time is its fastest timed run
  int max_repeats = 10;  // timed rounds at most: more rounds are run while the rounds so far took
  double round_budget_ms = 20;  // less than this (cheap kernels, whose times the load moves most)
};

// The CPU backend's benchmarker: its "algorithms" are the CPU conv methods
// (runtime/cpu/conv_algorithms.h; the backward ones' runtime/cpu/conv_grad.h), its
// workspace their scratch buffers.
std::unique_ptr<Benchmarker> make_cpu_benchmarker(CpuBenchmarkOptions options = {});

}  // namespace ucudnn::optimizer
