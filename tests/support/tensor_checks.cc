// Random tensors and tensor comparisons for tests (see tensor_checks.h).
#include "tests/support/tensor_checks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace ucudnn_test {

using ucudnn::DType;
using ucudnn::Shape;
using ucudnn::Tensor;

namespace {

// Mismatching elements reported one by one before the count.
constexpr int kReportedMismatches = 5;

void set_element(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DType::kFloat32: t.data<float>()[i] = static_cast<float>(v); break;
    case DType::kFloat64: t.data<double>()[i] = v; break;
    case DType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::kInt64: t.data<int64_t>()[i] = static_cast<int64_t>(v); break;
    case DType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(v); break;
    case DType::kUInt8: t.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
    case DType::kBool: t.data<bool>()[i] = v != 0; break;
    case DType::kFloat16: t.data<ucudnn::Float16>()[i] = ucudnn::Float16(v); break;
    case DType::kBFloat16: t.data<ucudnn::BFloat16>()[i] = ucudnn::BFloat16(v); break;
    default: break;
  }
}

bool is_float(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 || d == DType::kBFloat16;
}

// Integer elements read exactly (a double loses int64 values above 2^53).
int64_t integer_element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kInt64: return t.data<int64_t>()[i];
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kUInt8: return t.data<uint8_t>()[i];
    // A bool byte is compared as stored: a kernel that never wrote it leaves a byte other than 0 or 1.
    case DType::kBool: return static_cast<const uint8_t*>(t.raw())[i];
    default: return 0;
  }
}

std::string index_text(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  std::ostringstream out;
  out << "[";
  for (size_t d = 0; d < index.size(); ++d) out << (d ? ", " : "") << index[d];
  out << "]";
  return out.str();
}

}  // namespace

uint32_t seed_for(const std::string& name) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : name) hash = (hash ^ c) * 16777619u;
  return hash;
}

Tensor make_random_tensor(DType dtype, const Shape& shape, std::mt19937& random, double low, double high) {
  Tensor t = std::move(Tensor::allocate(dtype, shape)).value();
  std::uniform_real_distribution<double> real(low, high);
  std::uniform_int_distribution<int> small(-20, 20), byte(0, 255), bit(0, 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = 0;
    switch (dtype) {
      case DType::kFloat32: case DType::kFloat64: case DType::kFloat16: case DType::kBFloat16: v = real(random); break;
      case DType::kUInt8: v = byte(random); break;
      case DType::kInt8: v = byte(random) - 128; break;
      case DType::kBool: v = bit(random); break;
      default: v = small(random); break;
    }
    set_element(t, i, v);
  }
  return t;
}

Tensor tensor_of_values(DType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor t = std::move(Tensor::allocate(dtype, shape)).value();
  for (int64_t i = 0; i < t.numel() && !values.empty(); ++i)
    set_element(t, i, values[static_cast<size_t>(i) % values.size()]);
  return t;
}

double element_value(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat64: return t.data<double>()[i];
    case DType::kFloat16: return static_cast<float>(t.data<ucudnn::Float16>()[i]);
    case DType::kBFloat16: return static_cast<float>(t.data<ucudnn::BFloat16>()[i]);
    case DType::kInt32: case DType::kInt64: case DType::kInt8: case DType::kUInt8: case DType::kBool:
      return static_cast<double>(integer_element(t, i));
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

void expect_close(const Tensor& got, const Tensor& want, Tolerance tolerance, const std::string& what) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    ADD_FAILURE() << what << ": got " << got.describe() << ", expected " << want.describe();
    return;
  }
  int64_t mismatches = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    bool close;
    double g, w, allowed = 0;
    if (is_float(want.dtype())) {
      g = element_value(got, i);
      w = element_value(want, i);
      allowed = tolerance.atol + tolerance.rtol * std::abs(w);
      if (std::isnan(w)) close = std::isnan(g);
      else if (std::isinf(w)) close = g == w;
      else close = std::abs(g - w) <= allowed;
    } else {
      const int64_t gi = integer_element(got, i), wi = integer_element(want, i);
      close = gi == wi;
      g = static_cast<double>(gi);
      w = static_cast<double>(wi);
    }
    if (close) continue;
    if (++mismatches <= kReportedMismatches) {
      std::ostringstream line;
      line.precision(9);
      line << what << ": element " << i << " " << index_text(i, want.shape()) << " is " << g << ", expected " << w;
      if (is_float(want.dtype())) line << " (|difference| " << std::abs(g - w) << " > " << allowed << ")";
      ADD_FAILURE() << line.str();
    }
  }
  if (mismatches > kReportedMismatches)
    ADD_FAILURE() << what << ": " << mismatches << " of " << want.numel() << " elements differ";
}

void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, Tolerance tolerance,
                  const std::string& what) {
  if (got.size() != want.size()) {
    ADD_FAILURE() << what << ": " << got.size() << " outputs, expected " << want.size();
    return;
  }
  for (size_t o = 0; o < got.size(); ++o)
    expect_close(got[o], want[o], tolerance, what + (got.size() > 1 ? ", output " + std::to_string(o) : ""));
}

void expect_bitwise_equal(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].dtype(), want[o].dtype()) << what << " output " << o;
    ASSERT_EQ(got[o].shape(), want[o].shape()) << what << " output " << o;
    if (want[o].nbytes() == 0) continue;
    EXPECT_EQ(std::memcmp(got[o].raw(), want[o].raw(), want[o].nbytes()), 0) << what << " output " << o;
  }
}

}  // namespace ucudnn_test
