// The backends a test runs on, and running a graph on one of them through the
// one runtime::Executor with a plan built here by hand — the runtime's own
// road (runtime/executor/executor.h) without the optimizer.
//
// Backends: always the CPU; in a build with the CUDA backend (UCUDNN_HAVE_CUDA)
// the GPU in strict FP32 and with TF32 allowed, each with its tolerances. A
// backend absent from this machine (no GPU) is not an error: `shared_backend`
// says why, and the test reports a skip with that reason.
//
// Plans: one step per node, in order; a Conv step may run as given
// micro-batches or with a given algorithm; each step's workspace slice is what
// the backend's `prepare` answers for its calls (a pure query); the arena comes
// from optimizer::plan_activation_memory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/backend/backend.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/plan/plan.h"
#include "runtime/ir/graph.h"
#include "tests/support/tensor_checks.h"

namespace ucudnn_test {

// What a CUDA case reports where there is no GPU.
inline constexpr const char* kNoCudaDevice = "no CUDA device present: GPU cases run on the device machine";

struct BackendConfig {
  enum class Kind { kCpu, kCuda };
  std::string name;  // "cpu", "cuda_fp32", "cuda_tf32": part of test names
  Kind kind = Kind::kCpu;
  bool tf32 = false;  // CUDA: TF32 tensor cores allowed for convolutions and matrix products
  // atol per √(reduction length) and rtol, for ops computed in full FP32 ...
  Tolerance tolerance;
  // ... and for the sums of products (Conv, Gemm, MatMul), which TF32 rounds.
  Tolerance product_tolerance;
  // The CPU runs every case: there, an Unsupported case is a failure, not a skip.
  bool runs_every_case = false;
};

// Every backend this build has: "cpu", then (with UCUDNN_HAVE_CUDA) "cuda_fp32" and "cuda_tf32".
const std::vector<BackendConfig>& backend_configs();
// The config named `name`; a test failure (and the CPU's) when there is none.
const BackendConfig& backend_config(const std::string& name);

// A backend of a config, made once per process and shared by every test (a CUDA
// context takes long to make); never destroyed, so no GPU teardown at exit.
struct SharedBackend {
  ucudnn::runtime::Backend* backend = nullptr;  // set when ready
  std::string skip_reason;                      // set when absent here (kNoCudaDevice)
  ucudnn::Status error;                         // set when present but it failed to start
};
SharedBackend shared_backend(const BackendConfig& config);

// A backend that is `inner` in every call; tests derive from it to change one (the poisoning in
// run_on_backend, a kernel that forgets its output, ...).
class ForwardingBackend : public ucudnn::runtime::Backend {
 public:
  explicit ForwardingBackend(ucudnn::runtime::Backend& inner) : inner_(inner) {}

  std::string device_name() const override { return inner_.device_name(); }
  ucudnn::Status check_support(const ucudnn::ir::Graph& graph) const override { return inner_.check_support(graph); }
  const ucudnn::runtime::BackendCapabilities& capabilities() const override { return inner_.capabilities(); }
  ucudnn::Expected<std::unique_ptr<ucudnn::runtime::Kernel>> prepare(
      const ucudnn::runtime::KernelRequest& request) override {
    return inner_.prepare(request);
  }
  ucudnn::Expected<std::unique_ptr<ucudnn::runtime::Buffer>> allocate(size_t bytes, const std::string& what) override {
    return inner_.allocate(bytes, what);
  }
  ucudnn::Expected<size_t> available_memory_bytes() const override { return inner_.available_memory_bytes(); }
  ucudnn::Status copy_to_device(void* dst, const void* src, size_t bytes, const std::string& what) override {
    return inner_.copy_to_device(dst, src, bytes, what);
  }
  ucudnn::Status copy_to_host(void* dst, const void* src, size_t bytes, const std::string& what) override {
    return inner_.copy_to_host(dst, src, bytes, what);
  }
  ucudnn::Status copy_on_device(void* dst, const void* src, size_t bytes, const std::string& what) override {
    return inner_.copy_on_device(dst, src, bytes, what);
  }
  ucudnn::Status check_device_pointer(const void* p, const std::string& what) const override {
    return inner_.check_device_pointer(p, what);
  }
  int max_streams() const override { return inner_.max_streams(); }
  ucudnn::Status use_streams(int count) override { return inner_.use_streams(count); }
  ucudnn::Expected<std::unique_ptr<ucudnn::runtime::Event>> create_event() override { return inner_.create_event(); }
  ucudnn::Status record(ucudnn::runtime::Event& event, int stream) override { return inner_.record(event, stream); }
  ucudnn::Status wait(int stream, ucudnn::runtime::Event& event) override { return inner_.wait(stream, event); }
  ucudnn::Status synchronize(const std::string& context) override { return inner_.synchronize(context); }
  ucudnn::Expected<double> elapsed_ms(const ucudnn::runtime::Event& start,
                                      const ucudnn::runtime::Event& end) const override {
    return inner_.elapsed_ms(start, end);
  }

 protected:
  ucudnn::runtime::Backend& inner_;
};

// How Conv steps run.
struct RunOptions {
  // Every Conv step runs as these micro-batches (sizes summing to its batch; each with
  // its own algorithm); empty: one call on the whole batch.
  std::vector<ucudnn::runtime::MicroBatch> micro_batches;
  // Without micro-batches: every Conv step's algorithm (the backend's id; -1 = its default).
  int conv_algorithm = -1;
};

// One step per node in order on `backend`'s device, no micro-batches, no workspace; the arena planned.
ucudnn::runtime::Plan undivided_plan(const ucudnn::runtime::Backend& backend, const ucudnn::ir::Graph& graph);
// undivided_plan with `options` applied to the Conv steps and every step's workspace slice
// from `prepare` (slices one after another in the pool). Prepare's errors; Unsupported when a
// kernel answers SIZE_MAX bytes (the CPU's "this algorithm does not apply").
ucudnn::Expected<ucudnn::runtime::Plan> make_plan(ucudnn::runtime::Backend& backend, const ucudnn::ir::Graph& graph,
                                                  const RunOptions& options = {});
// make_plan, then runs `graph` on `inputs` (graph.inputs' order) through runtime::Executor over
// `backend` and returns the outputs. Every buffer the executor allocates is first filled with
// 0xFF bytes (NaN as float): an output element no kernel writes cannot pass for a result.
ucudnn::Expected<std::vector<ucudnn::Tensor>> run_on_backend(ucudnn::runtime::Backend& backend,
                                                             const ucudnn::ir::Graph& graph,
                                                             const std::vector<ucudnn::Tensor>& inputs,
                                                             const RunOptions& options = {});

// The plan tests run a graph on the CPU with: make_plan on the CPU backend, every step
// whole with its kernel's default algorithm (a test failure, and an empty plan, if that fails).
ucudnn::runtime::Plan whole_steps_cpu_plan(const ucudnn::ir::Graph& graph);

}  // namespace ucudnn_test
