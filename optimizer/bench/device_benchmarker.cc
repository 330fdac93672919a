// Which benchmarker measures on a device (see device_benchmarker.h): the only
// optimizer file with `#ifdef UCUDNN_HAVE_CUDA`, around what a CUDA build adds —
// whether a GPU is here, how many and their names, the cuDNN benchmarker and the
// CUDA backend's capabilities. With the cuDNN and CPU benchmarkers, the one optimizer
// file that includes a backend's headers.
#include "optimizer/bench/device_benchmarker.h"

#ifdef UCUDNN_HAVE_CUDA
#include "optimizer/bench/cudnn_benchmarker.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_context.h"
#else
#include "runtime/cuda/cuda_capabilities.h"  // no CUDA needed
#endif
#include "runtime/backends/backends.h"
#include "runtime/cpu/cpu_backend.h"

namespace ucudnn::optimizer {

namespace {

#ifdef UCUDNN_HAVE_CUDA
const runtime::BackendCapabilities& cuda_capabilities() { return cuda::cuda_capabilities(); }
std::string gpu_name() { return cuda::gpu_name(0); }  // what the cuDNN benchmarker records too

// The cuDNN benchmarker with the CUDA context it measures on (which must outlive it).
class OwningCudnnBenchmarker final : public Benchmarker {
 public:
  explicit OwningCudnnBenchmarker(std::unique_ptr<cuda::CudaContext> ctx)
      : ctx_(std::move(ctx)), benchmarker_(make_cudnn_benchmarker(*ctx_)) {}
  ConvKernelKey device_key() const override { return benchmarker_->device_key(); }
  Expected<KernelTimings> measure(const ir::Graph& graph, const ConvKernel& kernel,
                                  const std::vector<int64_t>& sizes) override {
    return benchmarker_->measure(graph, kernel, sizes);
  }

 private:
  std::unique_ptr<cuda::CudaContext> ctx_;
  std::unique_ptr<Benchmarker> benchmarker_;
};

// On `device`, made on the calling thread (which the context makes `device` current for).
Expected<std::unique_ptr<Benchmarker>> make_gpu_benchmarker(const std::string& math_type, int device = 0) {
  const cuda::MathMode math = math_type == "fp32" ? cuda::MathMode::kFp32 : cuda::MathMode::kTf32;
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaContext> ctx, cuda::CudaContext::create(device, math));
  return std::unique_ptr<Benchmarker>(new OwningCudnnBenchmarker(std::move(ctx)));
}
int gpu_count() { return cuda::device_count(); }
std::string gpu_name(int device) { return cuda::gpu_name(device); }
#else
// The CUDA backend's answers without its kernels (runtime/cuda/cuda_capabilities.h): plans for a GPU made
// in a build without the CUDA backend give steps that are not convolutions no workspace.
const runtime::BackendCapabilities& cuda_capabilities() {
  static const cuda::CudaCapabilities capabilities(nullptr);
  return capabilities;
}
std::string gpu_name() { return ""; }
Expected<std::unique_ptr<Benchmarker>> make_gpu_benchmarker(const std::string&, int = 0) {
  return internal_error("no CUDA backend in this build to measure with");
}
int gpu_count() { return 0; }
std::string gpu_name(int) { return ""; }
#endif

}  // namespace

const runtime::BackendCapabilities* device_capabilities(const std::string& device) {
  if (device == "cpu") return &cpu::cpu_capabilities();
  if (device == "cuda") return &cuda_capabilities();
  return nullptr;
}

Expected<std::unique_ptr<runtime::Backend>> make_measuring_backend(const std::string& device,
                                                                   const std::string& math_type) {
  if (device == "cpu") return backends::make_backend(backends::DeviceKind::kCpu, backends::GpuMath::kTf32);
  if (!can_measure_on(device)) return unsupported("cannot run plans on device '" + device + "' here");
  return backends::make_backend(backends::DeviceKind::kCuda,
                                math_type == "fp32" ? backends::GpuMath::kFp32 : backends::GpuMath::kTf32);
}

bool can_measure_on(const std::string& device) {
  return device == "cpu" || (device == "cuda" && backends::cuda_available());
}

std::string measured_device_name(const std::string& device) {
  if (device == "cpu") return make_cpu_benchmarker()->device_key().device_name;
  return can_measure_on(device) ? gpu_name() : "";
}

Expected<std::unique_ptr<Benchmarker>> make_device_benchmarker(const std::string& device,
                                                               const std::string& math_type) {
  if (device == "cpu") return make_cpu_benchmarker();
  if (!can_measure_on(device))
    return unsupported("cannot measure convolutions on device '" + device + "' here (" +
                       (device == "cuda" ? "no CUDA device in this build or machine" : "not a device ucudnn knows") +
                       ")");
  return make_gpu_benchmarker(math_type);
}

Expected<std::vector<BenchmarkWorkerSpec>> make_gpu_benchmark_workers(const std::string& spec,
                                                                      const std::string& math_type) {
  UCUDNN_ASSIGN_OR_RETURN(std::vector<int> ids, select_benchmark_devices(spec, gpu_count()));
  std::vector<BenchmarkWorkerSpec> workers;
  for (int id : ids) {
    const std::string name = "GPU " + std::to_string(id);
    if (gpu_name(id) != gpu_name(ids.front()))
      return invalid_argument("--benchmark-devices " + spec + ": GPU " + std::to_string(ids.front()) + " is '" +
                              gpu_name(ids.front()) + "', " + name + " is '" + gpu_name(id) +
                              "'; benchmark on GPUs of one model (the database keys every timing by its device)");
    workers.push_back({name, [math_type, id] { return make_gpu_benchmarker(math_type, id); }});
  }
  return workers;
}

}  // namespace ucudnn::optimizer
