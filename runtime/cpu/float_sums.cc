// sum_in_float_runs (float_sums.h): a span summed by Eigen in float runs of kFloatRunTerms, the runs
// added in double.
#include "runtime/cpu/float_sums.h"

#include <algorithm>

#include <Eigen/Core>

namespace ucudnn::cpu {

double sum_in_float_runs(const float* x, int64_t n) {
  double sum = 0.0;
  for (int64_t j = 0; j < n; j += kFloatRunTerms)
    sum += Eigen::Map<const Eigen::ArrayXf>(x + j, std::min(kFloatRunTerms, n - j)).sum();
  return sum;
}

}  // namespace ucudnn::cpu
