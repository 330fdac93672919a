// profile_report.h's helpers, shared by `ucudnn run` and `ucudnn train`.
#include "tools/ucudnn/profile_report.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace ucudnn::cli {

namespace {

double percent_of(double part, double total) { return total > 0 ? 100.0 * part / total : 0.0; }

}  // namespace

double percentile_median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<OpTotal> totals_by_op(const std::vector<StepProfile>& steps) {
  std::map<std::string, OpTotal> by_op;
  for (const StepProfile& step : steps) {
    OpTotal& total = by_op[step.op];
    total.op = step.op;
    total.count += 1;
    total.ms += step.ms;
  }
  std::vector<OpTotal> totals;
  for (const auto& [op, total] : by_op) totals.push_back(total);
  std::stable_sort(totals.begin(), totals.end(), [](const OpTotal& a, const OpTotal& b) { return a.ms > b.ms; });
  return totals;
}

std::vector<StepProfile> slowest_nodes(const std::vector<StepProfile>& steps, size_t count) {
  std::vector<StepProfile> nodes;
  for (const StepProfile& step : steps)
    if (step.op != "copy") nodes.push_back(step);
  std::stable_sort(nodes.begin(), nodes.end(),
                   [](const StepProfile& a, const StepProfile& b) { return a.ms > b.ms; });
  if (nodes.size() > count) nodes.resize(count);
  return nodes;
}

nlohmann::json profile_json(const std::vector<StepProfile>& steps, double total_ms) {
  nlohmann::json by_op = nlohmann::json::array();
  for (const OpTotal& t : totals_by_op(steps))
    by_op.push_back({{"op", t.op}, {"count", t.count}, {"ms", t.ms}, {"percent", percent_of(t.ms, total_ms)}});
  nlohmann::json slowest = nlohmann::json::array();
  for (const StepProfile& s : slowest_nodes(steps, 10))
    slowest.push_back({{"node", s.node}, {"op", s.op}, {"ms", s.ms}});
  nlohmann::json each = nlohmann::json::array();  // every step in run order, the copies included
  for (const StepProfile& s : steps) each.push_back({{"node", s.node}, {"op", s.op}, {"ms", s.ms}});
  return {{"total_ms", total_ms}, {"by_op", by_op}, {"slowest", slowest}, {"steps", each}};
}

void print_profile(const std::vector<StepProfile>& steps, double total_ms, const char* device) {
  std::printf("profile:  one run, %.3f ms in all (%s)\n", total_ms,
              std::string(device) == "cuda" ? "device time, CUDA events" : "wall time");
  std::printf("  %-22s %6s %12s %7s\n", "op", "count", "total ms", "%");
  for (const OpTotal& t : totals_by_op(steps))
    std::printf("  %-22s %6d %12.3f %7.1f\n", t.op.c_str(), t.count, t.ms, percent_of(t.ms, total_ms));
  std::printf("slowest nodes:\n");
  std::printf("  %-32s %-22s %12s\n", "node", "op", "ms");
  for (const StepProfile& s : slowest_nodes(steps, 10))
    std::printf("  %-32s %-22s %12.3f\n", s.node.c_str(), s.op.c_str(), s.ms);
}

}  // namespace ucudnn::cli
