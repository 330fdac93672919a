// The per-kernel DP over micro-batch sizes, its Pareto-front variant and the
// division threshold. See dp.h for the recursions.
#include "optimizer/dp.h"

#include <algorithm>
#include <limits>
#include <set>

namespace ucudnn::optimizer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();

// Allowed sizes: in range 1..batch, deduplicated, largest first (so ties in the
// DP prefer fewer, larger parts).
std::vector<int64_t> usable_sizes(const std::vector<int64_t>& sizes, int64_t batch) {
  std::set<int64_t> unique;
  for (int64_t m : sizes) {
    if (m >= 1 && m <= batch) unique.insert(m);
  }
  return std::vector<int64_t>(unique.rbegin(), unique.rend());
}

void sort_parts(Configuration& config) {
  std::sort(config.parts.begin(), config.parts.end(), [](const MicroBatch& a, const MicroBatch& b) {
    return a.size != b.size ? a.size > b.size : a.algorithm < b.algorithm;
  });
}

std::string format_bytes(size_t bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes >= (size_t{1} << 20)) {
    text += " (" + std::to_string(static_cast<double>(bytes) / (1 << 20)) + " MiB)";
  }
  return text;
}

Status infeasible_error(const KernelTimings& timings, int64_t batch, size_t limit,
                        const std::vector<int64_t>& sizes, const std::string& kernel) {
  auto smallest = smallest_feasible_workspace(timings, batch, sizes);
  std::string message = "kernel '" + kernel + "': no configuration of batch " + std::to_string(batch) +
                        " fits a workspace limit of " + format_bytes(limit);
  if (smallest) {
    message += "; the smallest workspace that works is " + format_bytes(*smallest);
  } else {
    message += "; no configuration exists at any workspace (micro-batch sizes not measured?)";
  }
  return infeasible(message);
}

// Non-dominated algorithms at one size, ascending workspace / descending time.
std::vector<AlgoMeasurement> algorithm_front(const KernelTimings& timings, int64_t m) {
  std::vector<AlgoMeasurement> front;
  auto it = timings.by_batch.find(m);
  if (it == timings.by_batch.end()) return front;
  std::vector<AlgoMeasurement> all;
  for (const AlgoMeasurement& a : it->second) {
    if (a.available) all.push_back(a);
  }
  std::sort(all.begin(), all.end(), [](const AlgoMeasurement& a, const AlgoMeasurement& b) {
    if (a.workspace_bytes != b.workspace_bytes) return a.workspace_bytes < b.workspace_bytes;
    if (a.time_ms != b.time_ms) return a.time_ms < b.time_ms;
    return a.algorithm < b.algorithm;
  });
  for (const AlgoMeasurement& a : all) {
    if (front.empty() || a.time_ms < front.back().time_ms) front.push_back(a);
  }
  return front;
}

// A Pareto point of prefix size b, with a back-pointer for reconstruction.
struct FrontPoint {
  double time_ms;
  size_t workspace_bytes;
  int64_t part_size;   // the last part: size and algorithm
  int algorithm;
  size_t previous;     // index into the front of b − part_size
};

// Keeps the non-dominated points, sorted by ascending workspace, one per (time, ws).
std::vector<FrontPoint> prune(std::vector<FrontPoint> points) {
  std::sort(points.begin(), points.end(), [](const FrontPoint& a, const FrontPoint& b) {
    if (a.workspace_bytes != b.workspace_bytes) return a.workspace_bytes < b.workspace_bytes;
    if (a.time_ms != b.time_ms) return a.time_ms < b.time_ms;
    return a.part_size > b.part_size;  // deterministic: prefer larger last parts
  });
  std::vector<FrontPoint> kept;
  for (const FrontPoint& p : points) {
    if (kept.empty() || p.time_ms < kept.back().time_ms) kept.push_back(p);
  }
  return kept;
}

}  // namespace

std::optional<size_t> smallest_feasible_workspace(const KernelTimings& timings, int64_t batch,
                                                  const std::vector<int64_t>& sizes) {
  if (batch < 1) return std::nullopt;
  const std::vector<int64_t> usable = usable_sizes(sizes, batch);
  // The minimum workspace of any available algorithm at each usable size.
  std::vector<std::pair<int64_t, size_t>> min_ws;
  std::set<size_t> candidates;
  for (int64_t m : usable) {
    auto best = fastest_algorithm(timings, m, kNoLimit);
    if (!best) continue;
    size_t lowest = kNoLimit;
    for (const AlgoMeasurement& a : timings.by_batch.at(m)) {
      if (a.available) lowest = std::min(lowest, a.workspace_bytes);
    }
    min_ws.emplace_back(m, lowest);
    candidates.insert(lowest);
  }
  // Feasibility is monotone in the limit: scan the candidate limits upwards.
  for (size_t limit : candidates) {
    std::vector<char> reachable(static_cast<size_t>(batch) + 1, 0);
    reachable[0] = 1;
    for (int64_t b = 1; b <= batch; ++b) {
      for (auto [m, ws] : min_ws) {
        if (ws <= limit && m <= b && reachable[b - m]) {
          reachable[b] = 1;
          break;
        }
      }
    }
    if (reachable[batch]) return limit;
  }
  return std::nullopt;
}

Expected<Configuration> fastest_configuration(const KernelTimings& timings, int64_t batch,
                                              size_t workspace_limit,
                                              const std::vector<int64_t>& sizes,
                                              const std::string& kernel) {
  if (batch < 1) return invalid_argument("kernel '" + kernel + "': batch must be ≥ 1, got " + std::to_string(batch));
  const std::vector<int64_t> usable = usable_sizes(sizes, batch);
  // Best algorithm per usable size under the limit.
  std::vector<std::pair<int64_t, AlgoMeasurement>> best;
  for (int64_t m : usable) {
    if (auto a = fastest_algorithm(timings, m, workspace_limit)) best.emplace_back(m, *a);
  }
  std::vector<double> time(static_cast<size_t>(batch) + 1, kInf);
  std::vector<size_t> choice(static_cast<size_t>(batch) + 1, 0);  // index into `best`
  time[0] = 0.0;
  for (int64_t b = 1; b <= batch; ++b) {
    for (size_t i = 0; i < best.size(); ++i) {
      const auto& [m, algo] = best[i];
      if (m > b || time[b - m] == kInf) continue;
      double t = time[b - m] + algo.time_ms;
      if (t < time[b]) {
        time[b] = t;
        choice[b] = i;
      }
    }
  }
  if (time[batch] == kInf) return infeasible_error(timings, batch, workspace_limit, sizes, kernel);
  Configuration config;
  for (int64_t b = batch; b > 0;) {
    const auto& [m, algo] = best[choice[b]];
    config.parts.push_back({m, algo.algorithm});
    config.time_ms += algo.time_ms;
    config.workspace_bytes = std::max(config.workspace_bytes, algo.workspace_bytes);
    b -= m;
  }
  sort_parts(config);
  return config;
}

Expected<Configuration> undivided_configuration(const KernelTimings& timings, int64_t batch,
                                                size_t workspace_limit, const std::string& kernel) {
  return fastest_configuration(timings, batch, workspace_limit, {batch}, kernel);
}

Expected<std::vector<Configuration>> pareto_front(const KernelTimings& timings, int64_t batch,
                                                  const std::vector<int64_t>& sizes,
                                                  const std::string& kernel) {
  if (batch < 1) return invalid_argument("kernel '" + kernel + "': batch must be ≥ 1, got " + std::to_string(batch));
  const std::vector<int64_t> usable = usable_sizes(sizes, batch);
  std::vector<std::pair<int64_t, std::vector<AlgoMeasurement>>> algos;
  for (int64_t m : usable) {
    auto front = algorithm_front(timings, m);
    if (!front.empty()) algos.emplace_back(m, std::move(front));
  }
  // fronts[b]: the Pareto points of prefix size b. A configuration's (time, ws) is
  // monotone in each part, so extending only non-dominated prefixes loses nothing.
  std::vector<std::vector<FrontPoint>> fronts(static_cast<size_t>(batch) + 1);
  fronts[0].push_back({0.0, 0, 0, 0, 0});
  for (int64_t b = 1; b <= batch; ++b) {
    std::vector<FrontPoint> candidates;
    for (const auto& [m, front] : algos) {
      if (m > b) continue;
      const std::vector<FrontPoint>& previous = fronts[b - m];
      for (size_t p = 0; p < previous.size(); ++p) {
        for (const AlgoMeasurement& a : front) {
          candidates.push_back({previous[p].time_ms + a.time_ms,
                                std::max(previous[p].workspace_bytes, a.workspace_bytes), m,
                                a.algorithm, p});
        }
      }
    }
    fronts[b] = prune(std::move(candidates));
  }
  if (fronts[batch].empty()) {
    return infeasible("kernel '" + kernel + "': no configuration of batch " + std::to_string(batch) +
                      " exists at any workspace (micro-batch sizes not measured?)");
  }
  std::vector<Configuration> result;
  for (const FrontPoint& end : fronts[batch]) {
    Configuration config;
    config.time_ms = end.time_ms;
    config.workspace_bytes = end.workspace_bytes;
    const FrontPoint* point = &end;
    for (int64_t b = batch; b > 0;) {
      config.parts.push_back({point->part_size, point->algorithm});
      int64_t next = b - point->part_size;
      point = &fronts[next][point->previous];
      b = next;
    }
    sort_parts(config);
    result.push_back(std::move(config));
  }
  return result;
}

Expected<Configuration> choose_with_threshold(const KernelTimings& timings, int64_t batch,
                                              size_t workspace_limit,
                                              const std::vector<int64_t>& sizes, double threshold,
                                              const std::string& kernel) {
  UCUDNN_ASSIGN_OR_RETURN(Configuration divided,
                          fastest_configuration(timings, batch, workspace_limit, sizes, kernel));
  if (!divided.is_divided()) return divided;
  Expected<Configuration> undivided = undivided_configuration(timings, batch, workspace_limit, kernel);
  if (!undivided) return divided;
  if (undivided->time_ms - divided.time_ms > threshold * undivided->time_ms) return divided;
  return std::move(undivided).value();
}

}  // namespace ucudnn::optimizer
