// The optimizer report (`ucudnn report`): what the planner chose for every
// convolution kernel and what it buys, as text, JSON and a self-contained HTML page.
//
// Stages: build_report turns a PlanResult (+ the graph, for node names) into
// plain ReportData — per kernel its nodes, direction (fwd, bwd_data, bwd_filter:
// a training graph's backward convolutions are kernels too), shapes, chosen configuration,
// predicted / undivided-at-the-same-limit / unlimited times, workspace, its
// Pareto front; network totals; ILP statistics (wd) — and each renderer is a
// pure function of that data. Nothing here benchmarks or touches a device.
// "Undivided at the same limit" is the fastest single algorithm at the full
// batch within the kernel's limit: the per-kernel limit (undivided, wr) or the
// kernel's slice of the pool (wd); -1 (shown "n/a") when none fits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optimizer/planner.h"
#include "runtime/core/bytes.h"
#include "runtime/ir/graph.h"

namespace ucudnn::optimizer {

struct KernelReport {
  std::string name;                // the planner's kernel name (node + shapes)
  std::vector<std::string> nodes;  // every convolution node running this kernel
  std::string direction = "fwd";   // "fwd", "bwd_data" or "bwd_filter" (conv_direction_name)
  Shape x_shape, w_shape;          // the forward input and filter at the full batch (empty when unknown)
  int64_t batch = 0;               // Σ of the chosen micro-batch sizes
  Configuration config;            // the chosen configuration
  std::string configuration;       // format_configuration(config)
  size_t workspace_offset = 0;     // the kernel's slice of the pool
  size_t workspace_size = 0;
  size_t limit_bytes = 0;          // the limit "undivided" is measured at (SIZE_MAX = none)
  double undivided_ms = -1;        // -1: no undivided algorithm fits the limit
  double unlimited_ms = -1;
  double speedup = 0;              // undivided_ms / predicted; 0 when undivided_ms < 0
  std::vector<Configuration> front;  // Pareto front (increasing workspace); empty if unavailable
  std::vector<std::string> front_configurations;  // format_configuration of each front point
};

// A FusedPointwise node of the planned graph (Note [pointwise programs], runtime/ir/pointwise_program.h).
struct FusedPointwiseReport {
  std::string node;     // named after the root of the tree it replaced
  std::string pattern;  // its `pattern` attribute: "SiLU", "Concat+BN+ReLU", ...
};

struct ReportData {
  std::string model;
  std::string device, device_name;
  std::string policy, batch_sizes;
  std::string layout = "nchw";     // the plan's activation layout: "nchw" or "nhwc"
  std::vector<std::string> nchw_convs;  // "nhwc": the Conv nodes that stay NCHW (Note [layout regions])
  // How the layout was chosen: "" when only one was planned (the one asked for, or
  // the CPU's); under --layout auto on the GPU, each layout's predicted convolution
  // time from measured timings (plan_model.h: PlannedModel::layout_note).
  std::string layout_choice;
  int64_t batch = 0;
  size_t workspace_limit = 0;      // as asked: per kernel (undivided, wr) or total (wd)
  double division_threshold = 0;
  std::vector<KernelReport> kernels;
  int conv_nodes = 0;              // Σ nodes over kernels
  double total_predicted_ms = 0;   // the PolicyResult's total
  double total_undivided_ms = -1;  // -1 when some kernel has no undivided algorithm
  int kernels_without_undivided = 0;
  double total_unlimited_ms = 0;
  size_t pool_bytes = 0;           // the convolutions' pool (PolicyResult)
  size_t plan_pool_bytes = 0;      // the Plan's pool (all steps); 0 with its workspaces in the arena
  bool workspace_in_arena = false;  // the Plan's (Note [workspace in the arena], runtime/plan/plan.h)
  size_t largest_step_workspace = 0;  // the largest workspace one step of the Plan uses
  bool has_ilp = false;            // policy wd
  IlpSolution ilp;
  double unshared_ms = -1;         // wd --share-workspace: the unshared model's total; -1 otherwise
  int streams = 1;                 // as asked (PlannerOptions::streams)
  std::vector<std::string> side_stream_nodes;  // Conv nodes on the side stream (Note [side stream])
  double optimize_seconds = 0;
  int kernels_benchmarked = 0, kernels_reused = 0;
  std::vector<FusedPointwiseReport> fused_pointwise;  // in node order
};

// "64×IMPLICIT_PRECOMP_GEMM(1) + 32×FFT(4)"; algorithm names come from `timings`
// ("algo N" when unnamed); a run of k identical parts prints as "k × (64×FFT(4))".
std::string format_configuration(const Configuration& config, const KernelTimings& timings);

// Gathers everything the renderers show. `graph` names the nodes (PlanResult::kernels
// index into it); kernels beyond result.kernels are named from the policy only.
// `layout_choice` is PlannedModel::layout_note (see ReportData::layout_choice).
ReportData build_report(const PlanResult& result, const ir::Graph& graph, const std::string& model = "",
                        const std::string& layout_choice = "");

// "nhwc, the faster of the layouts planned (--layout auto) by measured timings: predicted
// convolution time: nchw 1.2 ms, nhwc 0.9 ms", or just "nchw" when only one was planned.
std::string format_layout(const ReportData& data);
// "12.0 MiB for convolutions, 12.0 MiB in the plan", or with the plan's workspaces in its arena
// "12.0 MiB for convolutions, in the plan's activation arena instead (largest step 9.0 MiB)".
std::string format_workspace_pool(const ReportData& data);

// "52 (SiLU 16, SE gate 16, BN+ReLU 20)": the FusedPointwise nodes, counted per pattern (most
// first); "none" when there are none.
std::string format_fused_pointwise(const ReportData& data);

std::string report_text(const ReportData& data);
nlohmann::json report_json(const ReportData& data);
// A self-contained page (inline CSS and SVG, no external resources): summary,
// per-kernel table, grouped bars (undivided / chosen / unlimited) and one
// Pareto-front plot per kernel with the chosen point highlighted.
std::string report_html(const ReportData& data);

// Conveniences: build_report then render.
std::string report_text(const PlanResult& result, const ir::Graph& graph, const std::string& model = "");
nlohmann::json report_json(const PlanResult& result, const ir::Graph& graph, const std::string& model = "");
std::string report_html(const PlanResult& result, const ir::Graph& graph, const std::string& model = "");

// The asked-for limit for people: "64.0 MiB", or for an unlimited one "unlimited
// (benchmarked with the free device memory)" — what bounded the timings instead.
std::string format_workspace_limit(const ReportData& data);

// HTML/XML text escaping of & < > " '.
std::string html_escape(const std::string& text);

}  // namespace ucudnn::optimizer
