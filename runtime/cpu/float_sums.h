// The sum of a contiguous span of floats, in double, fast: what the global average pools and
// ReduceMean/ReduceSum compute per output.
//
// One chain of double additions neither vectorizes nor pipelines (each addition waits for the last;
// GlobalAveragePool over 120x120 planes ran 5x slower than this). Runs of at most kFloatRunTerms
// terms are summed in float by Eigen, vectorized, and each run's sum is added into the double: float
// rounds over 64 terms at most, double over the rest. One thread: the callers split the work.
#pragma once

#include <cstdint>

namespace ucudnn::cpu {

inline constexpr int64_t kFloatRunTerms = 64;

double sum_in_float_runs(const float* x, int64_t n);

}  // namespace ucudnn::cpu
