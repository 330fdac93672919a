// The CLI's shared session flags (tools/ucudnn/session_flags.cc): every flag
// turns into its SessionOptions field, malformed or contradictory values into
// InvalidArgument (which the commands report as usage errors, exit 2).
// Table-driven: each row is a command line and what it must give.
#include "tools/ucudnn/session_flags.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/cpu/conv_algorithms.h"

namespace ucudnn::cli {
namespace {

Status parse(const std::vector<std::string>& words, SessionOptions* options) {
  std::vector<std::string> storage = {"plan"};
  storage.insert(storage.end(), words.begin(), words.end());
  std::vector<char*> argv;
  for (std::string& word : storage) argv.push_back(word.data());
  auto args = Args::parse(static_cast<int>(argv.size()), argv.data(), kSessionValueFlags, kSessionBoolFlags);
  if (!args) return args.status();
  return session_options_from_flags(*args, options);
}

struct FlagCase {
  const char* name;
  std::vector<std::string> argv;                   // after the subcommand and MODEL
  std::function<bool(const SessionOptions&)> ok;   // what the options must hold; null: refused
  const char* error = "";                          // part of the refusal's message
};

void run_cases(const std::vector<FlagCase>& cases) {
  for (const FlagCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> argv = {"m.onnx"};
    argv.insert(argv.end(), c.argv.begin(), c.argv.end());
    SessionOptions options;
    const Status status = parse(argv, &options);
    if (c.ok) {
      ASSERT_TRUE(status.is_ok()) << status.to_string();
      EXPECT_TRUE(c.ok(options));
    } else {
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
      EXPECT_NE(status.message().find(c.error), std::string::npos) << status.to_string();
    }
  }
}

TEST(SessionFlags, Math) {
  auto math_is = [](Math m) { return [m](const SessionOptions& o) { return o.math == m; }; };
  run_cases({
      {"default is tf32", {}, math_is(Math::kTf32)},
      {"tf32", {"--math", "tf32"}, math_is(Math::kTf32)},
      {"fp32", {"--math", "fp32"}, math_is(Math::kFp32)},
      {"fp32 with =", {"--math=fp32"}, math_is(Math::kFp32)},
      {"the last one counts", {"--math", "fp32", "--math", "tf32"}, math_is(Math::kTf32)},
      {"cpu accepts fp32", {"--device", "cpu", "--math", "fp32"}, math_is(Math::kFp32)},
      {"cpu accepts tf32", {"--device", "cpu", "--math", "tf32"}, math_is(Math::kTf32)},
      {"cuda with fp32", {"--device", "cuda", "--math", "fp32"}, math_is(Math::kFp32)},
      {"unknown value", {"--math", "bf16"}, nullptr, "--math must be tf32 or fp32, got 'bf16'"},
      {"upper case", {"--math", "FP32"}, nullptr, "--math must be tf32 or fp32"},
      {"empty value", {"--math="}, nullptr, "--math must be tf32 or fp32"},
  });
}

TEST(SessionFlags, Streams) {
  auto streams_are = [](int n) { return [n](const SessionOptions& o) { return o.streams == n; }; };
  run_cases({
      {"default is one", {}, streams_are(1)},
      {"one", {"--streams", "1"}, streams_are(1)},
      {"two", {"--streams", "2"}, streams_are(2)},
      {"three", {"--streams", "3"}, nullptr, "streams must be 1 or 2, got 3"},
      {"zero", {"--streams", "0"}, nullptr, "--streams must be from 1 to 2147483647, got 0"},
      {"beyond an int", {"--streams", "4294967297"}, nullptr, "--streams must be from 1 to 2147483647, got 4294967297"},
      {"not a number", {"--streams", "many"}, nullptr, "--streams expects an integer"},
  });
}

TEST(SessionFlags, CudaGraph) {
  auto graph_is = [](CudaGraph m) { return [m](const SessionOptions& o) { return o.cuda_graph == m; }; };
  run_cases({
      {"default is auto", {}, graph_is(CudaGraph::kAuto)},
      {"auto on the CPU", {"--device", "cpu", "--cuda-graph", "auto"}, graph_is(CudaGraph::kAuto)},
      {"on", {"--device", "cuda", "--cuda-graph", "on"}, graph_is(CudaGraph::kOn)},
      {"off", {"--cuda-graph", "off"}, graph_is(CudaGraph::kOff)},
      {"on needs the GPU", {"--device", "cpu", "--cuda-graph", "on"}, nullptr,
       "--cuda-graph on needs --device cuda (CUDA graphs); this run is on the cpu"},
      {"bad value", {"--cuda-graph", "yes"}, nullptr, "--cuda-graph must be auto, on or off, got 'yes'"},
      {"compare is ucudnn run's", {"--device", "cuda", "--cuda-graph", "compare"}, nullptr,
       "--cuda-graph must be auto, on or off, got 'compare'"},
  });
}

// `ucudnn run --cuda-graph compare`: accepted where the command asks, and the session captures.
TEST(SessionFlags, CudaGraphCompare) {
  auto parse_compare = [](std::vector<std::string> words, SessionOptions* options, bool* compare) {
    words.insert(words.begin(), {"run", "m.onnx"});
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    auto args = Args::parse(static_cast<int>(argv.size()), argv.data(), kSessionValueFlags, kSessionBoolFlags);
    return args ? session_options_from_flags(*args, options, compare) : args.status();
  };
  SessionOptions options;
  bool compare = false;
  Status status = parse_compare({"--device", "cuda", "--cuda-graph", "compare"}, &options, &compare);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_TRUE(compare);
  EXPECT_EQ(options.cuda_graph, CudaGraph::kOn);

  status = parse_compare({"--device", "cuda", "--cuda-graph", "off"}, &options, &compare);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_FALSE(compare);
  EXPECT_EQ(options.cuda_graph, CudaGraph::kOff);

  status = parse_compare({"--device", "cpu", "--cuda-graph", "compare"}, &options, &compare);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  EXPECT_NE(status.message().find("--cuda-graph compare needs --device cuda"), std::string::npos) << status.message();

  // The API's own check, for applications: on needs a CUDA session.
  SessionOptions api;
  api.cuda_graph = CudaGraph::kOn;
  EXPECT_EQ(check_options(api).code(), StatusCode::kInvalidArgument);
  api.device = Device::kCuda;
  EXPECT_TRUE(check_options(api).is_ok());
  api.cuda_graph = static_cast<CudaGraph>(7);
  EXPECT_NE(check_options(api).message().find("cuda_graph holds 7"), std::string::npos);
}

// The default is the optimizer's own: policy wr within 64 MiB per convolution.
TEST(SessionFlags, PolicyAndWorkspace) {
  constexpr size_t k64MiB = size_t{64} << 20;
  run_cases({
      {"default: wr, 64 MiB per kernel", {},
       [](const SessionOptions& o) { return o.policy == Policy::kWr && o.kernel_workspace_limit == k64MiB; }},
      {"undivided", {"--policy", "undivided", "--workspace", "8MiB"},
       [](const SessionOptions& o) {
         return o.policy == Policy::kUndivided && o.kernel_workspace_limit == size_t{8} << 20;
       }},
      {"wr's limit is per kernel", {"--workspace", "1KiB"},
       [](const SessionOptions& o) { return o.kernel_workspace_limit == 1024 && o.total_workspace_budget == k64MiB; }},
      {"wd's budget is the total", {"--policy", "wd", "--workspace", "1KiB"},
       [](const SessionOptions& o) { return o.total_workspace_budget == 1024 && o.kernel_workspace_limit == k64MiB; }},
      {"unlimited", {"--workspace", "unlimited"},
       [](const SessionOptions& o) { return o.kernel_workspace_limit == kUnlimitedWorkspace; }},
      {"wd unlimited", {"--policy", "wd", "--workspace", "unlimited"},
       [](const SessionOptions& o) { return o.total_workspace_budget == kUnlimitedWorkspace; }},
      {"share with wd", {"--policy", "wd", "--share-workspace"},
       [](const SessionOptions& o) { return o.share_workspace; }},
      {"pinned threads", {"--threads", "2", "--pin-threads"},
       [](const SessionOptions& o) { return o.pin_threads && o.threads == 2; }},
      {"unknown policy", {"--policy", "fastest"}, nullptr, "--policy must be undivided, wr or wd, got 'fastest'"},
      {"bad size", {"--workspace", "12parsecs"}, nullptr, "12parsecs"},
      {"share without wd", {"--share-workspace"}, nullptr, "share_workspace applies to policy wd"},
      {"plan and policy", {"--plan", "p.json", "--policy", "wr"}, nullptr, "either --plan or --policy"},
  });
}

TEST(SessionFlags, BatchSizesLayoutDeviceAndCounts) {
  run_cases({
      {"default batch sizes", {}, [](const SessionOptions& o) { return o.batch_sizes == BatchSizes::kPowerOfTwo; }},
      {"all sizes", {"--batch-sizes", "all"}, [](const SessionOptions& o) { return o.batch_sizes == BatchSizes::kAll; }},
      {"undivided sizes", {"--batch-sizes", "undivided"},
       [](const SessionOptions& o) { return o.batch_sizes == BatchSizes::kUndivided; }},
      {"bad batch sizes", {"--batch-sizes", "some"}, nullptr,
       "--batch-sizes must be powerOfTwo, all or undivided, got 'some'"},
      {"cpu", {"--device", "cpu"}, [](const SessionOptions& o) { return o.device == Device::kCpu; }},
      {"cuda", {"--device", "cuda"}, [](const SessionOptions& o) { return o.device == Device::kCuda; }},
      {"bad device", {"--device", "tpu"}, nullptr, "--device must be cpu or cuda, got 'tpu'"},
      {"nhwc on the GPU", {"--device", "cuda", "--layout", "nhwc"},
       [](const SessionOptions& o) { return o.layout == Layout::kNhwc; }},
      cpu::cpu_runs_channels_last()  // oneDNN's convolutions run channels-last on the CPU
          ? FlagCase{"nhwc on the CPU", {"--device", "cpu", "--layout", "nhwc"},
                     [](const SessionOptions& o) { return o.device == Device::kCpu && o.layout == Layout::kNhwc; }}
          : FlagCase{"nhwc on the CPU", {"--device", "cpu", "--layout", "nhwc"}, nullptr, "which this build lacks"},
      {"bad layout", {"--layout", "chwn"}, nullptr, "--layout must be auto, nchw or nhwc, got 'chwn'"},
      {"batch", {"--batch", "16"}, [](const SessionOptions& o) { return o.batch == 16; }},
      {"batch zero", {"--batch", "0"}, nullptr, "--batch must be at least 1"},
      {"negative threads", {"--threads", "-1"}, nullptr, "--threads must be from 0 to 2147483647, got -1"},
      {"db and quiet", {"--db", "x.sqlite", "--quiet", "--rebenchmark"},
       [](const SessionOptions& o) { return o.benchmark_db == "x.sqlite" && !o.progress && o.rebenchmark; }},
  });
}

// Integer flags: a value strtoll cannot hold is out of range, not a clamped or
// wrapped number; text around the digits is not an integer.
TEST(SessionFlags, IntegerFlagsOutOfRange) {
  run_cases({
      {"batch beyond int64", {"--batch", "99999999999999999999999"}, nullptr,
       "--batch must be from 1 to 9223372036854775807, got 99999999999999999999999 (beyond 64 bits)"},
      {"batch below int64", {"--batch", "-99999999999999999999999"}, nullptr, "(beyond 64 bits)"},
      {"negative batch", {"--batch", "-3"}, nullptr, "--batch must be at least 1, got -3"},
      {"batch with a unit", {"--batch", "8k"}, nullptr, "--batch expects an integer at least 1, got '8k'"},
      {"batch with blanks", {"--batch", " 8"}, nullptr, "--batch expects an integer"},
      {"empty batch", {"--batch="}, nullptr, "--batch expects an integer"},
      {"largest batch parses", {"--batch", "9223372036854775807"},
       [](const SessionOptions& o) { return o.batch == INT64_MAX; }},
      {"threads beyond int", {"--threads", "99999999999"}, nullptr, "--threads must be from 0 to 2147483647"},
      {"threads beyond int64", {"--threads", "99999999999999999999999"}, nullptr,
       "--threads must be from 0 to 2147483647"},
      {"streams beyond int64", {"--streams", "18446744073709551617"}, nullptr, "--streams must be from 1 to"},
  });
}

// No exception leaves `ucudnn`'s main: run_catching turns it into one Status (the
// CLI prints it as one line, exit 1) instead of std::terminate's abort (exit 134).
TEST(RunCatching, ExceptionsBecomeAStatus) {
  Status seen;
  auto keep = [&](const Status& s) {
    seen = s;
    return 1;
  };
  EXPECT_EQ(run_catching([] { return 7; }, keep), 7);
  EXPECT_TRUE(seen.is_ok());
  EXPECT_EQ(run_catching([]() -> int { throw std::bad_alloc(); }, keep), 1);
  EXPECT_EQ(seen.code(), StatusCode::kOutOfMemory);
  EXPECT_NE(seen.message().find("ran out of memory"), std::string::npos) << seen.to_string();
  EXPECT_EQ(run_catching([]() -> int { throw std::length_error("vector::_M_default_append"); }, keep), 1);
  EXPECT_EQ(seen.code(), StatusCode::kInternal);
  EXPECT_NE(seen.message().find("vector::_M_default_append"), std::string::npos) << seen.to_string();
  EXPECT_EQ(run_catching([]() -> int { throw 42; }, keep), 1);
  EXPECT_EQ(seen.code(), StatusCode::kInternal);
}

TEST(SessionFlags, HelpNamesTheChoices) {
  const std::string help = kSessionFlagsHelp;
  for (const char* text : {"--math tf32|fp32", "undivided | wr | wd (default wr)", "unlimited", "XDG_CACHE_HOME",
                           "--cuda-graph auto|on|off"})
    EXPECT_NE(help.find(text), std::string::npos) << text;
  EXPECT_NE(kSessionValueFlags.count("math"), 0u);
}

// --benchmark-devices (sharded benchmarking), with UCUDNN_BENCHMARK_DEVICES as its default.
TEST(SessionFlags, BenchmarkDevices) {
  auto devices_are = [](const char* d) { return [d](const SessionOptions& o) { return o.benchmark_devices == d; }; };
  unsetenv("UCUDNN_BENCHMARK_DEVICES");
  run_cases({
      {"default: GPU 0 alone", {"--device", "cuda"}, devices_are("")},
      {"all", {"--device", "cuda", "--benchmark-devices", "all"}, devices_are("all")},
      {"a list", {"--device", "cuda", "--benchmark-devices", "1,0"}, devices_are("1,0")},
      {"not an id", {"--device", "cuda", "--benchmark-devices", "0,x"}, nullptr, "'x' is not a GPU id"},
      {"empty", {"--device", "cuda", "--benchmark-devices", ""}, nullptr, "no GPU named"},
      {"twice", {"--device", "cuda", "--benchmark-devices", "1,1"}, nullptr, "GPU 1 is named twice"},
      {"cpu refuses the flag", {"--device", "cpu", "--benchmark-devices", "0"}, nullptr,
       "--benchmark-devices 0 shards GPU benchmarking; this run is on the cpu"},
  });
  setenv("UCUDNN_BENCHMARK_DEVICES", "all", 1);
  run_cases({
      {"the variable is the default", {"--device", "cuda"}, devices_are("all")},
      {"the flag wins", {"--device", "cuda", "--benchmark-devices", "0"}, devices_are("0")},
      {"the cpu ignores the variable", {"--device", "cpu"}, devices_are("")},
  });
  setenv("UCUDNN_BENCHMARK_DEVICES", "0;1", 1);
  run_cases({{"a malformed variable", {"--device", "cuda"}, nullptr, "UCUDNN_BENCHMARK_DEVICES: --benchmark-devices"}});
  unsetenv("UCUDNN_BENCHMARK_DEVICES");

  SessionOptions options;  // the API's own check
  options.benchmark_devices = "0";
  EXPECT_NE(check_options(options).message().find("benchmark_devices '0' shards benchmarking over GPUs"),
            std::string::npos);
  options.device = Device::kCuda;
  EXPECT_TRUE(check_options(options).is_ok());
  options.benchmark_devices = "0,";
  EXPECT_EQ(check_options(options).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ucudnn::cli
