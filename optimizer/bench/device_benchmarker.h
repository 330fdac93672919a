// The benchmarker that measures on a device in this process: the CPU's for
// "cpu", cuDNN's on GPU 0 for "cuda". The one optimizer file that knows whether
// this build has the CUDA backend (device_benchmarker.cc) and where a device's
// name finds its capabilities: the rest of the optimizer asks those (Note
// [backend capabilities], runtime/backend/backend.h). plan_model.cc falls
// back to the stored database (stored_benchmarker.h) where nothing can measure.
#pragma once

#include <memory>
#include <string>

#include "optimizer/bench/benchmarker.h"
#include "optimizer/bench/sharded_benchmarking.h"
#include "runtime/backend/backend.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn::optimizer {

// What the backend of `device` ("cpu", "cuda") can do, found without touching a device; on "cuda" in
// a build without the CUDA backend the same answers with no step workspace (0). nullptr for another name.
const runtime::BackendCapabilities* device_capabilities(const std::string& device);

// A backend of `device` to run whole plans on while planning (Note [the CPU's layout is measured],
// plan_model.cc); Unsupported where can_measure_on(device) does not hold. `math_type` as below.
Expected<std::unique_ptr<runtime::Backend>> make_measuring_backend(const std::string& device,
                                                                   const std::string& math_type);

// True for "cpu"; for "cuda" when this build has the CUDA backend and a GPU is present.
bool can_measure_on(const std::string& device);

// The processor name the benchmarker for `device` records (ConvKernelKey::device_name,
// then Plan::device_name), found without making one (no CUDA context); "" when
// can_measure_on(device) does not hold.
std::string measured_device_name(const std::string& device);

// The benchmarker for `device` (can_measure_on must hold); `math_type` is the
// GPU's "tf32" (TF32 allowed) or "fp32" (strict), ignored on the CPU (always fp32).
// The cuDNN benchmarker measures with whatever workspace cudaMalloc gives
// (CudnnBenchmarkOptions::max_workspace_bytes = 0): the stored timings serve
// every limit, an unlimited one included.
Expected<std::unique_ptr<Benchmarker>> make_device_benchmarker(const std::string& device, const std::string& math_type);

// One worker per GPU that `spec` selects ("all", "0,1": select_benchmark_devices), each
// making the cuDNN benchmarker of its GPU (its own CUDA context, stream and cuDNN handle)
// on its own thread. GPUs whose names differ are refused here, before any is touched:
// "--benchmark-devices 0,1: GPU 0 is 'NVIDIA H200', GPU 1 is '…'; benchmark on GPUs of one model".
Expected<std::vector<BenchmarkWorkerSpec>> make_gpu_benchmark_workers(const std::string& spec,
                                                                      const std::string& math_type);

}  // namespace ucudnn::optimizer
