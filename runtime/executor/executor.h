// Executor: runs a runtime::Plan over a graph on a Backend — the one executor
// for every device (runtime/backend/backend.h draws the line between them).
//
// At creation it checks the plan against the graph (check_plan, runtime/plan/plan_checks.h:
// every value's size; every step's node, slice, micro-batches and algorithms; every value
// inside the arena, aligned, apart from the values alive with it — all with overflow-safe sums),
// checks that the memory it is about to take fits in what the backend has
// available (refusing with the sizes, rather than being killed half-way), makes
// the only three allocations (weights — or, on a backend whose memory is the
// host's, the constants in place —, the activation arena, the workspace pool),
// uploads the weights, and prepares every call: a whole step, or one per
// micro-batch of a divided convolution, whose batch-divided inputs and output
// point into the middle of the same arena tensors and whose kernel is prepared
// for that micro-batch size. `run` copies inputs in, queues every call (no
// host sync between micro-batches or steps), copies outputs out and
// synchronises once. `profile` does the same with an event recorded between
// the parts (events made on the first profile call, never in `run`) and reads
// the times after the one sync; it runs every step on stream 0, so each step's
// time is its own.
//
// Steps a plan puts on the side stream (Note [side stream],
// runtime/plan/side_stream.h) run on stream 1 when the backend has two,
// ordered against stream 0 by events made at creation: stream 0 records one
// after the step's fork, stream 1 waits for it, and stream 0 waits for the
// step's own event before its join. A backend with one stream runs them in order.
//
// `run_bound` runs on caller-owned device buffers without copies: calls hold
// their tensors' pointers, so at build time every reference to a graph input
// or to a graph output a node writes is recorded (step, call, slot, byte
// offset: a micro-batch points into the middle of its tensor), and each run
// first points those references at this run's memory — the caller's buffers,
// or for `run` and `profile` the arena again.
//
// With a CaptureMode other than kOff, `run` and `run_bound` queue their steps
// through CapturedRuns: captured once on a backend that can, then replayed
// (Note [captured runs], runtime/executor/captured_runs.h); `profile` never is.
//
// An allocation failure anywhere (a backend's, or std::bad_alloc from the host)
// is a kOutOfMemory Status, never an abort.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "runtime/backend/backend.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/executor/captured_runs.h"
#include "runtime/executor/profile.h"
#include "runtime/ir/graph.h"
#include "runtime/plan/plan.h"

namespace ucudnn::runtime {

// The least memory any plan of `graph` takes on `backend` — its inputs (all alive at the first step)
// or its outputs (all alive at the last), whichever is larger, with the weights when they are
// uploaded and the outputs a run returns when device memory is host memory — against the backend's
// available memory: kOutOfMemory naming the sizes when it cannot fit; InvalidArgument for a value
// whose size does not fit at all. For callers that plan (and benchmark) before creating an
// executor; Executor::create checks the whole plan again before it allocates.
Status check_model_fits_memory(const Backend& backend, const ir::Graph& graph);

// Checks a run's inputs against the graph's: count, then each one's dtype and
// shape, naming the input. Every executor calls it before touching memory.
Status check_run_inputs(const ir::Graph& graph, const std::vector<Tensor>& inputs);

class Executor {
 public:
  // `backend` and `graph` must outlive the executor.
  static Expected<std::unique_ptr<Executor>> create(Backend& backend, const ir::Graph& graph, Plan plan,
                                                    CaptureMode capture = CaptureMode::kOff);

  // Host inputs in the order of graph.inputs, exactly their dtype and shape; host outputs. On a host
  // backend the inputs are read where they lie, not copied in (Note [host runs in place]).
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);
  // Runs once like `run`, returning the time of each step and of the input and
  // output copies (the backend's events: device time on a GPU; no input copies on a host backend);
  // outputs dropped.
  Expected<std::vector<StepTiming>> profile(const std::vector<Tensor>& inputs);
  // Runs on caller-owned device memory (see Session::run_on_device): inputs[i] holds graph input i,
  // outputs[j] receives graph output j, each dense with the value's dtype and shape. Inputs are read
  // in place and outputs written in place; an output that no node writes (a graph input or constant
  // passed through) or that repeats an earlier one is copied on the device at the end.
  // Synchronises once.
  Status run_bound(const std::vector<const void*>& inputs, const std::vector<void*>& outputs);
  // run_bound without the synchronisation: the run is queued (on a host backend: done) when it returns,
  // and the caller synchronises the backend before reading the outputs or reusing the buffers — so
  // that more work (the trainer's update, the next batch's copy) queues behind it without a wait.
  Status queue_bound(const std::vector<const void*>& inputs, const std::vector<void*>& outputs);
  // `profile` for run_bound: the same bound buffers; no input copies (that entry is 0 ms), and the
  // outputs entry covers the outputs copied on the device.
  Expected<std::vector<StepTiming>> profile_bound(const std::vector<const void*>& inputs,
                                                  const std::vector<void*>& outputs);

  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const Plan& plan() const { return plan_; }
  // Captured runs from the next run on (Note [captured runs]); whether runs replay (from the second
  // on); why they are eager although the mode is not kOff ("" when they replay).
  void set_capture_mode(CaptureMode mode) { captured_->set_mode(mode); }
  bool replays_runs() const { return captured_->replaying(); }
  const std::string& capture_fallback() const { return captured_->fallback(); }
  // Called in eager runs (`run`, `run_bound` with CaptureMode::kOff) right after step `step` of
  // plan().steps has been queued on stream 0 — to start work that needs its results (data-parallel
  // training's all-reduce); its error stops the run. Not called for side-stream steps or by profile.
  void set_step_callback(std::function<Status(size_t step)> callback) { step_callback_ = std::move(callback); }
  // Bytes of the graph's constants it reads (uploaded, or in place on the host).
  size_t weight_bytes() const { return weight_bytes_; }
  // Bytes its prepared kernels keep between runs (Kernel::kept), each buffer counted once however many
  // calls share it; 0 before the first run (the CPU's converted weights are made then). Not while a run
  // is in progress.
  size_t kernel_bytes() const;
  // Bytes this executor allocated: weights (when uploaded) + arena + workspace pool.
  size_t allocated_bytes() const;

 private:
  struct Call {  // one kernel invocation: a whole step, or one micro-batch of it
    std::vector<TensorRef> src, dst;
    std::unique_ptr<Kernel> kernel;
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
  };
  struct Step {
    const ir::Node* node = nullptr;
    std::vector<Call> calls;
    int stream = 0;                         // 1: on the side stream (only when the backend has two)
    std::unique_ptr<Event> forked, joined;  // side steps: after the fork on 0; after the step on 1
  };
  // One place a prepared call refers to a value: steps_[step].calls[call].src or .dst [slot],
  // `offset` bytes after the value's start.
  struct ValueRef {
    size_t step = 0, call = 0;
    bool dst = false;
    size_t slot = 0;
    size_t offset = 0;
  };

  // Where each constant goes in the weights buffer (aligned), and the totals.
  struct WeightLayout {
    std::vector<size_t> offsets;  // per graph value; 0 for non-constants
    size_t buffer_bytes = 0;      // the buffer holding them all, aligned
    size_t bytes = 0;             // Σ the constants' own bytes
  };

  Executor(Backend& backend, const ir::Graph& graph, Plan plan, CaptureMode capture)
      : backend_(backend), graph_(graph), plan_(std::move(plan)), capture_mode_(capture) {}
  Status build();
  // InvalidArgument for `run` and `profile` of an io_bound plan (Plan::io_bound).
  Status check_not_io_bound(const char* what) const;
  Expected<WeightLayout> lay_out_weights() const;
  // What the executor will allocate against backend_.available_memory_bytes(), before it does.
  Status check_memory(const WeightLayout& weights) const;
  Status place_values(const WeightLayout& weights);
  Status prepare_steps();
  Status prepare_call(const ir::Node& node, int64_t micro_batch, int algorithm, bool accumulate, Call* call);
  Status prepare_side_stream();
  // "" when every call may be captured on backend_, else why not (CapturedRuns' fallback).
  std::string why_not_capturable() const;
  // run, run_bound and profile inside catching_bad_alloc.
  Expected<std::vector<Tensor>> run_once(const std::vector<Tensor>& inputs);
  Status queue_bound_once(const std::vector<const void*>& inputs, const std::vector<void*>& outputs);
  Expected<std::vector<StepTiming>> profile_once(const std::vector<Tensor>& inputs);
  // Times the parts of a run: `copy_in` (covering `inputs` tensors), every step, `copy_out`.
  Expected<std::vector<StepTiming>> profile_parts(const std::function<Status()>& copy_in, int inputs,
                                                  const std::function<Status()>& copy_out);
  // run_bound's outputs that no node writes in place, copied on the device.
  Status copy_unbound_outputs(const std::vector<const void*>& inputs, const std::vector<void*>& outputs);
  // The three parts of a run, queued on stream 0; `run` and `profile` call them in order.
  Status copy_inputs_in(const std::vector<Tensor>& inputs);
  Status run_step(const Step& step, int stream);
  // The outputs as host tensors; `inputs` (empty after copy_inputs_in) where the graph inputs lie.
  Expected<std::vector<Tensor>> copy_outputs_out(const std::vector<const void*>& inputs);
  // Note [host runs in place]: whether run and profile read the caller's input tensors where they lie.
  bool reads_inputs_in_place() const;
  static std::vector<const void*> input_pointers(const std::vector<Tensor>& inputs);
  // Every step, side steps on stream 1 with their events, through captured_ (`bound`, `inputs`,
  // `outputs`: CapturedRuns::run's); `run` and `run_bound` use it.
  Status run_steps(bool bound, const std::vector<const void*>& inputs, const std::vector<void*>& outputs);
  Status queue_steps();  // run_steps without its clean-up after a failure
  // Records refs_ for graph inputs and for the outputs in output_bound_ (after steps_ is built).
  void record_value_refs();
  // Points every recorded reference to graph input i at inputs[i] and to bound graph output j at
  // outputs[j]; an empty vector means the arena (values_) for all of them.
  void point_values_at(const std::vector<const void*>& inputs, const std::vector<void*>& outputs);
  Status check_bound_buffers(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) const;
  // Where value `id` lives during run_bound: the caller's buffer it is bound to, else values_.
  const void* bound_location(ir::ValueId id, const std::vector<const void*>& inputs,
                             const std::vector<void*>& outputs) const;

  Backend& backend_;
  const ir::Graph& graph_;
  Plan plan_;
  CaptureMode capture_mode_;
  std::unique_ptr<Buffer> weights_, arena_, workspace_;
  size_t weight_bytes_ = 0;
  std::vector<TensorRef> values_;  // per graph value: where it lives
  std::vector<Step> steps_;
  std::vector<std::vector<ValueRef>> refs_;  // per graph value; only graph inputs and bound outputs have any
  std::vector<bool> output_bound_;           // per graph output: written in place by run_bound
  std::vector<std::unique_ptr<Event>> profile_events_;  // steps + 3 boundaries, made on the first profile()
  std::vector<std::vector<size_t>> forks_before_;  // per position 0..steps: side steps whose fork to record
  std::vector<std::vector<size_t>> joins_before_;  // per position 0..steps: side steps stream 0 waits for
  std::function<Status(size_t step)> step_callback_;  // set_step_callback's; empty: none
  // Made at the end of build(); last, so its captures (which use every buffer above) go first.
  std::unique_ptr<CapturedRuns> captured_;
};

}  // namespace ucudnn::runtime
