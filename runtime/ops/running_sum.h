// CumSum's running sum along one line (runtime/ops/trilu_cumsum.h), the one definition the CPU kernel and
// the CUDA kernel both run: no runtime headers, host and device code alike.
#pragma once

#include <stdint.h>

#include <type_traits>

#include "runtime/core/host_device.h"

namespace ucudnn {

// The type a running sum is kept in: integers unsigned, so that overflow wraps.
template <typename T, bool = std::is_integral_v<T>>
struct RunningSumType {
  using type = T;
};
template <typename T>
struct RunningSumType<T, true> {
  using type = std::make_unsigned_t<T>;
};

// y[j · stride] = the sum of x[i · stride] over i <= j (i < j when exclusive; i >= j, or i > j, when reverse),
// j = 0 .. length - 1.
template <typename T>
UCUDNN_HOST_DEVICE inline void running_sum(const T* x, T* y, int64_t length, int64_t stride, bool exclusive,
                                           bool reverse) {
  using Sum = typename RunningSumType<T>::type;
  Sum sum = 0;
  for (int64_t step = 0; step < length; ++step) {
    const int64_t at = (reverse ? length - 1 - step : step) * stride;
    const Sum v = static_cast<Sum>(x[at]);
    if (!exclusive) sum = static_cast<Sum>(sum + v);
    y[at] = static_cast<T>(sum);
    if (exclusive) sum = static_cast<Sum>(sum + v);
  }
}

}  // namespace ucudnn
