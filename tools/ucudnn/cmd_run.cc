// `ucudnn run MODEL`: load a model, feed inputs (files or seeded random), run it
// --warmup + --iterations times, print a summary (or one JSON object with
// --json) and optionally write every output as DIR/<name>.pb. With --profile,
// one more run timed per step: totals by op type and the slowest nodes. With
// --device-io the inputs are uploaded once and the timed runs use
// Session::run_on_device, so they exclude the host copies. With --cuda-graph
// compare the runs are timed twice in one session, eagerly and then replaying
// a CUDA graph, and both medians are printed.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "tools/ucudnn/cli_args.h"
#include "tools/ucudnn/commands.h"
#include "tools/ucudnn/input_files.h"
#include "tools/ucudnn/profile_report.h"
#include "tools/ucudnn/session_flags.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::cli {

namespace {

constexpr const char* kRunUsage =
    "usage: ucudnn run MODEL [--input NAME=FILE]... [--output-dir DIR] [--iterations N] [--warmup N]\n"
    "                  [--seed N] [--json] [--profile] [--device-io] [--cuda-graph compare]\n"
    "                  [session flags]\n"
    "  --input NAME=FILE        an ONNX TensorProto (.pb) or NumPy (.npy) file for input NAME (once per\n"
    "                           input); its dtype and static dims must be the model's, its symbolic\n"
    "                           dims set the batch (and must equal --batch when given). int64 files\n"
    "                           (a Reshape's shape, a Slice's starts ...) are given at load as\n"
    "                           constants and folded. Inputs without a file are random (seeded),\n"
    "                           their symbolic dims the files' batch, else --batch\n"
    "  --output-dir DIR         write every output as DIR/<name>.pb\n"
    "  --iterations N, --warmup N  timed runs (default 10) after untimed ones (default 2)\n"
    "  --json                   one JSON object on stdout instead of the summary\n"
    "  --profile                after the timed runs, one run timed per step: time by op type\n"
    "                           (count, total ms, % of the run) and the 10 slowest nodes; with --json\n"
    "                           also every step in run order (profile.steps)\n"
    "  --device-io              inputs and outputs stay in GPU memory (Session::run_on_device):\n"
    "                           the timed runs exclude host copies (needs --device cuda)\n"
    "  --cuda-graph compare     GPU: time the runs eagerly, then replaying a CUDA graph (--warmup and\n"
    "                           --iterations each), and print both medians; the summary is the graph's\n";

// Reads the --input files, checks them against the model, and gives them to
// `options`; without --batch the batch is the one the files set.
Status use_input_files(const std::string& model_path, bool batch_given, std::vector<InputFile>* files,
                       SessionOptions* options) {
  if (files->empty()) return Status::ok();
  UCUDNN_RETURN_IF_ERROR(read_input_files(files));
  UCUDNN_ASSIGN_OR_RETURN(ModelInfo model, model_info(model_path));
  const std::optional<int64_t> batch_flag = batch_given ? std::optional<int64_t>(options->batch) : std::nullopt;
  UCUDNN_ASSIGN_OR_RETURN(std::optional<int64_t> file_batch, check_input_files(model, *files, batch_flag));
  if (file_batch) options->batch = *file_batch;
  add_input_files(*files, options);
  return Status::ok();
}

Expected<Tensor> random_tensor(const TensorInfo& info, std::mt19937& rng) {
  UCUDNN_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(info.dtype, info.shape));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  if (info.dtype == DType::kFloat32) {
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = uniform(rng);
  } else if (info.dtype == DType::kFloat16) {  // a half-precision model's input (Note [half-precision models])
    for (int64_t i = 0; i < t.numel(); ++i) t.data<Float16>()[i] = Float16(uniform(rng));
  } else if (info.dtype == DType::kBFloat16) {
    for (int64_t i = 0; i < t.numel(); ++i) t.data<BFloat16>()[i] = BFloat16(uniform(rng));
  } else if (info.dtype == DType::kInt64) {
    std::uniform_int_distribution<int64_t> dist(0, 9);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = dist(rng);
  } else {
    return unsupported("cannot make a random value for input '" + info.name + "' of dtype " + dtype_name(info.dtype) +
                       "; give it with --input");
  }
  return t;
}

struct OutputStats {
  double min = 0, max = 0, mean = 0;
  int64_t argmax = 0;
};

OutputStats output_stats(const Tensor& output) {
  OutputStats s;
  // A half output's statistics are its float32 values' (exact).
  const bool half = output.dtype() == DType::kFloat16 || output.dtype() == DType::kBFloat16;
  const Expected<Tensor> widened = half ? convert_floating(output, DType::kFloat32) : Expected<Tensor>(output);
  if (!widened) return s;
  const Tensor& t = *widened;
  if (t.dtype() != DType::kFloat32 || t.numel() == 0) return s;
  const float* p = t.data<float>();
  s.min = s.max = p[0];
  double sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (p[i] < s.min) s.min = p[i];
    if (p[i] > s.max) {
      s.max = p[i];
      s.argmax = i;
    }
    sum += p[i];
  }
  s.mean = sum / static_cast<double>(t.numel());
  return s;
}

std::string safe_file_name(std::string name) {
  for (char& c : name)
    if (c == '/' || c == '\\' || c == ':') c = '_';
  return name;
}

// Calls `run_once` warmup + iterations times, appending the wall time of each
// timed call to `times_ms`; stops at the first error.
template <typename RunOnce>
Status time_runs(int64_t warmup, int64_t iterations, RunOnce run_once, std::vector<double>* times_ms) {
  for (int64_t i = 0; i < warmup + iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    Status status = run_once();
    const auto stop = std::chrono::steady_clock::now();
    UCUDNN_RETURN_IF_ERROR(status);
    if (i >= warmup) times_ms->push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return Status::ok();
}

// Times run() on host tensors; the outputs are the last run's.
Expected<std::vector<Tensor>> time_on_host(Session& session, const std::vector<Tensor>& inputs, int64_t warmup,
                                           int64_t iterations, std::vector<double>* times_ms) {
  std::vector<Tensor> outputs;
  auto run_once = [&]() -> Status {
    UCUDNN_ASSIGN_OR_RETURN(outputs, session.run(inputs));
    return Status::ok();
  };
  UCUDNN_RETURN_IF_ERROR(time_runs(warmup, iterations, run_once, times_ms));
  return outputs;
}

// --device-io: uploads `inputs` once, times run_on_device, and downloads the
// outputs once after the loop.
Expected<std::vector<Tensor>> time_on_device(Session& session, const std::vector<Tensor>& inputs, int64_t warmup,
                                             int64_t iterations, std::vector<double>* times_ms) {
  std::vector<GpuTensor> device_inputs, device_outputs;
  for (const Tensor& t : inputs) {
    UCUDNN_ASSIGN_OR_RETURN(GpuTensor g, GpuTensor::upload(t));
    device_inputs.push_back(std::move(g));
  }
  for (const TensorInfo& info : session.outputs()) {
    UCUDNN_ASSIGN_OR_RETURN(GpuTensor g, GpuTensor::allocate(info.dtype, info.shape));
    device_outputs.push_back(std::move(g));
  }
  auto run_once = [&] { return session.run_on_device(device_inputs, device_outputs); };
  UCUDNN_RETURN_IF_ERROR(time_runs(warmup, iterations, run_once, times_ms));
  std::vector<Tensor> outputs;
  for (const GpuTensor& g : device_outputs) {
    UCUDNN_ASSIGN_OR_RETURN(Tensor t, g.download());
    outputs.push_back(std::move(t));
  }
  return outputs;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  auto parsed = Args::parse(argc, argv,
                            flag_union({"input", "output-dir", "iterations", "warmup", "seed"}, kSessionValueFlags),
                            flag_union({"json", "profile", "device-io", "help"}, kSessionBoolFlags));
  if (!parsed) return report_error(parsed.status(), true);
  const Args& args = *parsed;
  if (args.has("help")) {
    std::printf("%s%s", kRunUsage, kSessionFlagsHelp);
    return 0;
  }
  if (args.positional().size() != 1)
    return report_error(invalid_argument(std::string("expected one MODEL\n") + kRunUsage), true);
  const std::string model_path = args.positional()[0];

  SessionOptions options;
  bool compare_graph = false;
  if (Status s = session_options_from_flags(args, &options, &compare_graph); !s.is_ok()) return report_error(s, true);
  auto iterations = args.get_int("iterations", 10, 1);
  auto warmup = args.get_int("warmup", 2, 0);
  auto seed = args.get_int("seed", 0, 0, UINT32_MAX);  // std::mt19937 takes 32 bits
  for (const Status& s : {iterations.status(), warmup.status(), seed.status()})
    if (!s.is_ok()) return report_error(s, true);
  const bool device_io = args.has("device-io");
  if (device_io && options.device != Device::kCuda)
    return report_error(invalid_argument(std::string("--device-io needs --device cuda (inputs and outputs in GPU "
                                                     "memory); this run is on the ") +
                                         device_name(options.device)),
                        true);

  auto files = parse_input_specs(args.get_all("input"));
  if (!files) return report_error(files.status(), true);
  if (Status s = use_input_files(model_path, args.has("batch"), &*files, &options); !s.is_ok()) return report_error(s);

  auto session = Session::load(model_path, options);
  if (!session) return report_error(session.status());

  // Inputs in model order: from files, else random. (int64 files were given at load.)
  std::mt19937 rng(static_cast<uint32_t>(*seed));
  std::vector<Tensor> inputs;
  for (const TensorInfo& info : (*session)->inputs()) {
    auto it = std::find_if(files->begin(), files->end(), [&](const InputFile& f) { return f.name == info.name; });
    if (it != files->end()) {
      inputs.push_back(it->tensor);
      continue;
    }
    auto t = random_tensor(info, rng);
    if (!t) return report_error(t.status());
    inputs.push_back(std::move(*t));
  }

  auto time = [&](std::vector<double>* times_ms) -> Expected<std::vector<Tensor>> {
    auto timed = device_io ? time_on_device(**session, inputs, *warmup, *iterations, times_ms)
                           : time_on_host(**session, inputs, *warmup, *iterations, times_ms);
    if (!timed && device_io) return timed.status().with_context("--device-io");
    return timed;
  };
  // --cuda-graph compare: the eager runs first, in the same session (its memory, clocks warmed alike).
  std::vector<double> eager_ms;
  if (compare_graph) {
    Status s = (*session)->set_cuda_graph(CudaGraph::kOff);
    if (s.is_ok()) s = time(&eager_ms).status();
    if (s.is_ok()) s = (*session)->set_cuda_graph(CudaGraph::kOn);
    if (!s.is_ok()) return report_error(s.with_context("--cuda-graph compare"));
  }
  std::vector<double> times_ms;
  auto timed = time(&times_ms);
  if (!timed) return report_error(timed.status());
  const std::vector<Tensor> outputs = std::move(*timed);
  const bool graph_in_use = (*session)->cuda_graph_in_use();
  const double eager_median = compare_graph ? percentile_median(eager_ms) : 0.0;

  std::vector<StepProfile> profile;
  double profile_total_ms = 0;
  if (args.has("profile")) {
    auto profiled = (*session)->profile(inputs);
    if (!profiled) return report_error(profiled.status().with_context("--profile"));
    profile = std::move(*profiled);
    for (const StepProfile& step : profile) profile_total_ms += step.ms;
  }

  if (args.has("output-dir")) {
    const std::string dir = args.get("output-dir");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return report_error(io_error("cannot create --output-dir '" + dir + "': " + ec.message()));
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string& name = (*session)->outputs()[i].name;
      Status s = write_tensor_file(dir + "/" + safe_file_name(name) + ".pb", name, outputs[i]);
      if (!s.is_ok()) return report_error(s);
    }
  }

  const double median = percentile_median(times_ms);
  const double min = *std::min_element(times_ms.begin(), times_ms.end());
  const double max = *std::max_element(times_ms.begin(), times_ms.end());
  const double throughput = median > 0 ? static_cast<double>(options.batch) * 1000.0 / median : 0.0;
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  const size_t peak_rss = static_cast<size_t>(usage.ru_maxrss) * 1024;
  const MemoryStats memory = (*session)->memory();

  if (args.has("json")) {
    nlohmann::json j;
    j["model"] = model_path;
    j["device"] = device_name(options.device);
    j["io"] = device_io ? "device" : "host";
    j["batch"] = options.batch;
    j["layout"] = layout_name((*session)->layout());
    j["plan"] = options.plan_path.empty() ? policy_name(options.policy) : options.plan_path;
    j["threads"] = options.threads;
    const BatchGroups groups = (*session)->batch_groups();
    j["batch_groups"] = {{"groups", groups.groups}, {"group_batch", groups.group_batch}, {"note", groups.note}};
    j["iterations"] = *iterations;
    j["warmup"] = *warmup;
    j["latency_ms"] = {{"median", median}, {"min", min}, {"max", max}, {"each", times_ms}};
    j["throughput_per_s"] = throughput;
    j["cuda_graph"] = graph_in_use;
    if (compare_graph)
      j["cuda_graph_compare"] = {{"graph_median_ms", median},
                                 {"eager_median_ms", eager_median},
                                 {"speedup", median > 0 ? eager_median / median : 0.0}};
    j["peak_memory_bytes"] = peak_rss;
    j["memory"] = {{"arena_bytes", memory.arena_bytes},
                   {"unplanned_activation_bytes", memory.unplanned_bytes},
                   {"weight_bytes", memory.weight_bytes},
                   {"workspace_bytes", memory.workspace_bytes},
                   {"largest_workspace_bytes", memory.largest_workspace_bytes},
                   {"kernel_bytes", memory.kernel_bytes},
                   {"total_bytes", memory.peak_bytes()}};
    nlohmann::json outs = nlohmann::json::array();
    for (size_t i = 0; i < outputs.size(); ++i) {
      const OutputStats s = output_stats(outputs[i]);
      outs.push_back({{"name", (*session)->outputs()[i].name},
                      {"dtype", dtype_name(outputs[i].dtype())},
                      {"shape", outputs[i].shape()},
                      {"min", s.min},
                      {"max", s.max},
                      {"mean", s.mean}});
    }
    j["outputs"] = outs;
    if (args.has("profile")) j["profile"] = profile_json(profile, profile_total_ms);
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }

  std::printf("model:    %s\n", model_path.c_str());
  std::printf("device:   %s, batch %lld, layout %s%s%s\n", device_name(options.device),
              static_cast<long long>(options.batch), layout_name((*session)->layout()),
              options.device == Device::kCuda ? (graph_in_use ? ", CUDA graph" : ", eager (no CUDA graph)") : "",
              device_io ? ", inputs and outputs in GPU memory (timed runs without host copies)" : "");
  const BatchGroups groups = (*session)->batch_groups();
  if (groups.groups > 1)
    std::printf("groups:   %d groups of %lld samples, one thread each%s%s\n", groups.groups,
                static_cast<long long>(groups.group_batch), groups.note.empty() ? "" : "; ", groups.note.c_str());
  else if (!groups.note.empty())
    std::printf("groups:   the whole batch at once; %s\n", groups.note.c_str());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputStats s = output_stats(outputs[i]);
    std::printf("output:   %s %s  min %.4g  max %.4g  mean %.4g  argmax %lld\n",
                (*session)->outputs()[i].name.c_str(), outputs[i].describe().c_str(), s.min, s.max, s.mean,
                static_cast<long long>(s.argmax));
  }
  std::printf("latency:  median %.3f ms  (min %.3f, max %.3f; %lld iterations after %lld warm-up)\n", median, min,
              max, static_cast<long long>(*iterations), static_cast<long long>(*warmup));
  std::printf("throughput: %.1f samples/s\n", throughput);
  if (compare_graph && graph_in_use)
    std::printf("cuda graph: median %.3f ms vs eager %.3f ms (%.2fx)\n", median, eager_median,
                median > 0 ? eager_median / median : 0.0);
  else if (compare_graph)
    std::printf("cuda graph: not in use (see the warning above); eager median %.3f ms\n", eager_median);
  const std::string kept =
      memory.kernel_bytes > 0 ? ", kept by kernels " + format_bytes(memory.kernel_bytes) : std::string();
  std::printf("memory:   activations %s planned (%s without reuse), weights %s, workspace %s%s: %s on the %s; "
              "peak RSS %s\n",
              format_bytes(memory.arena_bytes).c_str(), format_bytes(memory.unplanned_bytes).c_str(),
              format_bytes(memory.weight_bytes).c_str(), memory.workspace_text().c_str(), kept.c_str(),
              format_bytes(memory.peak_bytes()).c_str(), options.device == Device::kCuda ? "GPU" : "CPU",
              format_bytes(peak_rss).c_str());
  if (args.has("profile")) print_profile(profile, profile_total_ms, device_name(options.device));
  return 0;
}

}  // namespace ucudnn::cli
