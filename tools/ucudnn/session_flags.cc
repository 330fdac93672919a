// Shared session flags (see session_flags.h). Every choice flag is parsed
// against the public API's own names (policy_name, math_name, ...), so a name is
// spelled once.
#include "tools/ucudnn/session_flags.h"

#include <climits>
#include <cstdlib>
#include <vector>

namespace ucudnn::cli {

const std::set<std::string> kSessionValueFlags = {"device",    "math",        "batch", "threads", "plan",
                                                  "batch-groups",
                                                  "policy",    "workspace",   "batch-sizes", "db",
                                                  "layout",    "streams",     "cuda-graph",
                                                  "benchmark-devices"};
const std::set<std::string> kSessionBoolFlags = {"rebenchmark", "quiet", "share-workspace", "pin-threads"};

const char* const kSessionFlagsHelp =
    "  --device auto|cpu|cuda   where to run (auto: the GPU when present)\n"
    "  --math tf32|fp32         GPU math: tf32 lets cuDNN/cuBLAS use TF32 tensor cores (default,\n"
    "                           as PyTorch); fp32 is strict FP32. The CPU is always strict FP32\n"
    "                           and accepts either value\n"
    "  --layout auto|nchw|nhwc  activation layout (default auto: both are planned; on the GPU the one\n"
    "                           whose convolutions are predicted faster runs, on the CPU the one that\n"
    "                           ran faster when timed; a CPU build without oneDNN runs nchw)\n"
    "  --batch N                value of symbolic dims such as the batch (default 1)\n"
    "  --threads N              CPU threads (default: all the CPUs the process may use)\n"
    "  --pin-threads            CPU (--device cpu): each thread on a CPU of its own, the first N the\n"
    "                           process may use; not for training\n"
    "  --batch-groups auto|N    CPU (run, eval): the batch as N groups of samples, each through the\n"
    "                           whole network on one thread, all at once. auto (default): as many as\n"
    "                           the threads allow, kept when the model allows it and they ran faster\n"
    "                           than the whole batch when both were timed at load; 1: never\n"
    "  --plan FILE              run a plan saved by `ucudnn plan -o` (instead of planning now)\n"
    "  --policy P               how convolutions are planned: undivided | wr | wd (default wr)\n"
    "  --workspace SIZE         per convolution (undivided, wr) or in total (wd); default 64MiB;\n"
    "                           unlimited: no bound (timed with the free device memory)\n"
    "  --batch-sizes S          micro-batch sizes the optimizer may use: powerOfTwo (default) | all |\n"
    "                           undivided\n"
    "  --share-workspace        wd: convolutions that never run at the same time share workspace bytes\n"
    "  --streams 1|2            GPU: 2 runs independent convolutions (a ResNet downsample beside its\n"
    "                           block's main branch) on a second stream (default 1)\n"
    "  --cuda-graph auto|on|off GPU: capture the run once into a CUDA graph and replay it (one launch\n"
    "                           instead of one per kernel). auto (default): where the plan allows; on:\n"
    "                           also say on stderr when it cannot; off: every run eager\n"
    "  --db PATH                benchmark database (default $XDG_CACHE_HOME/ucudnn/benchmarks.sqlite,\n"
    "                           else ~/.cache/ucudnn/benchmarks.sqlite)\n"
    "  --rebenchmark            measure again instead of reusing stored timings\n"
    "  --benchmark-devices all|0,1,...\n"
    "                           GPU: measure what the database lacks on these GPUs of this host\n"
    "                           at once, one thread each (all of one model; default\n"
    "                           $UCUDNN_BENCHMARK_DEVICES, else GPU 0 alone)\n"
    "  --quiet                  no progress bar\n";

namespace {

// The value of `--flag` among `values` by their public names; `fallback` when absent.
template <typename Enum>
Expected<Enum> parse_choice(const Args& args, const std::string& flag, Enum fallback, const std::vector<Enum>& values,
                            const char* (*name)(Enum)) {
  if (!args.has(flag)) return fallback;
  const std::string text = args.get(flag);
  std::string choices;
  for (size_t i = 0; i < values.size(); ++i) {
    if (text == name(values[i])) return values[i];
    choices += std::string(i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + name(values[i]);
  }
  return invalid_argument("--" + flag + " must be " + choices + ", got '" + text + "'");
}

// An integer flag that must fit an int (threads, streams).
Expected<int> get_small_int(const Args& args, const std::string& flag, int fallback, int min_value) {
  UCUDNN_ASSIGN_OR_RETURN(int64_t value, args.get_int(flag, fallback, min_value, INT_MAX));
  return static_cast<int>(value);
}

// `auto` is the GPU when one is present.
Expected<Device> parse_device(const Args& args) {
  if (args.get("device", "auto") == "auto") return cuda_available() ? Device::kCuda : Device::kCpu;
  return parse_choice(args, "device", Device::kCpu, {Device::kCpu, Device::kCuda}, device_name);
}

}  // namespace

Status session_options_from_flags(const Args& args, SessionOptions* options, bool* compare) {
  UCUDNN_ASSIGN_OR_RETURN(options->device, parse_device(args));
  // On the CPU both --math values are accepted: its kernels always compute in strict FP32.
  UCUDNN_ASSIGN_OR_RETURN(options->math, parse_choice(args, "math", Math::kTf32, {Math::kTf32, Math::kFp32}, math_name));
  UCUDNN_ASSIGN_OR_RETURN(options->layout, parse_choice(args, "layout", Layout::kAuto,
                                                        {Layout::kAuto, Layout::kNchw, Layout::kNhwc}, layout_name));
  UCUDNN_ASSIGN_OR_RETURN(options->batch, args.get_int("batch", 1, 1));
  UCUDNN_ASSIGN_OR_RETURN(options->threads, get_small_int(args, "threads", 0, 0));
  options->pin_threads = args.has("pin-threads");
  if (args.get("batch-groups", "auto") != "auto") {
    UCUDNN_ASSIGN_OR_RETURN(options->batch_groups, get_small_int(args, "batch-groups", 0, 1));
  }
  options->plan_path = args.get("plan");
  if (!options->plan_path.empty() && args.has("policy"))
    return invalid_argument("give either --plan or --policy, not both");
  UCUDNN_ASSIGN_OR_RETURN(options->policy, parse_choice(args, "policy", Policy::kWr,
                                                        {Policy::kUndivided, Policy::kWr, Policy::kWd}, policy_name));
  if (args.has("workspace")) {
    // One flag, and the option the policy reads: a limit per convolution, or wd's total.
    UCUDNN_ASSIGN_OR_RETURN(size_t bytes, parse_byte_size(args.get("workspace")));
    (options->policy == Policy::kWd ? options->total_workspace_budget : options->kernel_workspace_limit) = bytes;
  }
  UCUDNN_ASSIGN_OR_RETURN(options->batch_sizes,
                          parse_choice(args, "batch-sizes", BatchSizes::kPowerOfTwo,
                                       {BatchSizes::kPowerOfTwo, BatchSizes::kAll, BatchSizes::kUndivided},
                                       batch_sizes_name));
  options->share_workspace = args.has("share-workspace");
  UCUDNN_ASSIGN_OR_RETURN(options->streams, get_small_int(args, "streams", 1, 1));
  if (compare != nullptr) *compare = args.get("cuda-graph") == "compare";
  if (compare != nullptr && *compare) {
    options->cuda_graph = CudaGraph::kOn;
  } else {
    UCUDNN_ASSIGN_OR_RETURN(options->cuda_graph,
                            parse_choice(args, "cuda-graph", CudaGraph::kAuto,
                                         {CudaGraph::kAuto, CudaGraph::kOn, CudaGraph::kOff}, cuda_graph_name));
  }
  if (options->cuda_graph == CudaGraph::kOn && options->device != Device::kCuda)
    return invalid_argument("--cuda-graph " + args.get("cuda-graph") + " needs --device cuda (CUDA graphs); this "
                            "run is on the " + device_name(options->device));
  options->benchmark_db = args.get("db");
  options->rebenchmark = args.has("rebenchmark");
  // μ-cuDNN's UCUDNN_BENCHMARK_DEVICES is the default; the CPU ignores it, not the flag.
  const char* env_devices = std::getenv("UCUDNN_BENCHMARK_DEVICES");
  options->benchmark_devices = args.get("benchmark-devices", env_devices != nullptr ? env_devices : "");
  if (args.has("benchmark-devices") || !options->benchmark_devices.empty()) {
    const Status parsed = check_benchmark_devices(options->benchmark_devices);
    if (!parsed.is_ok())
      return args.has("benchmark-devices") ? parsed : parsed.with_context("UCUDNN_BENCHMARK_DEVICES");
  }
  if (options->device != Device::kCuda && !options->benchmark_devices.empty()) {
    if (args.has("benchmark-devices"))
      return invalid_argument("--benchmark-devices " + options->benchmark_devices + " shards GPU benchmarking; " +
                              "this run is on the " + device_name(options->device) + " (use --device cuda)");
    options->benchmark_devices.clear();
  }
  options->progress = !args.has("quiet");
  return check_options(*options);
}

std::set<std::string> flag_union(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

}  // namespace ucudnn::cli
