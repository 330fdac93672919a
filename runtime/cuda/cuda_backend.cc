// CudaBackend (see cuda_backend.h).
#include "runtime/cuda/cuda_backend.h"

#include <set>
#include <vector>

#include "runtime/cuda/cuda_capabilities.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/device_memory.h"

namespace ucudnn::cuda {

namespace {

class CudaBackend;

// One prepared call: the kernel's state, run on the context of the stream it is given.
class CudaCall final : public runtime::Kernel {
 public:
  CudaCall(const std::vector<std::unique_ptr<CudaContext>>& contexts, std::unique_ptr<KernelState> state)
      : contexts_(contexts), state_(std::move(state)) {}
  size_t workspace_bytes() const override { return state_->workspace_bytes(); }
  Status run(const runtime::KernelIo& io) override {
    Status status = state_->run(RunArgs{*contexts_[io.stream], io.src, io.dst, io.workspace, io.workspace_bytes});
    return status.is_ok() ? status : status.with_context(state_->context);
  }
  bool capturable() const override { return state_->capturable(); }

 private:
  const std::vector<std::unique_ptr<CudaContext>>& contexts_;
  std::unique_ptr<KernelState> state_;
};

class DeviceMemory final : public runtime::Buffer {
 public:
  explicit DeviceMemory(DeviceBuffer buffer) : buffer_(std::move(buffer)) {}
  void* data() const override { return buffer_.data(); }
  size_t bytes() const override { return buffer_.bytes(); }

 private:
  DeviceBuffer buffer_;
};

class CudaEvent final : public runtime::Event {
 public:
  ~CudaEvent() override {
    if (event) cudaEventDestroy(event);  // errors at teardown have nowhere to go
  }
  cudaEvent_t event = nullptr;
};

// A captured run: the graph recorded from stream 0 and its instantiation.
class CapturedGraph final : public runtime::CapturedWork {
 public:
  ~CapturedGraph() override {  // errors at teardown have nowhere to go
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

class CudaBackend final : public runtime::Backend {
 public:
  explicit CudaBackend(std::unique_ptr<CudaContext> main) { contexts_.push_back(std::move(main)); }
  ~CudaBackend() override {
    for (cudaEvent_t event : join_events_) cudaEventDestroy(event);
    if (transfer_ != nullptr) {
      cudaStreamSynchronize(transfer_);  // a copy in flight still writes into memory about to be freed
      cudaStreamDestroy(transfer_);
    }
  }

  std::string device_name() const override { return gpu_name(main().device()); }
  const runtime::BackendCapabilities& capabilities() const override { return cuda_capabilities(); }

  Status check_support(const ir::Graph& graph) const override {
    std::set<std::string> missing;
    for (const ir::Node& node : graph.nodes)
      if (cuda_kernel(node.op).prepare == nullptr) missing.insert(op_name(node.op));
    if (missing.empty()) return Status::ok();
    std::string names;
    for (const std::string& name : missing) names += (names.empty() ? "" : ", ") + name;
    return unsupported("the CUDA backend has no kernel for: " + names + " (model '" + graph.name +
                       "'; run it with --device cpu)");
  }

  Expected<std::unique_ptr<runtime::Kernel>> prepare(const runtime::KernelRequest& request) override {
    const CudaKernel& kernel = cuda_kernel(request.node.op);
    if (kernel.prepare == nullptr) return unsupported(request.node.describe() + ": no CUDA kernel");
    PrepareArgs args{main(),         request.graph,        request.node,      request.src_shapes,
                     request.dst_shapes, request.algorithm, request.accumulate};
    UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<KernelState> state, kernel.prepare(args));
    state->context = args.describe();
    return std::unique_ptr<runtime::Kernel>(new CudaCall(contexts_, std::move(state)));
  }

  Expected<std::unique_ptr<runtime::Buffer>> allocate(size_t bytes, const std::string& what) override {
    UCUDNN_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::allocate(bytes, what));
    return std::unique_ptr<runtime::Buffer>(new DeviceMemory(std::move(buffer)));
  }
  Expected<size_t> available_memory_bytes() const override {
    size_t free_bytes = 0, total_bytes = 0;
    UCUDNN_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes), "asking GPU " + std::to_string(main().device()) +
                                                                     " for its free memory");
    return free_bytes;
  }
  Status copy_to_device(void* dst, const void* src, size_t bytes, const std::string& what) override {
    UCUDNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, main().stream()),
                      "copying " + what + " to the GPU");
    return Status::ok();
  }
  Status copy_to_host(void* dst, const void* src, size_t bytes, const std::string& what) override {
    UCUDNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, main().stream()),
                      "copying " + what + " from the GPU");
    return Status::ok();
  }
  Status copy_on_device(void* dst, const void* src, size_t bytes, const std::string& what) override {
    UCUDNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, main().stream()),
                      "copying " + what + " on the GPU");
    return Status::ok();
  }
  Status copy_to_device_beside(void* dst, const void* src, size_t bytes, runtime::Event& ready, runtime::Event& done,
                               const std::string& what) override {
    if (transfer_ == nullptr) {  // on the backend's GPU; non-blocking: never ordered with the legacy default stream
      UCUDNN_CUDA_CHECK(cudaSetDevice(main().device()), "selecting GPU " + std::to_string(main().device()));
      UCUDNN_CUDA_CHECK(cudaStreamCreateWithFlags(&transfer_, cudaStreamNonBlocking), "creating the transfer stream");
    }
    UCUDNN_CUDA_CHECK(cudaStreamWaitEvent(transfer_, static_cast<CudaEvent&>(ready).event, 0),
                      "ordering the copy of " + what + " after the run that frees its destination");
    UCUDNN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, transfer_),
                      "copying " + what + " to the GPU beside the run");
    UCUDNN_CUDA_CHECK(cudaEventRecord(static_cast<CudaEvent&>(done).event, transfer_),
                      "recording the end of the copy of " + what);
    return Status::ok();
  }
  Status check_device_pointer(const void* p, const std::string& what) const override {
    // A host pointer would fail later as an illegal address that poisons the whole context.
    cudaPointerAttributes attributes{};
    const cudaError_t error = cudaPointerGetAttributes(&attributes, p);
    if (error != cudaSuccess) {
      cudaGetLastError();  // not sticky; clear it so the next call does not report it
      return invalid_argument(what + " is not a pointer CUDA knows (" + cudaGetErrorName(error) + ")");
    }
    if (attributes.type == cudaMemoryTypeUnregistered)
      return invalid_argument(what + " points to host memory, not GPU memory");
    if (attributes.type == cudaMemoryTypeDevice && attributes.device != main().device())
      return invalid_argument(what + " is on GPU " + std::to_string(attributes.device) + ", the session runs on GPU " +
                              std::to_string(main().device()));
    return Status::ok();
  }

  int max_streams() const override { return 2; }
  Status use_streams(int count) override {
    if (count < 1 || count > max_streams())
      return internal_error("the CUDA backend runs 1 or 2 streams, asked for " + std::to_string(count));
    while (static_cast<int>(contexts_.size()) < count) {
      UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<CudaContext> ctx, CudaContext::create(main().device(), main().math()));
      contexts_.push_back(std::move(ctx));
    }
    return give_cublas_workspaces();
  }
  Expected<std::unique_ptr<runtime::Event>> create_event() override {
    auto event = std::make_unique<CudaEvent>();
    UCUDNN_CUDA_CHECK(cudaEventCreate(&event->event), "creating a CUDA event");
    return std::unique_ptr<runtime::Event>(std::move(event));
  }
  Status record(runtime::Event& event, int stream) override {
    UCUDNN_CUDA_CHECK(cudaEventRecord(static_cast<CudaEvent&>(event).event, contexts_[stream]->stream()),
                      "recording an event on stream " + std::to_string(stream));
    return Status::ok();
  }
  Status wait(int stream, runtime::Event& event) override {
    UCUDNN_CUDA_CHECK(cudaStreamWaitEvent(contexts_[stream]->stream(), static_cast<CudaEvent&>(event).event, 0),
                      "making stream " + std::to_string(stream) + " wait for an event");
    return Status::ok();
  }
  Status synchronize(const std::string& context) override {
    Status status = Status::ok();
    for (auto it = contexts_.rbegin(); it != contexts_.rend(); ++it) {  // the side stream first
      Status s = (*it)->synchronize(context);
      if (status.is_ok()) status = s;
    }
    if (transfer_ != nullptr) {
      const cudaError_t error = cudaStreamSynchronize(transfer_);
      if (error != cudaSuccess && status.is_ok())
        status = cuda_error(error, "cudaStreamSynchronize", context + " (the transfer stream)");
    }
    return status;
  }
  void* native_stream(int stream) const override { return contexts_[stream]->stream(); }
  Expected<double> elapsed_ms(const runtime::Event& start, const runtime::Event& end) const override {
    float ms = 0;
    UCUDNN_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<const CudaEvent&>(start).event,
                                           static_cast<const CudaEvent&>(end).event),
                      "reading a profiling event");
    return static_cast<double>(ms);
  }

  // Note [capture on the CUDA backend]: thread-local capture mode, so work other threads queue (other
  // sessions) is not disturbed while cuDNN and cuBLAS calls on this thread that may not be captured
  // (an allocation, a sync) fail the capture instead of being recorded wrongly. The side stream joins
  // through the executor's events. cuBLAS works in the workspace each context is given (Note [cuBLAS
  // workspace]), so a captured GEMM neither allocates nor differs from an eager one; AutoFreeOnLaunch
  // would still let a graph holding a library's own allocation launch again. The first run is eager
  // (runtime/executor/captured_runs.h): lazy initialisation (cuDNN's execution plans, module loading)
  // happens outside any capture.
  bool supports_capture() const override { return CUBLAS_VERSION >= 120200; }
  Status begin_capture() override {
    while (join_events_.size() + 1 < contexts_.size()) {
      cudaEvent_t event = nullptr;
      UCUDNN_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "creating a CUDA event");
      join_events_.push_back(event);
    }
    UCUDNN_CUDA_CHECK(cudaStreamBeginCapture(main().stream(), cudaStreamCaptureModeThreadLocal),
                      "starting to capture a run into a CUDA graph");
    return Status::ok();
  }
  Expected<std::unique_ptr<runtime::CapturedWork>> end_capture() override {
    Status joined = join_side_streams();
    auto work = std::make_unique<CapturedGraph>();
    const cudaError_t ended = cudaStreamEndCapture(main().stream(), &work->graph);
    if (ended != cudaSuccess || work->graph == nullptr) {
      cudaGetLastError();  // the capture's error is not the next call's
      if (!joined.is_ok()) return joined;
      return cuda_error(ended == cudaSuccess ? cudaErrorStreamCaptureInvalidated : ended, "cudaStreamEndCapture",
                        "capturing a run into a CUDA graph");
    }
    UCUDNN_RETURN_IF_ERROR(joined);
    const cudaError_t made = cudaGraphInstantiate(&work->exec, work->graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
    if (made != cudaSuccess) {
      cudaGetLastError();
      work->exec = nullptr;
      return cuda_error(made, "cudaGraphInstantiate", "instantiating a captured run");
    }
    return std::unique_ptr<runtime::CapturedWork>(std::move(work));
  }
  Status replay(runtime::CapturedWork& work) override {
    UCUDNN_CUDA_CHECK(cudaGraphLaunch(static_cast<CapturedGraph&>(work).exec, main().stream()),
                      "launching a captured run (CUDA graph)");
    return Status::ok();
  }

 private:
  // Note [cuBLAS workspace]: a handle without a workspace of ours uses cuBLAS's default pool, and while
  // a stream is captured, memory it takes with cudaMallocAsync inside the graph. Each context gets its
  // own buffer of the size cuBLAS recommends (32 MiB from Hopper on, else 4 MiB), at load, so eager and
  // captured GEMMs run alike. (cublasSetStream would reset it: contexts bind their stream once, at creation.)
  Status give_cublas_workspaces() {
    while (cublas_workspaces_.size() < contexts_.size()) {
      const CudaContext& ctx = *contexts_[cublas_workspaces_.size()];
      int major = 0;
      UCUDNN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx.device()),
                        "reading the GPU's compute capability");
      const size_t bytes = size_t{major >= 9 ? 32u : 4u} << 20;
      UCUDNN_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::allocate(bytes, "cuBLAS workspace"));
      UCUDNN_CUBLAS_CHECK(cublasSetWorkspace(ctx.cublas(), buffer.data(), bytes), "giving cuBLAS its workspace");
      cublas_workspaces_.push_back(std::move(buffer));
    }
    return Status::ok();
  }

  // Before a capture ends: a side stream still in it (queuing failed between its fork and its join)
  // joins stream 0, as the capture cannot end with a stream left outside.
  Status join_side_streams() {
    Status status = Status::ok();
    for (size_t k = 1; k < contexts_.size(); ++k) {
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(contexts_[k]->stream(), &capture) != cudaSuccess ||
          capture != cudaStreamCaptureStatusActive)
        continue;
      const cudaError_t recorded = cudaEventRecord(join_events_[k - 1], contexts_[k]->stream());
      const cudaError_t waited = recorded != cudaSuccess
                                     ? recorded
                                     : cudaStreamWaitEvent(main().stream(), join_events_[k - 1], 0);
      if (waited != cudaSuccess && status.is_ok())
        status = cuda_error(waited, "cudaStreamWaitEvent", "joining stream " + std::to_string(k) + " to the capture");
    }
    return status;
  }

  const CudaContext& main() const { return *contexts_.front(); }
  CudaContext& main() { return *contexts_.front(); }

  std::vector<DeviceBuffer> cublas_workspaces_;          // per context (Note [cuBLAS workspace]); freed last
  std::vector<std::unique_ptr<CudaContext>> contexts_;  // per stream; [0] main
  std::vector<cudaEvent_t> join_events_;                // per side stream: its join at the end of a capture
  cudaStream_t transfer_ = nullptr;  // copy_to_device_beside's stream, made on first use
};

}  // namespace

const runtime::BackendCapabilities& cuda_capabilities() {
  static const CudaCapabilities capabilities(cuda_step_workspace);
  return capabilities;
}

std::string gpu_name(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return "unknown GPU";
  }
  return prop.name;
}

Expected<std::unique_ptr<runtime::Backend>> make_cuda_backend(int device, MathMode math) {
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<CudaContext> ctx, CudaContext::create(device, math));
  std::unique_ptr<runtime::Backend> backend(new CudaBackend(std::move(ctx)));
  UCUDNN_RETURN_IF_ERROR(backend->use_streams(1));  // the main context's cuBLAS workspace
  return backend;
}

}  // namespace ucudnn::cuda
