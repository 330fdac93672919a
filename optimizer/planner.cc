// The planner (see planner.h).
#include "optimizer/planner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>

#include "runtime/executor/side_stream.h"
#include "runtime/ir/layout.h"

namespace ucudnn::optimizer {

namespace {

// "[#####.....] 12/40 kernels  3.2 s elapsed  ETA 7.5 s" on one stderr line.
class ProgressBar {
 public:
  ProgressBar(int total, bool enabled) : total_(total), enabled_(enabled && total > 0 && isatty(STDERR_FILENO)) {}
  void update(int done) {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = done > 0 ? elapsed / done * (total_ - done) : 0.0;
    const int width = 30, filled = total_ ? width * done / total_ : width;
    std::fprintf(stderr, "\rbenchmarking [%s%s] %d/%d kernels  %.1f s elapsed  ETA %.1f s ",
                 std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), done, total_, elapsed,
                 eta);
    if (done == total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  int total_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

bool has_all_sizes(const KernelTimings& timings, const std::vector<int64_t>& sizes) {
  for (int64_t s : sizes)
    if (!timings.by_batch.count(s)) return false;
  return true;
}

// Each side-stream candidate's kernel with the kernel of every main-stream Conv in
// its window (Note [side stream]): the sets of kernels that may run at once. A
// kernel cannot overlap itself in the ILP's model; assign_side_streams then finds
// room above it or keeps the step serial.
std::vector<std::vector<int>> overlapping_kernel_pairs(const ir::Graph& graph, const std::vector<ConvKernel>& kernels,
                                                       const std::vector<ir::NodeId>& side_candidates) {
  std::vector<int> kernel_of(graph.nodes.size(), -1);
  for (size_t k = 0; k < kernels.size(); ++k)
    for (ir::NodeId node : kernels[k].nodes) kernel_of[node] = static_cast<int>(k);
  std::vector<bool> side(graph.nodes.size(), false);
  for (ir::NodeId s : side_candidates) side[s] = true;
  std::vector<std::vector<int>> pairs;
  for (ir::NodeId s : side_candidates) {
    const runtime::SideWindow window = runtime::side_window(graph, s);
    for (int32_t m = window.fork + 1; m < window.join; ++m)
      if (!side[m] && kernel_of[m] >= 0 && kernel_of[m] != kernel_of[s]) pairs.push_back({kernel_of[s], kernel_of[m]});
  }
  return pairs;
}

}  // namespace

const char* policy_name(Policy policy) {
  switch (policy) {
    case Policy::kUndivided: return "undivided";
    case Policy::kWr: return "wr";
    case Policy::kWd: return "wd";
  }
  return "?";
}

Expected<Policy> parse_policy(const std::string& name) {
  if (name == "undivided") return Policy::kUndivided;
  if (name == "wr") return Policy::kWr;
  if (name == "wd") return Policy::kWd;
  return invalid_argument("--policy must be undivided, wr or wd, got '" + name + "'");
}

Expected<BatchSizePolicy> parse_batch_size_policy(const std::string& name) {
  if (name == "all") return BatchSizePolicy::kAll;
  if (name == "powerOfTwo") return BatchSizePolicy::kPowerOfTwo;
  if (name == "undivided") return BatchSizePolicy::kUndivided;
  return invalid_argument("--batch-sizes must be all, powerOfTwo or undivided, got '" + name + "'");
}

Expected<PlanResult> plan_graph(const ir::Graph& graph, const std::string& device, const PlannerOptions& options,
                                Benchmarker& benchmarker, BenchmarkDb* db,
                                size_t (*workspace_of)(const ir::Graph&, const ir::Node&)) {
  const auto start = std::chrono::steady_clock::now();
  PlanResult result;
  result.options = options;
  const ConvKernelKey device_key = benchmarker.device_key();
  UCUDNN_ASSIGN_OR_RETURN(result.kernels, collect_conv_kernels(graph, device_key));

  // 1. Timings: stored, else measured (and stored).
  std::vector<NamedKernel>& named = result.timings;
  ProgressBar progress(static_cast<int>(result.kernels.size()), options.progress);
  for (size_t i = 0; i < result.kernels.size(); ++i) {
    const ConvKernel& kernel = result.kernels[i];
    const std::string key = kernel.key.to_string();
    // Timings at every size any policy may use, so a stored kernel serves all policies.
    const std::vector<int64_t> sizes = micro_batch_sizes(options.batch_sizes, kernel.batch());
    std::optional<KernelTimings> timings;
    if (db && !options.rebenchmark) {
      UCUDNN_ASSIGN_OR_RETURN(timings, db->lookup(key));
      if (timings && !has_all_sizes(*timings, sizes)) timings.reset();
    }
    if (timings) {
      ++result.kernels_reused;
    } else {
      auto measured = benchmarker.measure(graph, kernel, sizes);
      if (!measured) return measured.status().with_context(graph.nodes[kernel.nodes.front()].describe());
      timings = std::move(*measured);
      ++result.kernels_benchmarked;
      if (db) UCUDNN_RETURN_IF_ERROR(db->store(key, *timings));
    }
    const ir::Node& node = graph.nodes[kernel.nodes.front()];
    named.push_back({node.name + " " + shape_to_string(kernel.x_shape) + "*" + shape_to_string(kernel.w_shape),
                     std::move(*timings), static_cast<int>(kernel.nodes.size())});
    progress.update(static_cast<int>(i + 1));
  }

  // 2. The policy over all kernels (they share the batch of the graph).
  const int64_t batch = result.kernels.empty() ? 1 : result.kernels.front().batch();
  for (const ConvKernel& k : result.kernels)
    if (k.batch() != batch)
      return unsupported("convolutions run at different batch sizes (" + std::to_string(batch) + " and " +
                         std::to_string(k.batch()) + "); the optimizer plans one mini-batch");
  PolicyOptions policy_options;
  policy_options.batch_sizes = options.batch_sizes;
  policy_options.division_threshold = options.division_threshold;
  policy_options.share_workspace = options.share_workspace;
  const std::vector<ir::NodeId> side_candidates =
      options.streams == 2 ? runtime::side_stream_candidates(graph) : std::vector<ir::NodeId>{};
  if (options.policy == Policy::kWd && options.share_workspace)
    policy_options.concurrent_kernels = overlapping_kernel_pairs(graph, result.kernels, side_candidates);
  auto run_policy = [&]() -> Expected<PolicyResult> {
    switch (options.policy) {
      case Policy::kUndivided: return plan_undivided(named, batch, options.workspace_bytes);
      case Policy::kWr: return plan_wr(named, batch, options.workspace_bytes, policy_options);
      case Policy::kWd: return plan_wd(named, batch, options.workspace_bytes, policy_options);
    }
    return internal_error("unknown policy");
  };
  if (!result.kernels.empty()) {
    UCUDNN_ASSIGN_OR_RETURN(result.policy, run_policy());
  }

  // 3. The Plan: one step per node; convolutions take their kernel's configuration.
  runtime::Plan& plan = result.plan;
  plan.device = device;
  plan.device_name = device_key.device_name;
  plan.model_fingerprint = runtime::graph_fingerprint(graph);
  plan.policy = policy_name(options.policy);
  plan.layout = ir::graph_layout_name(graph);
  plan.predicted_conv_ms = result.policy.total_time_ms;
  plan.workspace_pool_bytes = result.policy.pool_bytes;
  plan.steps.resize(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    plan.steps[n].node = static_cast<ir::NodeId>(n);
    if (graph.nodes[n].op == OpKind::kConv) continue;
    // Other steps run alone, so they may use the pool from offset 0.
    plan.steps[n].workspace_bytes = workspace_of(graph, graph.nodes[n]);
    plan.workspace_pool_bytes = std::max(plan.workspace_pool_bytes, plan.steps[n].workspace_bytes);
  }
  for (size_t k = 0; k < result.kernels.size(); ++k) {
    const KernelPlan& kp = result.policy.kernels[k];
    for (ir::NodeId node : result.kernels[k].nodes) {
      runtime::PlanStep& step = plan.steps[node];
      step.micro_batches = kp.config.parts;
      step.workspace_offset = kp.workspace_offset;
      step.workspace_bytes = kp.workspace_size;
    }
  }
  if (!side_candidates.empty()) {
    // wd's budget bounds the pool; undivided and wr bound each kernel, so the pool may grow.
    const size_t pool_limit = options.policy == Policy::kWd ? options.workspace_bytes : SIZE_MAX;
    runtime::assign_side_streams(graph, side_candidates, pool_limit, &plan);
    for (ir::NodeId n : side_candidates)
      if (plan.steps[n].stream == runtime::kSideStream) result.side_steps.push_back(n);
  }
  runtime::plan_activation_memory(graph, &plan);
  result.optimize_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace ucudnn::optimizer
