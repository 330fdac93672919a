// CpuBackend (see cpu_backend.h).
#include "runtime/cpu/cpu_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>

#include <sys/mman.h>

#include "runtime/core/bytes.h"
#include "runtime/core/tensor.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/host_memory.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"

namespace ucudnn::cpu {

namespace {

// Note [huge pages]: the arena, the weights and the workspace pool are allocated once per session and
// swept by every run; at batch 16 a run streams hundreds of MiB through them, and with 4 KiB pages
// each new page costs a TLB miss. Buffers of 2 MiB or more therefore start on a 2 MiB boundary and
// their whole 2 MiB pages are marked MADV_HUGEPAGE, which Linux honours where transparent huge pages
// are "always" or "madvise" (a common default) and ignores where they are "never"; the tail past the
// last whole page stays in small pages, so no buffer holds more memory than it asks for. Where the
// kernel's defrag setting is "madvise" the first touch of a page may wait for memory to be compacted:
// once, at the first run. On the device host ("madvise"), batch 16 took 0.87× the time without them for
// MobileNetV3-L, 0.91× for EfficientNet-B1 and 0.85× for ResNet-18 (medians of three alternating
// rounds; ResNet-50's rounds went both ways; docs/history/PERFORMANCE-2026-12.md, issue 15, eighth part).
constexpr size_t kHugePageBytes = size_t{2} << 20;

using runtime::KernelIo;
using runtime::TensorRef;

// One call of a CPU kernel: the table's function, its algorithm and workspace.
class CpuCall final : public runtime::Kernel {
 public:
  // session_threads: run on the session's thread count (use_session_threads); off for kPlain calls, which leave
  // the calling thread's OpenMP settings as they are (the importer's constant folding).
  CpuCall(const ir::Node& node, const CpuKernel& kernel, int algorithm, bool accumulate, size_t workspace,
          bool session_threads)
      : node_(node), kernel_(kernel), algorithm_(algorithm), accumulate_(accumulate), workspace_(workspace),
        session_threads_(session_threads) {}

  size_t workspace_bytes() const override { return workspace_; }

  Status run(const KernelIo& io) override {
    if (session_threads_) use_session_threads();
    update_views(io.src, &src_, &src_ptrs_);
    update_views(io.dst, &dst_, &dst_ptrs_);
    return kernel_.run(
        KernelArgs{node_, src_ptrs_, dst_ptrs_, io.workspace, io.workspace_bytes, algorithm_, accumulate_});
  }

 private:
  // Host views of this run's memory, rebuilt only where a pointer changed (the executor points
  // inputs elsewhere for every run's input tensors, Note [host runs in place], and outputs for
  // run_bound's buffers); nullptr for an absent input.
  template <typename Pointer>
  static void update_views(const std::vector<TensorRef>& refs, std::vector<Tensor>* views,
                           std::vector<Pointer>* pointers) {
    if (views->size() != refs.size()) {
      views->assign(refs.size(), Tensor());
      pointers->assign(refs.size(), nullptr);
    }
    for (size_t i = 0; i < refs.size(); ++i) {
      if (refs[i].dtype == DType::kUndefined) continue;  // an absent optional input
      Tensor& view = (*views)[i];
      if ((*pointers)[i] == nullptr || view.raw() != refs[i].data) {
        view = Tensor::view(refs[i].dtype, refs[i].shape, refs[i].data);
        (*pointers)[i] = &view;
      }
    }
  }

  const ir::Node& node_;
  const CpuKernel& kernel_;
  int algorithm_;
  bool accumulate_;
  size_t workspace_;
  bool session_threads_;
  std::vector<Tensor> src_, dst_;
  std::vector<const Tensor*> src_ptrs_;
  std::vector<Tensor*> dst_ptrs_;
};

// Host memory, 64-byte aligned (2 MiB from 2 MiB on: Note [huge pages]), freed with the buffer.
class HostBuffer final : public runtime::Buffer {
 public:
  HostBuffer(void* data, size_t bytes) : data_(data), bytes_(bytes) {}
  ~HostBuffer() override { std::free(data_); }
  void* data() const override { return data_; }
  size_t bytes() const override { return bytes_; }

 private:
  void* data_;
  size_t bytes_;
};

// memcpy over the session's threads: one core copies a batch of 16 images (9.6 MB) in about a
// millisecond, a few per cent of a CNN's run. Chunks of 1 MiB; small copies stay on
// the calling thread.
void threaded_copy(void* dst, const void* src, size_t bytes) {
  constexpr size_t kChunk = size_t{1} << 20;
  if (bytes < 2 * kChunk) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const auto chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  use_session_threads();  // the first thing a fresh calling thread does may be this copy
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < chunks; ++i) {
    const size_t offset = static_cast<size_t>(i) * kChunk;
    std::memcpy(static_cast<char*>(dst) + offset, static_cast<const char*>(src) + offset,
                std::min(kChunk, bytes - offset));
  }
}

// The CPU runs everything in order: an event is the moment it was recorded.
class TimePoint final : public runtime::Event {
 public:
  std::chrono::steady_clock::time_point at;
};

// The ops whose CPU kernels read a channels-last node's NHWC tensors (Note [channels-last]); a Conv
// does through oneDNN (its kernel says so when the build lacks it).
bool runs_channels_last(OpKind op) {
  return op == OpKind::kConv || op == OpKind::kMaxPool || op == OpKind::kAveragePool ||
         op == OpKind::kGlobalAveragePool || op == OpKind::kGlobalMaxPool;
}

class CpuCapabilities final : public runtime::BackendCapabilities {
 public:
  const char* name() const override { return "cpu"; }
  bool runs_channels_last() const override { return cpu_runs_channels_last(); }  // with oneDNN only
  size_t step_workspace(const ir::Graph& graph, const ir::Node& node) const override {
    return cpu_step_workspace(graph, node, 0, -1);
  }
  // oneDNN's sum post-op, Winograd's output transform and the Eigen algorithms add into Y.
  bool adds_residual_in_place() const override { return true; }
  // A CPU Conv adds its bias and any activation in its own epilogue (passes.h: fuse_any_conv_activation).
  bool takes_gpu_fusions() const override { return false; }
  bool trains_fused_batch_norm() const override { return true; }
  bool trains_channels_last() const override { return false; }  // batch norm and pool gradients run NCHW
  bool is_host_memory() const override { return true; }
  // A CPU core copies ~5 GB/s with a transposed stride; an OpenMP region costs tens of µs.
  runtime::TransposeCost layout_transpose_cost() const override { return {2.0 / 5.0e6, 0.02}; }
  bool chooses_layout_by_running() const override { return true; }
};

class CpuBackend final : public runtime::Backend {
 public:
  explicit CpuBackend(CpuCalls calls) : calls_(calls) {}

  std::string device_name() const override { return ""; }
  const runtime::BackendCapabilities& capabilities() const override { return cpu_capabilities(); }

  Status check_support(const ir::Graph& graph) const override {
    std::set<std::string> missing;
    for (const ir::Node& node : graph.nodes) {
      if (ir::is_channels_last(node) && !runs_channels_last(node.op)) return channels_last_unsupported(node);
      if (cpu_kernel(node.op).run == nullptr) missing.insert(op_name(node.op));
    }
    if (missing.empty()) return Status::ok();
    std::string names;
    for (const std::string& name : missing) names += (names.empty() ? "" : ", ") + name;
    return unsupported("the CPU backend has no kernel for: " + names + " (model '" + graph.name + "')");
  }

  Expected<std::unique_ptr<runtime::Kernel>> prepare(const runtime::KernelRequest& request) override {
    const CpuKernel& kernel = cpu_kernel(request.node.op);
    if (kernel.run == nullptr) return unsupported(request.node.describe() + ": no CPU kernel");
    const int count = cpu_algorithm_count(request.node.op);
    if (request.algorithm < -1 || request.algorithm >= count)
      return invalid_argument(request.node.describe() + ": no CPU algorithm " + std::to_string(request.algorithm) +
                              (count > 0 ? " (this op has 0 to " + std::to_string(count - 1) + ", -1 is the default)"
                                         : " (only -1, the default, for this op)"));
    if (kernel.prepare != nullptr && calls_ == CpuCalls::kPrepared) {
      UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Kernel> prepared, kernel.prepare(request));
      if (prepared != nullptr) return prepared;  // else the plain call of `run`
    }
    const size_t workspace = kernel.workspace_bytes == nullptr
                                 ? 0
                                 : kernel.workspace_bytes(request.node, request.src_shapes, request.algorithm);
    return std::unique_ptr<runtime::Kernel>(
        new CpuCall(request.node, kernel, request.algorithm, request.accumulate, workspace,
                    calls_ == CpuCalls::kPrepared));
  }

  Expected<std::unique_ptr<runtime::Buffer>> allocate(size_t bytes, const std::string& what) override {
    if (bytes == 0) return std::unique_ptr<runtime::Buffer>(new HostBuffer(nullptr, 0));
    // Note [huge pages]: buffers of a huge page or more start on one and ask the kernel for them.
    const bool huge = bytes >= kHugePageBytes;
    const size_t alignment = huge ? kHugePageBytes : 64;
    size_t rounded = 0;
    void* data = checked_align_up(bytes, alignment, &rounded) ? std::aligned_alloc(alignment, rounded) : nullptr;
    if (data == nullptr)
      return out_of_memory("cannot allocate the " + what + " (" + format_bytes(bytes) + ") in host memory");
    if (huge) madvise(data, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);  // a hint, may be refused
    return std::unique_ptr<runtime::Buffer>(new HostBuffer(data, bytes));
  }
  Expected<size_t> available_memory_bytes() const override { return available_host_memory(); }
  Status copy_to_device(void* dst, const void* src, size_t bytes, const std::string&) override {
    threaded_copy(dst, src, bytes);
    return Status::ok();
  }
  Status copy_to_host(void* dst, const void* src, size_t bytes, const std::string&) override {
    threaded_copy(dst, src, bytes);
    return Status::ok();
  }
  Status copy_on_device(void* dst, const void* src, size_t bytes, const std::string&) override {
    std::memmove(dst, src, bytes);
    return Status::ok();
  }
  // The CPU's device memory is host memory: any buffer the caller owns will do (the trainer
  // binds its own). Session::run_on_device refuses CPU sessions before it gets here.
  Status check_device_pointer(const void*, const std::string&) const override { return Status::ok(); }

  int max_streams() const override { return 1; }
  Status use_streams(int count) override {
    if (count == 1) return Status::ok();
    return internal_error("the CPU backend runs one stream, asked for " + std::to_string(count));
  }
  Expected<std::unique_ptr<runtime::Event>> create_event() override {
    return std::unique_ptr<runtime::Event>(new TimePoint());
  }
  Status record(runtime::Event& event, int) override {
    static_cast<TimePoint&>(event).at = std::chrono::steady_clock::now();
    return Status::ok();
  }
  Status wait(int, runtime::Event&) override { return Status::ok(); }
  Status synchronize(const std::string&) override { return Status::ok(); }
  Expected<double> elapsed_ms(const runtime::Event& start, const runtime::Event& end) const override {
    return std::chrono::duration<double, std::milli>(static_cast<const TimePoint&>(end).at -
                                                     static_cast<const TimePoint&>(start).at)
        .count();
  }

 private:
  CpuCalls calls_;
};

}  // namespace

std::unique_ptr<runtime::Backend> make_cpu_backend(CpuCalls calls) { return std::make_unique<CpuBackend>(calls); }

const runtime::BackendCapabilities& cpu_capabilities() {
  static const CpuCapabilities capabilities;
  return capabilities;
}

size_t cpu_step_workspace(const ir::Graph& graph, const ir::Node& node, int64_t micro_batch, int algorithm) {
  const CpuKernel& kernel = cpu_kernel(node.op);
  if (kernel.workspace_bytes == nullptr) return 0;
  const runtime::KernelRequest request = runtime::kernel_request(graph, node, micro_batch, algorithm);
  return kernel.workspace_bytes(node, request.src_shapes, algorithm);
}

}  // namespace ucudnn::cpu
