// CudaExecutor: runs a runtime::Plan over a graph on one GPU.
//
// Mirrors runtime/executor/cpu_executor.h. At creation it checks the plan
// against the graph (every op has a CUDA kernel — else one Unsupported error
// naming them all), makes the only three device allocations (weights,
// activation arena, workspace pool), uploads the weights, and prepares every
// call: a whole step, or one per micro-batch of a divided convolution, whose
// input 0 / output 0 are pointer offsets into the same arena tensors and whose
// descriptors are built for that micro-batch size. `run` copies inputs in,
// queues every call on the one stream (no host sync between micro-batches or
// steps), copies outputs out and synchronises once. `profile` does the same
// with a CUDA event recorded between the parts (events made on the first
// profile call, never in `run`) and reads the device times after the one sync.
// Steps a plan puts on the side stream (Note [side stream],
// runtime/executor/side_stream.h) run on a second context's stream, ordered
// against the main stream by events made at creation: the main stream records
// one after the step's fork, the side stream waits for it, and the main stream
// waits for the step's own event before its join. `profile` runs every step on
// the main stream, so each step's time is its own.
// `run_bound` runs on caller-owned device buffers without copies: calls hold
// their tensors' pointers, so at build time every reference to a graph input
// or to a graph output a node writes is recorded (step, call, slot, byte
// offset: a micro-batch points into the middle of its tensor), and each run
// first points those references at this run's memory — the caller's buffers,
// or for `run` and `profile` the arena again.
//
// make_cuda_plan builds the `undivided` plan: each Conv gets the fastest
// algorithm cudnnFindConvolutionForwardAlgorithmEx reports at the full batch
// whose workspace fits the per-layer limit; the pool is the largest of them
// (with two streams, the largest sum of slices that may be in use at once).
#pragma once

#include <memory>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/device_memory.h"
#include "runtime/executor/plan.h"
#include "runtime/executor/profile.h"
#include "runtime/ir/graph.h"

namespace ucudnn::cuda {

struct CudaPlanOptions {
  size_t workspace_limit = size_t{64} << 20;  // per-layer workspace limit (bytes)
  int streams = 1;  // 2: independent convolutions on a side stream (Note [side stream])
};

// Ops of `graph` without a CUDA kernel, as an Unsupported status naming them all; OK when none.
Status check_cuda_support(const ir::Graph& graph);

// The undivided plan (see above). Runs cuDNN's algorithm search on the device,
// with temporary buffers freed before it returns.
Expected<runtime::Plan> make_cuda_plan(CudaContext& ctx, const ir::Graph& graph, const CudaPlanOptions& options);

// One benchmarked forward-convolution algorithm (cudnnFindConvolutionForwardAlgorithmEx).
struct ConvAlgorithmTiming {
  int algorithm = -1;
  float milliseconds = 0;
  size_t workspace_bytes = 0;
};
// Every algorithm cuDNN can run for `conv_node` at `micro_batch` within `workspace_limit`, fastest first.
Expected<std::vector<ConvAlgorithmTiming>> find_conv_algorithms(CudaContext& ctx, const ir::Graph& graph,
                                                                const ir::Node& conv_node, int64_t micro_batch,
                                                                size_t workspace_limit);

class CudaExecutor {
 public:
  // `ctx` and `graph` must outlive the executor.
  static Expected<std::unique_ptr<CudaExecutor>> create(CudaContext& ctx, const ir::Graph& graph,
                                                        runtime::Plan plan);

  // Host inputs in the order of graph.inputs, exactly their dtype and shape; host outputs.
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);
  // Runs once like `run`, returning the device time of each step and of the
  // input and output copies (CUDA events on the context's stream); outputs dropped.
  Expected<std::vector<runtime::StepTiming>> profile(const std::vector<Tensor>& inputs);
  // Runs on caller-owned device memory (see Session::run_on_device): inputs[i] holds graph input i,
  // outputs[j] receives graph output j, each dense with the value's dtype and shape. Inputs are read
  // in place and outputs written in place; an output that no node writes (a graph input or constant
  // passed through) or that repeats an earlier one is copied device to device at the end.
  // Synchronises once.
  Status run_bound(const std::vector<const void*>& inputs, const std::vector<void*>& outputs);

  ~CudaExecutor();  // destroys the profiling and side-stream events, if any
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  const runtime::Plan& plan() const { return plan_; }
  size_t weight_bytes() const { return weights_.bytes(); }
  // Device bytes this executor holds: weights + arena + workspace pool.
  size_t device_bytes() const { return weights_.bytes() + arena_.bytes() + workspace_.bytes(); }

 private:
  struct Call {
    std::vector<DeviceTensor> src, dst;
    std::unique_ptr<KernelState> state;
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
  };
  struct Step {
    const ir::Node* node = nullptr;
    std::vector<Call> calls;
    bool side = false;               // on side_ctx_'s stream
    cudaEvent_t forked = nullptr;    // side: recorded on the main stream after the fork
    cudaEvent_t done = nullptr;      // side: recorded on the side stream after the step
  };
  // One place a prepared call refers to a value: steps_[step].calls[call].src or .dst [slot],
  // `offset` bytes after the value's start.
  struct ValueRef {
    size_t step = 0, call = 0;
    bool dst = false;
    size_t slot = 0;
    size_t offset = 0;
  };

  CudaExecutor(CudaContext& ctx, const ir::Graph& graph, runtime::Plan plan)
      : ctx_(ctx), graph_(graph), plan_(std::move(plan)) {}
  Status build();
  Status prepare_call(const ir::Node& node, int64_t micro_batch, int algorithm, Call* call);
  // The three parts of a run, queued on the stream; `run` and `profile` call them in order.
  Status copy_inputs_in(const std::vector<Tensor>& inputs);
  Status run_step(const Step& step, CudaContext& ctx);
  // Every step, side steps on the side stream with their events; `run` and `run_bound` use it.
  Status run_steps();
  Status queue_steps();  // run_steps without its clean-up after a failure
  // For the side steps: the second context and the events, and where the main stream records and waits.
  Status prepare_side_stream();
  Expected<std::vector<Tensor>> copy_outputs_out();
  // Records refs_ for graph inputs and for the outputs in output_bound_ (after steps_ is built).
  void record_value_refs();
  // Points every recorded reference to graph input i at inputs[i] and to bound graph output j at
  // outputs[j]; an empty vector means the arena (values_) for all of them.
  void point_values_at(const std::vector<const void*>& inputs, const std::vector<void*>& outputs);
  // run_bound's buffers: one per graph input and output, each in GPU memory on this
  // context's device (or, for a value of zero bytes, anything).
  Status check_bound_buffers(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) const;
  // Where value `id` lives during run_bound: the caller's buffer it is bound to, else values_.
  const void* bound_location(ir::ValueId id, const std::vector<const void*>& inputs,
                             const std::vector<void*>& outputs) const;

  CudaContext& ctx_;
  const ir::Graph& graph_;
  runtime::Plan plan_;
  DeviceBuffer weights_, arena_, workspace_;
  std::vector<DeviceTensor> values_;  // per graph value: its device tensor
  std::vector<Step> steps_;
  std::vector<std::vector<ValueRef>> refs_;  // per graph value; only graph inputs and bound outputs have any
  std::vector<bool> output_bound_;           // per graph output: written in place by run_bound
  std::vector<cudaEvent_t> events_;  // profiling: steps + 3 boundaries, made on the first profile()
  std::unique_ptr<CudaContext> side_ctx_;          // only when the plan has side steps
  std::vector<std::vector<size_t>> forks_before_;  // per position 0..steps: side steps whose fork event to record
  std::vector<std::vector<size_t>> joins_before_;  // per position 0..steps: side steps the main stream waits for
};

}  // namespace ucudnn::cuda
