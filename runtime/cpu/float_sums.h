// The sum of a contiguous span of floats, fast and mostly in double: what the NCHW global average pool
// and ReduceMean/ReduceSum over innermost axes compute per output.
//
// One chain of double additions neither vectorizes nor pipelines (each addition waits for the last;
// GlobalAveragePool over 120x120 planes ran 5x slower than this). Runs of at most kFloatRunTerms
// terms are summed in float by Eigen, vectorized, and each run's sum is added into the double: float
// rounds over 64 terms at most (cancellation inside a run, 1e8 + 1 - 1e8, loses what a double would
// keep), double over the rest. One thread: the callers split the work.
#pragma once

#include <cstdint>

namespace ucudnn::cpu {

inline constexpr int64_t kFloatRunTerms = 64;

double sum_in_float_runs(const float* x, int64_t n);

}  // namespace ucudnn::cpu
