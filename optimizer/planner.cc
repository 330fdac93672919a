// plan_from_timings: the planner's pure part (see planner.h).
#include "optimizer/planner.h"

#include <algorithm>
#include <cstdint>

#include "optimizer/bench/device_benchmarker.h"
#include "optimizer/passes/passes.h"
#include "optimizer/plan_memory.h"
#include "optimizer/side_streams.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"
#include "runtime/plan/side_stream.h"

namespace ucudnn::optimizer {

namespace {

// The timings name every convolution node of `graph` (ir::is_convolution: Conv and the backward
// ConvGradData, ConvGradFilter) exactly once, with one table per kernel.
Status check_timings(const ir::Graph& graph, const GraphTimings& timings) {
  if (timings.kernels.size() != timings.timings.size())
    return invalid_argument("plan_from_timings: " + std::to_string(timings.kernels.size()) + " kernels but " +
                            std::to_string(timings.timings.size()) + " timing tables");
  std::vector<int> seen(graph.nodes.size(), 0);
  for (const ConvKernel& kernel : timings.kernels) {
    for (ir::NodeId id : kernel.nodes) {
      if (id < 0 || static_cast<size_t>(id) >= graph.nodes.size() || !ir::is_convolution(graph.nodes[id]))
        return invalid_argument("plan_from_timings: kernel " + kernel.key.to_string() + " names node " +
                                std::to_string(id) + ", which is not a Conv, ConvGradData or ConvGradFilter of " +
                                "graph '" + graph.name + "'");
      if (conv_node_direction(graph.nodes[id]) != kernel.direction())
        return invalid_argument("plan_from_timings: kernel " + kernel.key.to_string() + " names " +
                                graph.nodes[id].describe() + ", which computes another direction");
      ++seen[id];
    }
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (ir::is_convolution(graph.nodes[n]) && seen[n] != 1)
      return invalid_argument("plan_from_timings: " + graph.nodes[n].describe() + " is in " + std::to_string(seen[n]) +
                              " kernels' timings, expected 1");
  return Status::ok();
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

Expected<PolicyResult> run_policy(const PlannerOptions& options, const std::vector<NamedKernel>& kernels,
                                  int64_t batch, const PolicyOptions& policy_options) {
  switch (options.policy) {
    case Policy::kUndivided: return plan_undivided(kernels, batch, options.workspace_bytes);
    case Policy::kWr: return plan_wr(kernels, batch, options.workspace_bytes, policy_options);
    case Policy::kWd: return plan_wd(kernels, batch, options.workspace_bytes, policy_options);
  }
  return internal_error("unknown policy " + std::to_string(static_cast<int>(options.policy)));
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

Expected<PlanResult> plan_from_timings(const ir::Graph& graph, const std::string& device,
                                       const PlannerOptions& options, GraphTimings timings) {
  const runtime::BackendCapabilities* backend =
      options.backend != nullptr ? options.backend : device_capabilities(device);
  if (backend == nullptr) return invalid_argument("cannot plan for device '" + device + "': expected cpu or cuda");
  UCUDNN_RETURN_IF_ERROR(check_timings(graph, timings));
  PlanResult result;
  result.options = options;
  result.kernels = std::move(timings.kernels);
  result.timings = std::move(timings.timings);
  result.kernels_benchmarked = timings.kernels_benchmarked;
  result.kernels_reused = timings.kernels_reused;

  // 1. The policy over all kernels of every direction, each dividing its own mini-batch (its call's X's or
  // dY's dim 0: most networks have one, a network that stacks inputs along the batch has several).
  int64_t batch = 1;
  for (size_t k = 0; k < result.kernels.size(); ++k) {
    result.timings[k].batch = result.kernels[k].batch();
    batch = std::max(batch, result.kernels[k].batch());
  }
  PolicyOptions policy_options;
  policy_options.batch_sizes = options.batch_sizes;
  policy_options.division_threshold = options.division_threshold;
  policy_options.share_workspace = options.share_workspace;
  const std::vector<ir::NodeId> side_candidates =
      options.streams == 2 ? side_stream_candidates(graph) : std::vector<ir::NodeId>{};
  if (options.policy == Policy::kWd && options.share_workspace)
    policy_options.concurrent_kernels = overlapping_kernel_pairs(graph, result.kernels, side_candidates);
  if (!result.kernels.empty()) {
    UCUDNN_ASSIGN_OR_RETURN(result.policy, run_policy(options, result.timings, batch, policy_options));
  }

  // 2. The Plan: one step per node; convolutions (every direction) take their kernel's configuration.
  runtime::Plan& plan = result.plan;
  plan.device = device;
  plan.device_name = timings.device_name;
  plan.model_fingerprint = runtime::graph_fingerprint(graph);
  plan.policy = policy_name(options.policy);
  plan.layout = ir::graph_layout_name(graph);
  if (plan.layout == std::string("nhwc")) {
    for (const ir::Node& node : graph.nodes)  // Note [layout regions]: Convs left in NCHW
      if (node.op == OpKind::kConv && !ir::is_channels_last(node) && can_run_channels_last(graph, node))
        plan.nchw_convs.push_back(node.name);
  }
  plan.predicted_conv_ms = result.policy.total_time_ms;
  plan.workspace_pool_bytes = result.policy.pool_bytes;
  plan.steps.resize(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    plan.steps[n].node = static_cast<ir::NodeId>(n);
    if (ir::is_convolution(graph.nodes[n])) continue;
    // Other steps run alone, so they may use the pool from offset 0.
    plan.steps[n].workspace_bytes = backend->step_workspace(graph, graph.nodes[n]);
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

  // 3. Side streams, then activation memory (values a side step touches live over its window).
  if (!side_candidates.empty()) {
    // wd's budget bounds the pool; undivided and wr bound each kernel, so the pool may grow.
    const size_t pool_limit = options.policy == Policy::kWd ? options.workspace_bytes : SIZE_MAX;
    assign_side_streams(graph, side_candidates, pool_limit, &plan);
    for (ir::NodeId n : side_candidates)
      if (plan.steps[n].stream == runtime::kSideStream) result.side_steps.push_back(n);
  }
  plan.io_bound = options.io_bound;
  plan.workspace_in_arena = options.workspace_in_arena;
  plan.zero_copy_views = options.zero_copy_views;
  plan.residual_in_place = options.residual_in_place;
  plan_activation_memory(graph, &plan);
  return result;
}

}  // namespace ucudnn::optimizer
