// fastest_in_turns (Note [interleaved timing], interleaved_timing.h).
#include "optimizer/bench/interleaved_timing.h"

#include <algorithm>
#include <chrono>

namespace ucudnn::optimizer {

std::vector<std::optional<double>> fastest_in_turns(const std::vector<std::function<bool()>>& runs,
                                                    const CpuBenchmarkOptions& options) {
  std::vector<std::optional<double>> fastest(runs.size());
  std::vector<bool> failed(runs.size(), false);
  double spent_ms = 0;
  for (int round = 0;; ++round) {
    const int timed_rounds = round - options.warmup;  // timed rounds done before this one
    if (timed_rounds >= options.repeats && (timed_rounds >= options.max_repeats || spent_ms >= options.round_budget_ms))
      break;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (!runs[i] || failed[i]) continue;
      const auto start = std::chrono::steady_clock::now();
      const bool ok = runs[i]();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      spent_ms += ms;
      if (!ok) {
        failed[i] = true;
        fastest[i].reset();
      } else if (timed_rounds >= 0) {
        fastest[i] = std::min(fastest[i].value_or(ms), ms);
      }
    }
  }
  for (std::optional<double>& t : fastest)
    if (t) *t = std::max(*t, 1e-6);  // a time of 0 would look free (the database refuses it)
  return fastest;
}

}  // namespace ucudnn::optimizer
