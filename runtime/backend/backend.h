// Backend: what a device gives the one Executor (runtime/executor/executor.h).
//
// The executor owns the plan and the step loop; a backend owns the device. It
// provides, each behind one small virtual call:
//   - memory: `allocate` (the executor makes one buffer each for weights, the
//     activation arena and the workspace pool, all at load, after comparing their
//     total with `available_memory_bytes`) and copies between the host and the
//     device, queued on stream 0;
//   - streams and events: `use_streams`, `record`, `wait`, `synchronize`, and
//     `elapsed_ms` between two recorded events (profiling);
//   - optionally capture: record the queued steps once, replay them later (CUDA graphs);
//   - kernels, two-phase: `prepare(request)` builds what one call of a node
//     needs for its shapes and algorithm and reports its workspace bytes (a
//     pure query: nothing is allocated on the device); the returned Kernel's
//     `run(io)` then only queues work on `io.stream`: no allocation, no sync.
// Ops are found by name through each backend's kernel table
// (runtime/cpu/cpu_kernel.h, runtime/cuda/cuda_kernel.h), generated from
// runtime/ir/op_list.h. A backend never includes the executor.
//   - capabilities: what it can do, asked without a device (BackendCapabilities,
//     Note [backend capabilities]).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn::runtime {

// A dense row-major tensor in a backend's memory (not owning).
struct TensorRef {
  DType dtype = DType::kUndefined;  // kUndefined for an absent optional input
  Shape shape;
  void* data = nullptr;
  int64_t numel() const { return shape_numel(shape); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  template <typename T> T* as() const { return static_cast<T*>(data); }
};

// One call of a node to prepare: the whole step, or one micro-batch of it
// (then the batch-divided inputs and output 0 carry the micro-batch size).
struct KernelRequest {
  const ir::Graph& graph;
  const ir::Node& node;
  std::vector<Shape> src_shapes;  // this call's input shapes ({} for an absent input)
  std::vector<Shape> dst_shapes;  // this call's output shapes
  int algorithm = -1;             // Conv: the backend's algorithm id; -1 = the kernel's default
  bool accumulate = false;        // add to the outputs' contents (β = 1) instead of overwriting them:
                                  // ConvGradFilter's micro-batches after the first (Note [fused nodes])
};

// The request for one call of `node` in `graph`: its value shapes, with the batch-divided
// inputs and output 0 at `micro_batch` samples when micro_batch > 0 (Note [fused nodes]).
// `accumulate` as KernelRequest's.
KernelRequest kernel_request(const ir::Graph& graph, const ir::Node& node, int64_t micro_batch, int algorithm,
                             bool accumulate = false);

// What a prepared kernel runs on.
struct KernelIo {
  const std::vector<TensorRef>& src;
  const std::vector<TensorRef>& dst;
  void* workspace = nullptr;  // at least workspace_bytes() of the kernel
  size_t workspace_bytes = 0;
  int stream = 0;             // < the count given to Backend::use_streams
};

// A buffer a prepared kernel keeps between runs beside the arena and the workspace: `id` names it
// (kernels that share one name the same id), `bytes` is its size; {nullptr, 0} for none.
struct KeptBuffer {
  const void* id = nullptr;
  size_t bytes = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Scratch bytes run() needs (fixed at prepare).
  virtual size_t workspace_bytes() const = 0;
  // Queues the call on io.stream; errors name the op and shapes.
  virtual Status run(const KernelIo& io) = 0;
  // False when run() cannot be recorded by Backend::begin_capture: it waits for the device (a value
  // read to the host, Note [values checked on the host]) or copies from pageable host memory.
  virtual bool capturable() const { return true; }
  // What the kernel keeps between runs (the CPU's convolutions: constant weights converted to oneDNN's
  // layout or Winograd's filters, made at the first run and shared: Note [shared converted weights]).
  virtual KeptBuffer kept() const { return {}; }
};

// Memory a backend allocated; freed on destruction.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual void* data() const = 0;
  virtual size_t bytes() const = 0;
};

// A point on a stream: where work was when it was recorded.
class Event {
 public:
  virtual ~Event() = default;
};

// Work recorded between Backend::begin_capture and end_capture (a CUDA graph), replayed by
// Backend::replay with the pointers and arguments it was recorded with; released on destruction.
class CapturedWork {
 public:
  virtual ~CapturedWork() = default;
};

// What a layout Transpose (NCHW↔NHWC) is predicted to cost: `ms_per_byte` × its bytes + `fixed_ms`.
struct TransposeCost {
  double ms_per_byte = 0;
  double fixed_ms = 0;
  double of(double bytes) const { return bytes * ms_per_byte + fixed_ms; }
};

// Note [backend capabilities]: what a backend can do, answered from shapes and the build alone —
// no device is touched, so plans for a GPU are made on machines without one. The optimizer and the
// api plan by these answers instead of comparing device names (ONNX Runtime's GetCapability and
// GetPreferredLayout are the model): Backend::capabilities() gives a backend's own, and
// optimizer/bench/device_benchmarker.h finds them by the name the user gives a device.
class BackendCapabilities {
 public:
  virtual ~BackendCapabilities() = default;
  // The Backend::name() these answer for ("cpu", "cuda"): a Plan's device.
  virtual const char* name() const = 0;
  // True when its Conv and pool kernels run channels-last (NHWC, Note [channels-last]) as well as NCHW.
  virtual bool runs_channels_last() const = 0;
  // Workspace bytes the kernel of `node`, a step that is not a convolution, needs at the graph's shapes.
  virtual size_t step_workspace(const ir::Graph& graph, const ir::Node& node) const = 0;
  // True when its Conv may write Y over the residual input z it adds (Note [residual in place]).
  virtual bool adds_residual_in_place() const = 0;
  // True when its kernels take the GPU's fusions (optimizer/passes/passes.h, InferencePassOptions::gpu_fusions:
  // a depthwise Conv's activation in its epilogue, a Conv's bias into the FusedPointwise reading it).
  virtual bool takes_gpu_fusions() const = 0;
  // True when its memory is the host's (Backend::is_host_memory).
  virtual bool is_host_memory() const = 0;
  // True when it runs BatchNormTrain and BatchNormGrad fused with the following Relu and residual Add
  // (Note [batch norm with its activation], runtime/ops/batch_norm_train.cc): the trainer fuses them then.
  virtual bool trains_fused_batch_norm() const = 0;
  // True when its training kernels (ConvGradData/Filter, BatchNormTrain/Grad, MaxPoolGrad,
  // AveragePoolGrad) run channels-last too (Note [channels-last]): the trainer then plans the step in
  // the session's layout (`--layout`), else in NCHW.
  virtual bool trains_channels_last() const = 0;
  // What one layout Transpose costs on it, as measured there (Note [layout regions], optimizer/layout_regions.h).
  virtual TransposeCost layout_transpose_cost() const = 0;
  // True when a whole run is cheap enough that --layout auto runs each layout's plan and keeps the faster
  // measured one instead of the faster predicted (Note [the CPU's layout is measured], optimizer/plan_model.cc).
  virtual bool chooses_layout_by_running() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "cpu" or "cuda": a Plan's `device` (the capabilities' name).
  const char* name() const { return capabilities().name(); }
  // The processor plans are made for ("NVIDIA H200"); "" where plans do not depend on it (the CPU).
  virtual std::string device_name() const = 0;
  // Unsupported naming every op of `graph` without a kernel here (and what to do); OK when none.
  virtual Status check_support(const ir::Graph& graph) const = 0;
  // What this backend can do (Note [backend capabilities]); lives as long as the program.
  virtual const BackendCapabilities& capabilities() const = 0;
  // The kernel for one call (see KernelRequest). Unsupported for shapes or attributes it lacks.
  virtual Expected<std::unique_ptr<Kernel>> prepare(const KernelRequest& request) = 0;

  // Device memory of `bytes` (zero → an empty buffer); kOutOfMemory names `what` and the sizes.
  virtual Expected<std::unique_ptr<Buffer>> allocate(size_t bytes, const std::string& what) = 0;
  // True when device memory is host memory: host tensors are then used in place, without copies
  // (the capability's answer, asked here for short).
  bool is_host_memory() const { return capabilities().is_host_memory(); }
  // Bytes `allocate` can still get now (the CPU: host memory the process may use before being
  // killed; a GPU: cudaMemGetInfo's free); SIZE_MAX when the backend cannot tell. The executor
  // refuses a plan needing more before it allocates anything.
  virtual Expected<size_t> available_memory_bytes() const = 0;
  // Copies queued on stream 0; `what` names the tensor in errors.
  virtual Status copy_to_device(void* dst, const void* src, size_t bytes, const std::string& what) = 0;
  virtual Status copy_to_host(void* dst, const void* src, size_t bytes, const std::string& what) = 0;
  virtual Status copy_on_device(void* dst, const void* src, size_t bytes, const std::string& what) = 0;
  // A copy to the device beside the compute streams, for data the next run needs (the trainer's
  // next batch, Note [overlapped batch copies] in training/trainer_engine.h): queued on the backend's
  // transfer stream after `ready` (an event recorded on a compute stream: the destination is free
  // then), recording `done` there; a compute stream that waits for `done` sees the bytes. From pageable
  // host memory the CPU copies while the compute streams run. synchronize() waits for it too. A
  // backend that runs work as it is queued (the CPU) copies at once: the default.
  virtual Status copy_to_device_beside(void* dst, const void* src, size_t bytes, Event& ready, Event& done,
                                       const std::string& what) {
    (void)ready;
    (void)done;
    return copy_to_device(dst, src, bytes, what);
  }
  // OK when `p` may be read and written by kernels (device memory of this backend); else
  // InvalidArgument saying what it is instead. `what` names the buffer.
  virtual Status check_device_pointer(const void* p, const std::string& what) const = 0;

  // How many streams can run at once (1: every step in order on stream 0).
  virtual int max_streams() const = 0;
  // Makes streams 0..count-1 ready (count <= max_streams()); called at load, never while running.
  virtual Status use_streams(int count) = 0;
  virtual Expected<std::unique_ptr<Event>> create_event() = 0;
  virtual Status record(Event& event, int stream) = 0;
  // Work queued on `stream` after this waits for `event`.
  virtual Status wait(int stream, Event& event) = 0;
  // Waits for all queued work; reports an asynchronous error with `context`.
  virtual Status synchronize(const std::string& context) = 0;
  // Milliseconds between two recorded events, after synchronize().
  virtual Expected<double> elapsed_ms(const Event& start, const Event& end) const = 0;
  // The device's own handle of `stream` (CUDA: its cudaStream_t), for work queued by other libraries
  // that must be ordered after this backend's (NCCL's all-reduce, training/distributed); nullptr on
  // a backend that runs work as it is queued (the CPU).
  virtual void* native_stream(int /*stream*/) const { return nullptr; }

  // Capture, optional (Note [captured runs], runtime/executor/captured_runs.h): between begin_capture
  // and end_capture the work queued on stream 0 — and on stream 1 after it waits for an event recorded
  // on stream 0 meanwhile — is recorded, not run. A backend without it (the CPU) keeps the defaults.
  virtual bool supports_capture() const { return false; }
  virtual Status begin_capture() { return unsupported(std::string(name()) + " backend: no capture"); }
  // Ends the capture begun by begin_capture, also after queuing failed in between: the recorded work,
  // ready to replay; or why recording failed (nothing recorded ran; the backend queues eagerly again).
  virtual Expected<std::unique_ptr<CapturedWork>> end_capture() {
    return unsupported(std::string(name()) + " backend: no capture");
  }
  // Queues `work` (recorded by this backend) on stream 0.
  virtual Status replay(CapturedWork& work) {
    (void)work;
    return unsupported(std::string(name()) + " backend: no capture");
  }
};

}  // namespace ucudnn::runtime
