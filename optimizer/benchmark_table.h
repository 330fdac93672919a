// Benchmark tables: the measured (time, workspace) of every algorithm of one
// kernel at every micro-batch size, and the policy for which micro-batch sizes
// the optimizer may use. Plain data; the DP, the database and the CSV loader
// all speak it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ucudnn::optimizer {

// One algorithm measured at one micro-batch size.
struct AlgoMeasurement {
  int algorithm = 0;            // cuDNN algorithm enum value
  std::string name;             // e.g. "IMPLICIT_PRECOMP_GEMM"; may be empty
  double time_ms = 0.0;
  size_t workspace_bytes = 0;
  bool available = true;        // false: cuDNN reported it unsupported / failed
  friend bool operator==(const AlgoMeasurement&, const AlgoMeasurement&) = default;
};

// Every measurement of one kernel, by micro-batch size.
struct KernelTimings {
  std::map<int64_t /*micro-batch*/, std::vector<AlgoMeasurement>> by_batch;
  friend bool operator==(const KernelTimings&, const KernelTimings&) = default;
};

// Which micro-batch sizes a configuration may use (the paper's batch-size policies).
enum class BatchSizePolicy { kAll, kPowerOfTwo, kUndivided };

inline const char* batch_size_policy_name(BatchSizePolicy policy) {
  switch (policy) {
    case BatchSizePolicy::kAll: return "all";
    case BatchSizePolicy::kPowerOfTwo: return "powerOfTwo";
    case BatchSizePolicy::kUndivided: return "undivided";
  }
  return "unknown";
}

// Ascending sizes the policy allows for mini-batch B (empty when B < 1):
// all = 1..B, powerOfTwo = {1, 2, 4, ... ≤ B} ∪ {B}, undivided = {B}.
inline std::vector<int64_t> micro_batch_sizes(BatchSizePolicy policy, int64_t batch) {
  std::vector<int64_t> sizes;
  if (batch < 1) return sizes;
  switch (policy) {
    case BatchSizePolicy::kAll:
      for (int64_t b = 1; b <= batch; ++b) sizes.push_back(b);
      break;
    case BatchSizePolicy::kPowerOfTwo:
      for (int64_t b = 1; b <= batch; b *= 2) sizes.push_back(b);
      if (sizes.back() != batch) sizes.push_back(batch);
      break;
    case BatchSizePolicy::kUndivided:
      sizes.push_back(batch);
      break;
  }
  return sizes;
}

// The fastest available algorithm at `micro_batch` whose workspace is ≤ limit;
// nullopt when the size was not measured or nothing fits.
inline std::optional<AlgoMeasurement> fastest_algorithm(const KernelTimings& timings,
                                                        int64_t micro_batch,
                                                        size_t workspace_limit) {
  auto it = timings.by_batch.find(micro_batch);
  if (it == timings.by_batch.end()) return std::nullopt;
  std::optional<AlgoMeasurement> best;
  for (const AlgoMeasurement& m : it->second) {
    if (!m.available || m.workspace_bytes > workspace_limit) continue;
    // Ties go to the smaller workspace, then the lower algorithm number (deterministic).
    if (!best || m.time_ms < best->time_ms ||
        (m.time_ms == best->time_ms &&
         (m.workspace_bytes < best->workspace_bytes ||
          (m.workspace_bytes == best->workspace_bytes && m.algorithm < best->algorithm)))) {
      best = m;
    }
  }
  return best;
}

}  // namespace ucudnn::optimizer
