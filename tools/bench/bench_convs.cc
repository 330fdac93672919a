// ucudnn_bench_convs: the sum of convolution kernel times a plan really takes
// on the GPU, for the undivided, wr and wd policies at several workspace
// budgets and for unlimited workspace (issue 4, "Benchmarks", items 1 and 3).
//
// For each (policy, budget) the model is planned with optimizer::plan_model (the
// benchmark database fills on the first plan and serves the rest). Then only
// the Conv steps of the plan run, each as its configuration: per micro-batch
// the CUDA backend's Conv prepare with the plan's algorithm and a run on
// pointer offsets into the same tensors, the workspace taken from the step's
// slice of one pool — the executor's calls, through the Backend interface
// (runtime/backend/backend.h). As in the benchmarker, bias and fused activation
// are left out, so measured and predicted time the same work. A step is timed
// with the backend's events around all its micro-batches (warm-up, then the
// median of --repeats). Prints a table and, with --json-out, one JSON object per
// row.
//
//   ucudnn_bench_convs MODEL [--batch 256] [--db PATH] [--budgets 8,64,512]
//       [--repeats 20] [--warmup 3] [--batch-sizes powerOfTwo] [--strict-fp32]
//       [--json-out FILE]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/loading.h"
#include "optimizer/plan_model.h"
#include "runtime/backend/backend.h"
#include "runtime/backends/backends.h"
#include "runtime/ir/fusion.h"

namespace ucudnn {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

struct Flags {
  std::string model, db, json_out;
  BatchSizes batch_sizes = BatchSizes::kPowerOfTwo;
  int64_t batch = 256;
  std::vector<size_t> budgets_mib = {8, 64, 512};
  int repeats = 20, warmup = 3;
  bool strict_fp32 = false;
  Layout layout = Layout::kNchw;
};

Expected<Flags> parse_flags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> Expected<std::string> {
      if (i + 1 >= argc) return invalid_argument(a + " needs a value");
      return std::string(argv[++i]);
    };
    try {
      if (a == "--batch") { UCUDNN_ASSIGN_OR_RETURN(std::string v, value()); f.batch = std::stoll(v); }
      else if (a == "--db") { UCUDNN_ASSIGN_OR_RETURN(f.db, value()); }
      else if (a == "--json-out") { UCUDNN_ASSIGN_OR_RETURN(f.json_out, value()); }
      else if (a == "--batch-sizes") {
        UCUDNN_ASSIGN_OR_RETURN(std::string v, value());
        if (v == "all") f.batch_sizes = BatchSizes::kAll;
        else if (v == "undivided") f.batch_sizes = BatchSizes::kUndivided;
        else if (v != "powerOfTwo") return invalid_argument("--batch-sizes must be powerOfTwo, all or undivided");
      }
      else if (a == "--repeats") { UCUDNN_ASSIGN_OR_RETURN(std::string v, value()); f.repeats = std::stoi(v); }
      else if (a == "--warmup") { UCUDNN_ASSIGN_OR_RETURN(std::string v, value()); f.warmup = std::stoi(v); }
      else if (a == "--strict-fp32") { f.strict_fp32 = true; }
      else if (a == "--layout") {
        UCUDNN_ASSIGN_OR_RETURN(std::string v, value());
        if (v != "nchw" && v != "nhwc") return invalid_argument("--layout must be nchw or nhwc, got '" + v + "'");
        f.layout = v == "nhwc" ? Layout::kNhwc : Layout::kNchw;
      }
      else if (a == "--budgets") {
        UCUDNN_ASSIGN_OR_RETURN(std::string v, value());
        f.budgets_mib.clear();
        for (size_t begin = 0; begin < v.size();) {
          size_t end = v.find(',', begin);
          if (end == std::string::npos) end = v.size();
          f.budgets_mib.push_back(std::stoull(v.substr(begin, end - begin)));
          begin = end + 1;
        }
      } else if (!a.empty() && a[0] == '-') {
        return invalid_argument("unknown flag '" + a + "'");
      } else if (f.model.empty()) {
        f.model = a;
      } else {
        return invalid_argument("more than one MODEL given");
      }
    } catch (const std::exception&) {
      return invalid_argument("flag " + a + " needs a number");
    }
  }
  if (f.model.empty()) return invalid_argument("no MODEL given");
  if (f.batch < 1 || f.repeats < 1 || f.warmup < 0) return invalid_argument("--batch and --repeats must be ≥ 1");
  return f;
}

// Device buffers for x, w, y large enough for every Conv of the graph.
struct ConvBuffers {
  std::unique_ptr<runtime::Buffer> x, w, y;
};

Expected<ConvBuffers> allocate_conv_buffers(runtime::Backend& backend, const ir::Graph& graph) {
  size_t x = 0, w = 0, y = 0;
  for (const ir::Node& n : graph.nodes) {
    if (n.op != OpKind::kConv) continue;
    x = std::max(x, static_cast<size_t>(shape_numel(graph.value(n.inputs[0]).shape)) * 4);
    w = std::max(w, static_cast<size_t>(shape_numel(graph.value(n.inputs[1]).shape)) * 4);
    y = std::max(y, static_cast<size_t>(shape_numel(graph.value(n.outputs[0]).shape)) * 4);
  }
  ConvBuffers b;
  UCUDNN_ASSIGN_OR_RETURN(b.x, backend.allocate(x, "convolution inputs"));
  UCUDNN_ASSIGN_OR_RETURN(b.w, backend.allocate(w, "convolution weights"));
  UCUDNN_ASSIGN_OR_RETURN(b.y, backend.allocate(y, "convolution outputs"));
  // Zeroed inputs would do for timing, but small non-zero values are the usual case.
  std::vector<float> ones(std::max(x, w) / 4, 0.01f);
  UCUDNN_RETURN_IF_ERROR(backend.copy_to_device(b.x->data(), ones.data(), x, "filling inputs"));
  UCUDNN_RETURN_IF_ERROR(backend.copy_to_device(b.w->data(), ones.data(), w, "filling weights"));
  UCUDNN_RETURN_IF_ERROR(backend.synchronize("filling the convolution buffers"));
  return b;
}

struct Call {
  std::unique_ptr<runtime::Kernel> kernel;
  std::vector<runtime::TensorRef> src, dst;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// Runs every Conv step of `plan` as its configuration; returns the sum of the
// per-step medians in ms.
Expected<double> measure_plan(runtime::Backend& backend, const ir::Graph& graph, const runtime::Plan& plan,
                              const ConvBuffers& buffers, const Flags& flags) {
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Buffer> pool,
                          backend.allocate(plan.workspace_pool_bytes, "workspace pool of the plan"));
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Event> start, backend.create_event());
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Event> stop, backend.create_event());
  double total = 0;
  for (const runtime::PlanStep& step : plan.steps) {
    ir::Node conv = graph.nodes[step.node];
    if (conv.op != OpKind::kConv) continue;
    conv.inputs.resize(2);
    conv.attrs.erase(ir::kFusedActivationAttr);
    const Shape x_shape = graph.value(conv.inputs[0]).shape, w_shape = graph.value(conv.inputs[1]).shape;
    const Shape y_shape = graph.value(conv.outputs[0]).shape;
    std::vector<runtime::MicroBatch> parts = step.micro_batches;
    if (parts.empty()) parts.push_back({x_shape[0], -1});
    std::vector<Call> calls;
    int64_t begin = 0;
    for (const runtime::MicroBatch& m : parts) {
      Shape xs = x_shape, ys = y_shape;
      xs[0] = ys[0] = m.size;
      const size_t x_row = static_cast<size_t>(shape_numel(x_shape) / x_shape[0]) * 4;
      const size_t y_row = static_cast<size_t>(shape_numel(y_shape) / y_shape[0]) * 4;
      Call call;
      UCUDNN_ASSIGN_OR_RETURN(call.kernel, backend.prepare({graph, conv, {xs, w_shape}, {ys}, m.algorithm}));
      if (call.kernel->workspace_bytes() > step.workspace_bytes)
        return internal_error(conv.describe() + ": algorithm " + std::to_string(m.algorithm) + " needs " +
                              format_bytes(call.kernel->workspace_bytes()) + " but the plan's slice is " +
                              format_bytes(step.workspace_bytes));
      call.src = {{DType::kFloat32, xs, static_cast<std::byte*>(buffers.x->data()) + x_row * begin},
                  {DType::kFloat32, w_shape, buffers.w->data()}};
      call.dst = {{DType::kFloat32, ys, static_cast<std::byte*>(buffers.y->data()) + y_row * begin}};
      call.workspace = static_cast<std::byte*>(pool->data()) + step.workspace_offset;
      call.workspace_bytes = step.workspace_bytes;
      calls.push_back(std::move(call));
      begin += m.size;
    }
    auto run_step = [&]() -> Status {
      for (Call& c : calls) UCUDNN_RETURN_IF_ERROR(c.kernel->run({c.src, c.dst, c.workspace, c.workspace_bytes}));
      return Status::ok();
    };
    for (int i = 0; i < flags.warmup; ++i) UCUDNN_RETURN_IF_ERROR(run_step().with_context(conv.describe()));
    std::vector<double> times;
    for (int i = 0; i < flags.repeats; ++i) {
      UCUDNN_RETURN_IF_ERROR(backend.record(*start, 0));
      UCUDNN_RETURN_IF_ERROR(run_step().with_context(conv.describe()));
      UCUDNN_RETURN_IF_ERROR(backend.record(*stop, 0));
      UCUDNN_RETURN_IF_ERROR(backend.synchronize(conv.describe()));
      UCUDNN_ASSIGN_OR_RETURN(const double ms, backend.elapsed_ms(*start, *stop));
      times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    total += times[times.size() / 2];
  }
  return total;
}

struct Row {
  std::string policy, budget;
  size_t budget_bytes = 0;
  double predicted_ms = -1, measured_ms = -1;
  size_t pool_bytes = 0;
  int divided_steps = 0;
  std::string error;
};

int run(int argc, char** argv) {
  auto flags = parse_flags(argc, argv);
  if (!flags) {
    std::fprintf(stderr, "error: %s\nusage: ucudnn_bench_convs MODEL [--batch 256] [--db PATH] [--budgets 8,64,512] "
                 "[--repeats 20] [--warmup 3] [--batch-sizes powerOfTwo] [--strict-fp32] [--layout nchw|nhwc] "
                 "[--json-out FILE]\n",
                 flags.status().message().c_str());
    return 2;
  }
  SessionOptions options;
  options.device = Device::kCuda;
  options.batch = flags->batch;
  options.batch_sizes = flags->batch_sizes;
  options.math = flags->strict_fp32 ? Math::kFp32 : Math::kTf32;
  options.layout = flags->layout;
  options.benchmark_db = flags->db;
  auto graph = load_inference_graph(flags->model, options);  // NCHW; plan_model converts for nhwc
  if (!graph) {
    std::fprintf(stderr, "error: %s\n", graph.status().to_string().c_str());
    return 1;
  }
  auto backend = backends::make_backend(backends::DeviceKind::kCuda,
                                        flags->strict_fp32 ? backends::GpuMath::kFp32 : backends::GpuMath::kTf32);
  if (!backend) {
    std::fprintf(stderr, "error: %s\n", backend.status().to_string().c_str());
    return 1;
  }
  std::optional<ConvBuffers> buffers;  // for the graph in the plans' layout, once the first plan exists

  std::vector<std::pair<Policy, size_t>> cases;  // (policy, budget bytes)
  for (Policy policy : {Policy::kUndivided, Policy::kWr, Policy::kWd})
    for (size_t mib : flags->budgets_mib) cases.push_back({policy, mib * kMiB});
  cases.push_back({Policy::kUndivided, kUnlimitedWorkspace});

  std::vector<Row> rows;
  for (const auto& [policy, bytes] : cases) {
    Row row;
    row.policy = policy_name(policy);
    row.budget_bytes = bytes;
    row.budget = bytes == kUnlimitedWorkspace ? "unlimited" : std::to_string(bytes / kMiB) + "MiB";
    options.policy = policy;
    options.kernel_workspace_limit = options.total_workspace_budget = bytes;
    // The workspaces in one pool of their own, as the paper's benchmarks and the optimizer alone plan them
    // (a session's plan puts them in its arena, Note [workspace in the arena]; this harness has no arena).
    optimizer::PlanRequest request = plan_request(options);
    request.planner.workspace_in_arena = false;
    auto planned = optimizer::plan_model(*graph, request);
    if (!planned) {
      row.error = planned.status().to_string();
    } else {
      const optimizer::PlanResult& result = planned->result;
      // Predicted: every Conv node at its kernel's configuration time.
      row.predicted_ms = 0;
      for (size_t k = 0; k < result.kernels.size(); ++k)
        row.predicted_ms += result.policy.kernels[k].config.time_ms * result.kernels[k].nodes.size();
      row.pool_bytes = result.plan.workspace_pool_bytes;
      for (const runtime::PlanStep& s : result.plan.steps) row.divided_steps += s.micro_batches.size() > 1;
      if (!buffers) {
        auto allocated = allocate_conv_buffers(**backend, planned->graph);
        if (!allocated) {
          std::fprintf(stderr, "error: %s\n", allocated.status().to_string().c_str());
          return 1;
        }
        buffers = std::move(*allocated);
      }
      auto measured = measure_plan(**backend, planned->graph, result.plan, *buffers, *flags);
      if (measured) row.measured_ms = *measured;
      else row.error = measured.status().to_string();
    }
    std::fprintf(stderr, "%s at %s: %s\n", row.policy.c_str(), row.budget.c_str(),
                 row.error.empty() ? "done" : row.error.c_str());
    rows.push_back(row);
  }

  auto find = [&](const std::string& policy, const std::string& budget) -> const Row* {
    for (const Row& r : rows)
      if (r.policy == policy && r.budget == budget && r.error.empty()) return &r;
    return nullptr;
  };
  const Row* unlimited = find("undivided", "unlimited");
  std::printf("model %s, batch %lld, %s math, layout %s; convolution time, sum over all Conv nodes\n",
              flags->model.c_str(), static_cast<long long>(flags->batch), flags->strict_fp32 ? "fp32" : "tf32",
              layout_name(flags->layout));
  std::printf("%-10s %-10s %12s %12s %9s %8s %12s %12s %s\n", "policy", "workspace", "predicted_ms", "measured_ms",
              "meas/pred", "divided", "vs_undiv", "vs_unlimited", "pool");
  std::ofstream json;
  if (!flags->json_out.empty()) json.open(flags->json_out, std::ios::app);
  for (const Row& r : rows) {
    const Row* undivided = find("undivided", r.budget);
    const double speedup = undivided && r.measured_ms > 0 ? undivided->measured_ms / r.measured_ms : -1;
    const double vs_unlimited = unlimited && r.measured_ms > 0 ? r.measured_ms / unlimited->measured_ms : -1;
    if (r.error.empty())
      std::printf("%-10s %-10s %12.3f %12.3f %9.3f %8d %11.2fx %11.2fx %s\n", r.policy.c_str(), r.budget.c_str(),
                  r.predicted_ms, r.measured_ms, r.measured_ms / r.predicted_ms, r.divided_steps, speedup,
                  vs_unlimited, format_bytes(r.pool_bytes).c_str());
    else
      std::printf("%-10s %-10s error: %s\n", r.policy.c_str(), r.budget.c_str(), r.error.c_str());
    nlohmann::json j = {{"model", flags->model},          {"batch", flags->batch},
                        {"math", flags->strict_fp32 ? "fp32" : "tf32"}, {"layout", layout_name(flags->layout)},
                        {"policy", r.policy},             {"workspace", r.budget},
                        {"workspace_bytes", r.budget_bytes}, {"predicted_ms", r.predicted_ms},
                        {"measured_ms", r.measured_ms},   {"pool_bytes", r.pool_bytes},
                        {"divided_steps", r.divided_steps}, {"speedup_vs_undivided", speedup},
                        {"ratio_vs_unlimited", vs_unlimited}, {"device", (*backend)->device_name()},
                        {"error", r.error}};
    std::printf("JSON %s\n", j.dump().c_str());
    if (json.is_open()) json << j.dump() << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace ucudnn

int main(int argc, char** argv) { return ucudnn::run(argc, argv); }
