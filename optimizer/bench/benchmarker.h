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

// Steps of a graph timed as one run: each node's CPU kernel, prepared as a session prepares it with the
// algorithm given (-1: the kernel's default), run in order at the graph's shapes.
struct TimedSteps {
  const ir::Graph* graph = nullptr;
  std::vector<std::pair<ir::NodeId, int>> steps;  // node, algorithm
};
struct TimedRun {
  double ms = 0;  // the fastest timed run
  Tensor output;  // the last step's output 0, as the runs left it
};
// Each of `runs` timed, in turns (Note [interleaved timing]). The inputs are random float32 values drawn
// from the value's name (runs over two forms of one graph read the same X), constants as the graph holds
// them; a value a step writes is read by the steps after it. Unsupported naming the node when the CPU has
// no kernel for one or prepare refuses it. The planner times what is no convolution kernel with it, and
// compares the outputs (Note [timed depthwise fusion], plan_model.cc).
Expected<std::vector<TimedRun>> time_cpu_steps(const std::vector<TimedSteps>& runs, CpuBenchmarkOptions options = {});

}  // namespace ucudnn::optimizer
