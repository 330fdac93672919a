// The public option types' names and check_options (include/ucudnn/ucudnn.h):
// the one validation of SessionOptions, which Session::load and plan() begin with.
#include <cstring>
#include <string>

#include "optimizer/bench/device_benchmarker.h"
#include "optimizer/bench/sharded_benchmarking.h"
#include "runtime/core/bytes.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

namespace {
constexpr const char* kUnknown = "?";  // what a name function returns for a value outside its enum

template <typename Enum>
Status check_enum(const char* option, Enum value, const char* (*name)(Enum)) {
  if (std::strcmp(name(value), kUnknown) != 0) return Status::ok();
  return invalid_argument(std::string(option) + " holds " + std::to_string(static_cast<int>(value)) +
                          ", which is none of its enum's values");
}
}  // namespace

const char* device_name(Device device) {
  switch (device) {
    case Device::kCpu: return "cpu";
    case Device::kCuda: return "cuda";
  }
  return kUnknown;
}

const char* policy_name(Policy policy) {
  switch (policy) {
    case Policy::kUndivided: return "undivided";
    case Policy::kWr: return "wr";
    case Policy::kWd: return "wd";
  }
  return kUnknown;
}

const char* batch_sizes_name(BatchSizes sizes) {
  switch (sizes) {
    case BatchSizes::kPowerOfTwo: return "powerOfTwo";
    case BatchSizes::kAll: return "all";
    case BatchSizes::kUndivided: return "undivided";
  }
  return kUnknown;
}

std::string MemoryStats::workspace_text() const {
  if (workspace_bytes > 0 || largest_workspace_bytes == 0) return format_bytes(workspace_bytes);
  return "in the arena (largest " + format_bytes(largest_workspace_bytes) + ")";
}

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::kAuto: return "auto";
    case Layout::kNchw: return "nchw";
    case Layout::kNhwc: return "nhwc";
  }
  return kUnknown;
}

const char* math_name(Math math) {
  switch (math) {
    case Math::kTf32: return "tf32";
    case Math::kFp32: return "fp32";
  }
  return kUnknown;
}

const char* cuda_graph_name(CudaGraph mode) {
  switch (mode) {
    case CudaGraph::kAuto: return "auto";
    case CudaGraph::kOn: return "on";
    case CudaGraph::kOff: return "off";
  }
  return kUnknown;
}

Status check_options(const SessionOptions& options) {
  UCUDNN_RETURN_IF_ERROR(check_enum("device", options.device, device_name));
  UCUDNN_RETURN_IF_ERROR(check_enum("math", options.math, math_name));
  UCUDNN_RETURN_IF_ERROR(check_enum("layout", options.layout, layout_name));
  UCUDNN_RETURN_IF_ERROR(check_enum("policy", options.policy, policy_name));
  UCUDNN_RETURN_IF_ERROR(check_enum("batch_sizes", options.batch_sizes, batch_sizes_name));
  UCUDNN_RETURN_IF_ERROR(check_enum("cuda_graph", options.cuda_graph, cuda_graph_name));
  if (options.batch < 1) return invalid_argument("batch must be at least 1, got " + std::to_string(options.batch));
  if (options.threads < 0)
    return invalid_argument("threads must be 0 (all cores) or positive, got " + std::to_string(options.threads));
  if (options.pin_threads && options.device != Device::kCpu)
    return invalid_argument(std::string("pin_threads pins the CPU's threads; this session runs on the ") +
                            device_name(options.device) + " (run on the CPU, --device cpu, or leave pinning off)");
  if (options.batch_groups < 0)
    return invalid_argument("batch_groups must be 0 (auto), 1 (none) or more, got " +
                            std::to_string(options.batch_groups));
  if (options.batch_groups > 1 && options.device != Device::kCpu)
    return invalid_argument("batch_groups " + std::to_string(options.batch_groups) + " cuts the batch over the " +
                            "CPU's threads; this session runs on the " + device_name(options.device) +
                            " (leave it 0 or 1)");
  if (options.batch_groups > 1 && !options.plan_path.empty())
    return invalid_argument("batch_groups " + std::to_string(options.batch_groups) + " plans one group of the "
                            "batch at load; a saved plan ('" + options.plan_path + "') runs the whole batch "
                            "(leave one of them out)");
  if (options.streams != 1 && options.streams != 2)
    return invalid_argument("streams must be 1 or 2, got " + std::to_string(options.streams));
  // Note [backend capabilities]: only the CPU without oneDNN answers no.
  if (options.layout == Layout::kNhwc &&
      !optimizer::device_capabilities(device_name(options.device))->runs_channels_last())
    return invalid_argument("layout nhwc on the CPU runs its convolutions through oneDNN, which this build lacks "
                            "(install libdnnl-dev and rebuild, or use layout nchw or auto)");
  if (options.cuda_graph == CudaGraph::kOn && options.device != Device::kCuda)
    return invalid_argument("cuda_graph on needs device cuda (CUDA graphs); this session runs on the CPU "
                            "(use cuda_graph auto or off)");
  if (options.share_workspace && options.policy != Policy::kWd)
    return invalid_argument(std::string("share_workspace applies to policy wd (one budget divided among the "
                                        "convolutions), not to policy ") +
                            policy_name(options.policy));
  if (!options.benchmark_devices.empty()) {
    if (options.device != Device::kCuda)
      return invalid_argument("benchmark_devices '" + options.benchmark_devices +
                              "' shards benchmarking over GPUs; this session runs on the CPU (leave it empty)");
    UCUDNN_RETURN_IF_ERROR(optimizer::parse_benchmark_devices(options.benchmark_devices).status());
  }
  return Status::ok();
}

Status check_benchmark_devices(const std::string& devices) {
  return optimizer::parse_benchmark_devices(devices).status();
}

}  // namespace ucudnn
