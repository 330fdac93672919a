// SiLU and sigmoid over spans (runtime/cpu/vector_activations.h, Note [vector activations]): the
// dispatched code (AVX-512 where this CPU has it) and the portable Eigen code, each against the
// functions computed in double, over the whole float range, spans that end in a partial vector, and
// the special values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "runtime/cpu/vector_activations.h"

namespace {

namespace cpu = ucudnn::cpu;

using Apply = void (*)(float*, int64_t);

double silu(double x) { return x / (1.0 + std::exp(-x)); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Every 1/64 from -120 to 120, past both ends of the rational approximation and of exp's range.
std::vector<float> sweep() {
  std::vector<float> v;
  for (int i = -120 * 64; i <= 120 * 64; ++i) v.push_back(static_cast<float>(i) / 64.0f);
  return v;
}

// Eigen's logistic is within about 1e-7 of the exact one (absolute); SiLU multiplies that by |x|.
void expect_close(Apply apply, double (*exact)(double), bool scaled_by_x, const char* what) {
  std::vector<float> v = sweep();
  const std::vector<float> x = v;
  apply(v.data(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double tolerance = 4e-7 * (scaled_by_x ? std::max(1.0, std::fabs(static_cast<double>(x[i]))) : 1.0);
    ASSERT_NEAR(v[i], exact(x[i]), tolerance) << what << " at x = " << x[i];
  }
}

TEST(VectorActivations, SiluMatchesTheExactFunction) {
  std::printf("AVX-512 code: %s\n", cpu::vector_activations_use_avx512() ? "yes" : "no (this CPU has none)");
  expect_close(cpu::silu_in_place, silu, true, "silu_in_place");
  expect_close(cpu::silu_in_place_portable, silu, true, "silu_in_place_portable");
}

TEST(VectorActivations, SigmoidMatchesTheExactFunction) {
  expect_close(cpu::sigmoid_in_place, sigmoid, false, "sigmoid_in_place");
  expect_close(cpu::sigmoid_in_place_portable, sigmoid, false, "sigmoid_in_place_portable");
}

// Every span length up to three vectors and a bit, at every offset in a buffer whose guard elements
// around the span must stay as they were; values from -75 to 75, through both branches.
TEST(VectorActivations, PartialVectorsTouchOnlyTheirSpan) {
  constexpr float kGuard = 12345.0f;
  for (Apply apply : {cpu::silu_in_place, cpu::sigmoid_in_place}) {
    for (int64_t n = 0; n <= 50; ++n) {
      for (int64_t offset = 0; offset < 4; ++offset) {
        std::vector<float> buffer(static_cast<size_t>(n + 8), kGuard);
        for (int64_t i = 0; i < n; ++i) buffer[static_cast<size_t>(offset + i)] = 3.0f * static_cast<float>(i - n / 2);
        std::vector<float> expected(buffer.begin() + offset, buffer.begin() + offset + n);
        (apply == cpu::silu_in_place ? cpu::silu_in_place_portable : cpu::sigmoid_in_place_portable)(
            expected.data(), n);
        apply(buffer.data() + offset, n);
        for (int64_t i = 0; i < static_cast<int64_t>(buffer.size()); ++i) {
          const bool inside = i >= offset && i < offset + n;
          if (inside)
            EXPECT_NEAR(buffer[static_cast<size_t>(i)], expected[static_cast<size_t>(i - offset)], 1e-6)
                << "n " << n << " offset " << offset << " element " << i;
          else
            EXPECT_EQ(buffer[static_cast<size_t>(i)], kGuard) << "n " << n << " offset " << offset << " wrote " << i;
        }
      }
    }
  }
}

// NaN, ±inf and 0 in whole vectors and in a tail (a span of 40 with them at 0-3 and 36-39), on both
// paths: sigmoid(-inf) is 0 (Eigen's whole vectors give 2.9e-39), SiLU(-inf) is NaN as -inf · 0.
TEST(VectorActivations, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float special[4] = {nan, inf, -inf, 0.0f};
  auto span = [&] {
    std::vector<float> v(40, 1.0f);
    for (size_t i = 0; i < 4; ++i) v[i] = v[36 + i] = special[i];
    return v;
  };
  for (Apply sig : {cpu::sigmoid_in_place, cpu::sigmoid_in_place_portable}) {
    std::vector<float> v = span();
    sig(v.data(), static_cast<int64_t>(v.size()));
    for (size_t at : {size_t{0}, size_t{36}}) {
      EXPECT_TRUE(std::isnan(v[at])) << at;
      EXPECT_EQ(v[at + 1], 1.0f) << at;
      EXPECT_LT(std::fabs(v[at + 2]), 1e-30f) << at;
      EXPECT_EQ(v[at + 3], 0.5f) << at;
    }
  }
  for (Apply silu_fn : {cpu::silu_in_place, cpu::silu_in_place_portable}) {
    std::vector<float> v = span();
    silu_fn(v.data(), static_cast<int64_t>(v.size()));
    for (size_t at : {size_t{0}, size_t{36}}) {
      EXPECT_TRUE(std::isnan(v[at])) << at;
      EXPECT_EQ(v[at + 1], inf) << at;
      EXPECT_TRUE(std::isnan(v[at + 2])) << at;
      EXPECT_EQ(v[at + 3], 0.0f) << at;
    }
  }
}

}  // namespace
