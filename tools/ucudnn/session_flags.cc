// Shared session flags (see session_flags.h).
#include "tools/ucudnn/session_flags.h"

namespace ucudnn::cli {

const std::set<std::string> kSessionValueFlags = {"device",    "math",        "batch", "threads", "plan",
                                                  "policy",    "workspace",   "batch-sizes", "db",
                                                  "layout",    "streams"};
const std::set<std::string> kSessionBoolFlags = {"rebenchmark", "quiet", "share-workspace"};

const char* const kSessionFlagsHelp =
    "  --device auto|cpu|cuda   where to run (auto: the GPU when present)\n"
    "  --math tf32|fp32         GPU math: tf32 lets cuDNN/cuBLAS use TF32 tensor cores (default,\n"
    "                           as PyTorch); fp32 is strict FP32. The CPU is always strict FP32\n"
    "                           and accepts either value\n"
    "  --layout auto|nchw|nhwc  GPU activation layout (default auto: both are planned, the one whose\n"
    "                           convolutions are predicted faster runs); the CPU runs nchw\n"
    "  --batch N                value of symbolic dims such as the batch (default 1)\n"
    "  --threads N              CPU threads (default: all cores)\n"
    "  --plan FILE              run a plan saved by `ucudnn plan -o`\n"
    "  --policy P               plan convolutions now: undivided | wr | wd\n"
    "  --workspace SIZE         workspace limit: per kernel (undivided, wr) or total (wd); default 64MiB\n"
    "  --batch-sizes S          micro-batch sizes the optimizer may use: all | powerOfTwo | undivided\n"
    "  --share-workspace        wd: convolutions that never run at the same time share workspace bytes\n"
    "  --streams 1|2            GPU: 2 runs independent convolutions (a ResNet downsample beside its\n"
    "                           block's main branch) on a second stream (default 1)\n"
    "  --db PATH                benchmark database (default ~/.cache/ucudnn/benchmarks.sqlite)\n"
    "  --rebenchmark            measure again instead of reusing stored timings\n"
    "  --quiet                  no progress bar\n";

namespace {
Expected<Device> parse_device(const std::string& name) {
  if (name == "auto") return cuda_available() ? Device::kCuda : Device::kCpu;
  if (name == "cpu") return Device::kCpu;
  if (name == "cuda") return Device::kCuda;
  return invalid_argument("--device must be auto, cpu or cuda, got '" + name + "'");
}

Expected<Layout> parse_layout(const std::string& name) {
  if (name == "auto") return Layout::kAuto;
  if (name == "nchw") return Layout::kNchw;
  if (name == "nhwc") return Layout::kNhwc;
  return invalid_argument("--layout must be auto, nchw or nhwc, got '" + name + "'");
}

// True for strict FP32 (--math fp32). On the CPU both values are accepted: its
// kernels always compute in strict FP32, so the flag changes nothing there.
Expected<bool> parse_strict_fp32(const std::string& name) {
  if (name == "tf32") return false;
  if (name == "fp32") return true;
  return invalid_argument("--math must be tf32 or fp32, got '" + name + "'");
}
}  // namespace

Status session_options_from_flags(const Args& args, SessionOptions* options) {
  UCUDNN_ASSIGN_OR_RETURN(options->device, parse_device(args.get("device", "auto")));
  UCUDNN_ASSIGN_OR_RETURN(options->strict_fp32, parse_strict_fp32(args.get("math", "tf32")));
  UCUDNN_ASSIGN_OR_RETURN(options->layout, parse_layout(args.get("layout", "auto")));
  UCUDNN_ASSIGN_OR_RETURN(options->batch, args.get_int("batch", 1, 1));
  UCUDNN_ASSIGN_OR_RETURN(int64_t threads, args.get_int("threads", 0, 0));
  options->threads = static_cast<int>(threads);
  options->plan_path = args.get("plan");
  options->policy = args.get("policy");
  if (args.has("workspace")) {
    UCUDNN_ASSIGN_OR_RETURN(options->workspace_bytes, parse_byte_size(args.get("workspace")));
  }
  options->batch_sizes = args.get("batch-sizes", "powerOfTwo");
  options->benchmark_db = args.get("db");
  options->share_workspace = args.has("share-workspace");
  UCUDNN_ASSIGN_OR_RETURN(int64_t streams, args.get_int("streams", 1, 1));
  if (streams > 2) return invalid_argument("--streams must be 1 or 2, got " + std::to_string(streams));
  options->streams = static_cast<int>(streams);
  options->rebenchmark = args.has("rebenchmark");
  options->progress = !args.has("quiet");
  if (!options->plan_path.empty() && !options->policy.empty())
    return invalid_argument("give either --plan or --policy, not both");
  return Status::ok();
}

std::set<std::string> flag_union(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

}  // namespace ucudnn::cli
