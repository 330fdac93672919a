// The optimizer report's data (build_report) and its text and JSON renderings
// (report.h). The HTML page is in report_html.cc.
#include "optimizer/report.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>

#include "optimizer/bench/device_benchmarker.h"
#include "runtime/ir/pointwise_program.h"

namespace ucudnn::optimizer {

namespace {

std::string algorithm_label(const KernelTimings& timings, const MicroBatch& part) {
  auto it = timings.by_batch.find(part.size);
  if (it != timings.by_batch.end()) {
    for (const AlgoMeasurement& m : it->second)
      if (m.algorithm == part.algorithm && !m.name.empty()) return m.name + "(" + std::to_string(m.algorithm) + ")";
  }
  return "algo " + std::to_string(part.algorithm);
}

std::string format_ms(double ms) {
  if (ms < 0) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4f ms", ms);
  return buf;
}

std::string format_ratio(double ratio) {
  if (ratio <= 0) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f×", ratio);
  return buf;
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

// A time that may be absent (-1) as a JSON number or null.
nlohmann::json optional_ms(double ms) { return ms < 0 ? nlohmann::json(nullptr) : nlohmann::json(ms); }
nlohmann::json optional_bytes(size_t bytes) {
  return bytes == SIZE_MAX ? nlohmann::json(nullptr) : nlohmann::json(bytes);
}

nlohmann::json parts_json(const Configuration& config) {
  nlohmann::json parts = nlohmann::json::array();
  for (const MicroBatch& part : config.parts) parts.push_back({{"size", part.size}, {"algorithm", part.algorithm}});
  return parts;
}

}  // namespace

std::string format_configuration(const Configuration& config, const KernelTimings& timings) {
  std::vector<std::string> groups;
  for (size_t i = 0; i < config.parts.size();) {
    size_t j = i;
    while (j < config.parts.size() && config.parts[j] == config.parts[i]) ++j;
    const std::string one = std::to_string(config.parts[i].size) + "×" + algorithm_label(timings, config.parts[i]);
    groups.push_back(j - i == 1 ? one : std::to_string(j - i) + " × (" + one + ")");
    i = j;
  }
  return groups.empty() ? "(none)" : join(groups, " + ");
}

ReportData build_report(const PlanResult& result, const ir::Graph& graph, const std::string& model,
                        const std::string& layout_choice) {
  ReportData data;
  data.model = model;
  data.device = result.plan.device;
  data.device_name = result.plan.device_name;
  if (!result.plan.layout.empty()) data.layout = result.plan.layout;
  data.nchw_convs = result.plan.nchw_convs;
  data.layout_choice = layout_choice;
  data.policy = policy_name(result.options.policy);
  data.batch_sizes = batch_size_policy_name(result.options.batch_sizes);
  data.workspace_limit = result.options.workspace_bytes;
  data.division_threshold = result.options.division_threshold;
  const std::vector<int64_t> empty_sizes;
  for (size_t k = 0; k < result.policy.kernels.size(); ++k) {
    const KernelPlan& plan = result.policy.kernels[k];
    KernelReport row;
    row.name = plan.kernel;
    if (k < result.kernels.size()) {
      const ConvKernel& kernel = result.kernels[k];
      for (ir::NodeId id : kernel.nodes)
        if (id >= 0 && static_cast<size_t>(id) < graph.nodes.size()) row.nodes.push_back(graph.nodes[id].name);
      row.direction = conv_direction_name(kernel.direction());
      row.x_shape = kernel.x_shape;
      row.w_shape = kernel.w_shape;
    }
    if (row.nodes.empty()) row.nodes.push_back(plan.kernel);
    data.conv_nodes += static_cast<int>(row.nodes.size());
    for (const MicroBatch& part : plan.config.parts) row.batch += part.size;
    row.config = plan.config;
    const KernelTimings no_timings;
    const KernelTimings& timings = k < result.timings.size() ? result.timings[k].timings : no_timings;
    row.configuration = format_configuration(plan.config, timings);
    row.workspace_offset = plan.workspace_offset;
    row.workspace_size = plan.workspace_size;
    row.limit_bytes = result.options.policy == Policy::kWd ? plan.workspace_size : result.options.workspace_bytes;
    row.undivided_ms = plan.undivided_time_ms;
    row.unlimited_ms = plan.unlimited_time_ms;
    row.speedup = plan.undivided_time_ms >= 0 && plan.config.time_ms > 0 ? plan.undivided_time_ms / plan.config.time_ms
                                                                         : 0.0;
    if (k < result.timings.size()) {
      auto front = pareto_front(timings, row.batch, micro_batch_sizes(result.options.batch_sizes, row.batch),
                                plan.kernel);
      if (front) row.front = std::move(front).value();
      for (const Configuration& c : row.front) row.front_configurations.push_back(format_configuration(c, timings));
    }
    data.batch = row.batch;
    // Totals count every call site: a kernel shared by 6 nodes runs 6 times.
    const double calls = static_cast<double>(row.nodes.size());
    data.total_unlimited_ms += calls * std::max(0.0, row.unlimited_ms);
    if (row.undivided_ms < 0) ++data.kernels_without_undivided;
    data.kernels.push_back(std::move(row));
  }
  if (data.kernels.empty() && !result.kernels.empty()) data.batch = result.kernels.front().batch();
  data.total_predicted_ms = result.policy.total_time_ms;
  if (data.kernels_without_undivided == 0) {
    data.total_undivided_ms = 0;
    for (const KernelReport& row : data.kernels)
      data.total_undivided_ms += static_cast<double>(row.nodes.size()) * row.undivided_ms;
  }
  data.pool_bytes = result.policy.pool_bytes;
  data.plan_pool_bytes = result.plan.workspace_pool_bytes;
  data.workspace_in_arena = result.plan.workspace_in_arena;
  data.largest_step_workspace = runtime::largest_step_workspace(result.plan);
  data.has_ilp = result.options.policy == Policy::kWd && !data.kernels.empty();
  data.ilp = result.policy.ilp;
  data.unshared_ms = result.policy.unshared_time_ms;
  data.streams = result.options.streams;
  for (ir::NodeId id : result.side_steps)
    if (id >= 0 && static_cast<size_t>(id) < graph.nodes.size()) data.side_stream_nodes.push_back(graph.nodes[id].name);
  data.optimize_seconds = result.optimize_seconds;
  data.kernels_benchmarked = result.kernels_benchmarked;
  data.kernels_reused = result.kernels_reused;
  for (const ir::Node& node : graph.nodes)
    if (node.op == OpKind::kFusedPointwise)
      data.fused_pointwise.push_back({node.name, node.attrs.get_string(ir::kPointwisePatternAttr)});
  return data;
}

std::string format_fused_pointwise(const ReportData& data) {
  if (data.fused_pointwise.empty()) return "none";
  std::map<std::string, int> counts;
  for (const FusedPointwiseReport& f : data.fused_pointwise) ++counts[f.pattern.empty() ? "?" : f.pattern];
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [pattern, count] : sorted) parts.push_back(pattern + " " + std::to_string(count));
  return std::to_string(data.fused_pointwise.size()) + " (" + join(parts, ", ") + ")";
}

std::string format_workspace_limit(const ReportData& data) {
  if (data.workspace_limit != SIZE_MAX) return format_bytes(data.workspace_limit);
  // The benchmarkers time every algorithm that gets its workspace allocated.
  const runtime::BackendCapabilities* backend = device_capabilities(data.device);
  const bool host = backend != nullptr && backend->is_host_memory();
  return std::string("unlimited (benchmarked with the free ") + (host ? "host" : "device") + " memory)";
}

std::string format_workspace_pool(const ReportData& data) {
  const std::string policy = format_bytes(data.pool_bytes) + " for convolutions, ";
  if (!data.workspace_in_arena) return policy + format_bytes(data.plan_pool_bytes) + " in the plan";
  return policy + "in the plan's activation arena instead (largest step " + format_bytes(data.largest_step_workspace) +
         ")";
}

std::string format_layout(const ReportData& data) {
  std::string text = data.layout;
  if (!data.nchw_convs.empty())
    text += " except " + std::to_string(data.nchw_convs.size()) + " Conv nodes in nchw (" +
            join(data.nchw_convs, ", ") + ")";
  if (data.layout_choice.empty()) return text;
  return text + ", the faster of the layouts planned (--layout auto) by measured timings: " + data.layout_choice;
}

std::string report_text(const ReportData& d) {
  std::ostringstream out;
  char buf[256];
  out << "ucudnn report" << (d.model.empty() ? "" : ": " + d.model) << "\n";
  if (!d.device.empty()) out << "device:   " << d.device << (d.device_name.empty() ? "" : " (" + d.device_name + ")") << "\n";
  std::snprintf(buf, sizeof buf, "policy:   %s, %s %s, batch %lld, micro-batch sizes %s, division threshold %.1f %%\n",
                d.policy.c_str(), d.policy == "wd" ? "total budget" : "per-kernel limit",
                format_workspace_limit(d).c_str(), static_cast<long long>(d.batch), d.batch_sizes.c_str(),
                d.division_threshold * 100);
  out << buf;
  out << "layout:   " << format_layout(d) << "\n";

  for (size_t k = 0; k < d.kernels.size(); ++k) {
    const KernelReport& r = d.kernels[k];
    out << "\nkernel " << k + 1 << "/" << d.kernels.size() << " (" << r.direction << "): " << join(r.nodes, ", ")
        << "\n";
    if (!r.x_shape.empty())
      out << "  input, filter      " << shape_to_string(r.x_shape) << ", " << shape_to_string(r.w_shape) << "\n";
    out << "  configuration      " << r.configuration << "\n";
    out << "  predicted          " << format_ms(r.config.time_ms) << "\n";
    out << "  workspace          " << format_bytes(r.config.workspace_bytes);
    if (d.policy == "wd") out << " (slice " << format_bytes(r.workspace_size) << " at offset " << r.workspace_offset << ")";
    out << "\n";
    out << "  undivided          " << format_ms(r.undivided_ms) << " (within " << format_bytes(r.limit_bytes) << ")\n";
    out << "  unlimited          " << format_ms(r.unlimited_ms) << "\n";
    out << "  speedup            " << format_ratio(r.speedup) << " vs undivided\n";
  }

  out << "\nnetwork: " << d.kernels.size() << " kernels, " << d.conv_nodes << " convolution nodes\n";
  out << "  predicted          " << format_ms(d.total_predicted_ms) << "\n";
  out << "  undivided          " << format_ms(d.total_undivided_ms);
  if (d.kernels_without_undivided > 0)
    out << " (" << d.kernels_without_undivided << " kernels have no undivided algorithm within their limit)";
  out << "\n";
  out << "  unlimited          " << format_ms(d.total_unlimited_ms) << "\n";
  if (d.unshared_ms >= 0)
    out << "  without sharing    " << format_ms(d.unshared_ms)
        << " (every kernel its own slice, as in μ-cuDNN; --share-workspace buys the difference)\n";
  const double speedup = d.total_undivided_ms > 0 && d.total_predicted_ms > 0 ? d.total_undivided_ms / d.total_predicted_ms : 0;
  const double vs_unlimited = d.total_unlimited_ms > 0 ? d.total_predicted_ms / d.total_unlimited_ms : 0;
  out << "  speedup            " << format_ratio(speedup) << " vs undivided; " << format_ratio(vs_unlimited)
      << " the unlimited time\n";
  out << "  workspace pool     " << format_workspace_pool(d) << "\n";
  if (!d.fused_pointwise.empty()) out << "  fused pointwise    " << format_fused_pointwise(d) << "\n";
  if (d.streams == 2)
    out << "  side stream        " << d.side_stream_nodes.size() << " convolutions beside the main branch"
        << (d.side_stream_nodes.empty() ? "" : ": " + join(d.side_stream_nodes, ", ")) << "\n";
  if (d.has_ilp) {
    std::snprintf(buf, sizeof buf, "ILP:      objective %.4f ms, gap %.2f %%, solve time %.3f s, status %s\n",
                  d.ilp.objective_ms, d.ilp.gap * 100, d.ilp.solve_seconds, d.ilp.status.c_str());
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "optimize: %.3f s; kernels benchmarked %d, reused from the database %d\n",
                d.optimize_seconds, d.kernels_benchmarked, d.kernels_reused);
  out << buf;
  return out.str();
}

nlohmann::json report_json(const ReportData& d) {
  nlohmann::json j;
  j["model"] = d.model;
  j["device"] = d.device;
  j["device_name"] = d.device_name;
  j["policy"] = d.policy;
  j["batch"] = d.batch;
  j["batch_sizes"] = d.batch_sizes;
  j["layout"] = d.layout;
  j["nchw_convs"] = d.nchw_convs;  // "nhwc": Conv nodes that stay NCHW (regions of the other layout)
  // null when only one layout was planned; else how the chosen one compared (measured timings).
  j["layout_choice"] = d.layout_choice.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.layout_choice);
  j["workspace_limit_bytes"] = optional_bytes(d.workspace_limit);
  j["workspace_limit"] = format_workspace_limit(d);
  j["division_threshold"] = d.division_threshold;
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelReport& r : d.kernels) {
    nlohmann::json front = nlohmann::json::array();
    for (size_t i = 0; i < r.front.size(); ++i)
      front.push_back({{"time_ms", r.front[i].time_ms},
                       {"workspace_bytes", r.front[i].workspace_bytes},
                       {"configuration", r.front_configurations[i]}});
    kernels.push_back({{"name", r.name},
                       {"nodes", r.nodes},
                       {"direction", r.direction},
                       {"input_shape", r.x_shape},
                       {"filter_shape", r.w_shape},
                       {"configuration", r.configuration},
                       {"micro_batches", parts_json(r.config)},
                       {"predicted_ms", r.config.time_ms},
                       {"workspace_bytes", r.config.workspace_bytes},
                       {"workspace_offset", r.workspace_offset},
                       {"workspace_slice_bytes", r.workspace_size},
                       {"limit_bytes", optional_bytes(r.limit_bytes)},
                       {"undivided_ms", optional_ms(r.undivided_ms)},
                       {"unlimited_ms", optional_ms(r.unlimited_ms)},
                       {"speedup_vs_undivided", r.speedup > 0 ? nlohmann::json(r.speedup) : nlohmann::json(nullptr)},
                       {"pareto_front", front}});
  }
  j["kernels"] = kernels;
  j["totals"] = {{"predicted_ms", d.total_predicted_ms},
                 {"unshared_ms", d.unshared_ms >= 0 ? nlohmann::json(d.unshared_ms) : nlohmann::json()},
                 {"undivided_ms", optional_ms(d.total_undivided_ms)},
                 {"unlimited_ms", d.total_unlimited_ms},
                 {"kernels_without_undivided", d.kernels_without_undivided},
                 {"speedup_vs_undivided", d.total_undivided_ms > 0 && d.total_predicted_ms > 0
                                              ? nlohmann::json(d.total_undivided_ms / d.total_predicted_ms)
                                              : nlohmann::json(nullptr)},
                 {"ratio_to_unlimited", d.total_unlimited_ms > 0 ? nlohmann::json(d.total_predicted_ms / d.total_unlimited_ms)
                                                                 : nlohmann::json(nullptr)}};
  j["pool_bytes"] = d.pool_bytes;
  j["plan_pool_bytes"] = d.plan_pool_bytes;
  j["workspace_in_arena"] = d.workspace_in_arena;
  j["largest_step_workspace_bytes"] = d.largest_step_workspace;
  j["streams"] = d.streams;
  j["side_stream_nodes"] = d.side_stream_nodes;
  j["ilp"] = d.has_ilp ? nlohmann::json{{"objective_ms", d.ilp.objective_ms},
                                        {"gap", d.ilp.gap},
                                        {"solve_seconds", d.ilp.solve_seconds},
                                        {"status", d.ilp.status}}
                       : nlohmann::json(nullptr);
  j["optimize_seconds"] = d.optimize_seconds;
  j["kernels_benchmarked"] = d.kernels_benchmarked;
  j["kernels_reused"] = d.kernels_reused;
  nlohmann::json fused = nlohmann::json::array();
  for (const FusedPointwiseReport& f : d.fused_pointwise) fused.push_back({{"node", f.node}, {"pattern", f.pattern}});
  j["fused_pointwise"] = fused;
  return j;
}

std::string report_text(const PlanResult& result, const ir::Graph& graph, const std::string& model) {
  return report_text(build_report(result, graph, model));
}
nlohmann::json report_json(const PlanResult& result, const ir::Graph& graph, const std::string& model) {
  return report_json(build_report(result, graph, model));
}
std::string report_html(const PlanResult& result, const ir::Graph& graph, const std::string& model) {
  return report_html(build_report(result, graph, model));
}

}  // namespace ucudnn::optimizer
