// What `run --profile` and `train --profile` print of a profiled run: time by op type and the
// slowest nodes (text, and the same as JSON), and the median of timed runs.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ucudnn/ucudnn.h"

namespace ucudnn::cli {

// The median (the mean of the two middle values for an even count); 0 for none.
double percentile_median(std::vector<double> v);

struct OpTotal {
  std::string op;
  int count = 0;
  double ms = 0;
};
// Time per op type, slowest first (the copies count as op "copy").
std::vector<OpTotal> totals_by_op(const std::vector<StepProfile>& steps);
// The `count` slowest graph nodes (copies left out), slowest first.
std::vector<StepProfile> slowest_nodes(const std::vector<StepProfile>& steps, size_t count);

// {"total_ms", "by_op": [{op, count, ms, percent}], "slowest": [{node, op, ms}]} (10 nodes).
nlohmann::json profile_json(const std::vector<StepProfile>& steps, double total_ms);
// The same as text on stdout; `device` "cuda" says the times are device times.
void print_profile(const std::vector<StepProfile>& steps, double total_ms, const char* device);

}  // namespace ucudnn::cli
