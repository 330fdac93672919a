// Tensors for tests, written once: seeded random tensors of any dtype, and the
// comparisons every op and executor test uses — expect_close (floats within
// atol + rtol·|want|, integers and bool exactly; reports the first few
// mismatching elements with their index) and expect_bitwise_equal.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace ucudnn_test {

// A seed from a name (FNV-1a), the same on every platform: each case draws its own values.
uint32_t seed_for(const std::string& name);

// A tensor of `dtype` and `shape` with values drawn from `random`: floats (float16 and bfloat16
// too, rounded) uniform in [low, high); int32 and int64 uniform in [-20, 20]; int8 and uint8 over their whole
// range; bool 0 or 1. (low and high apply to floats only.)
ucudnn::Tensor make_random_tensor(ucudnn::DType dtype, const ucudnn::Shape& shape, std::mt19937& random,
                                  double low = -1.0, double high = 1.0);

// A tensor of `dtype` and `shape` holding `values` (repeated when shorter), converted
// as C++ converts a double to the element type.
ucudnn::Tensor tensor_of_values(ucudnn::DType dtype, const ucudnn::Shape& shape, const std::vector<double>& values);

// Element i of `t` as a double (NaN for a dtype without numbers).
double element_value(const ucudnn::Tensor& t, int64_t i);

// How close a float result must be to its reference: |got - want| <= atol + rtol·|want|.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// Adds a test failure (naming `what`) unless `got` has `want`'s dtype and shape and every
// element is close: floats within `tolerance` (a NaN or infinity must be matched exactly),
// integers and bool equal. Reports the first few mismatches with their flat and
// multi-dimensional index, then how many elements differ in all.
void expect_close(const ucudnn::Tensor& got, const ucudnn::Tensor& want, Tolerance tolerance,
                  const std::string& what);
// The same for every output of a run.
void expect_close(const std::vector<ucudnn::Tensor>& got, const std::vector<ucudnn::Tensor>& want,
                  Tolerance tolerance, const std::string& what);

// Adds a test failure unless every tensor has the same dtype, shape and bytes.
void expect_bitwise_equal(const std::vector<ucudnn::Tensor>& got, const std::vector<ucudnn::Tensor>& want,
                          const std::string& what);

}  // namespace ucudnn_test
