// Float16 and BFloat16: the storage of ONNX's FLOAT16 and BFLOAT16 tensors, 2 bytes each, and their
// exact conversions to and from float and double.
//
// A half value is only stored: tensors of these types are read, written and cast, and the
// arithmetic runs in float32 (Note [half-precision models], onnx_import/half_precision.h). The
// conversions round to nearest, ties to even, as IEEE 754 and every GPU's conversion instruction do:
// overflow goes to infinity, values below the smallest subnormal to (signed) zero, NaN stays a
// (quiet) NaN, and subnormals are kept. Widening (half -> float, half -> double) is exact.
//
// The functions are UCUDNN_HOST_DEVICE, so the CUDA cast kernel (runtime/cuda/kernels.cu, whose
// `static_cast<To>(from)` reaches the constructors and the conversion operator below) computes the
// same bits as the CPU.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "runtime/core/host_device.h"

namespace ucudnn {

namespace half_detail {

UCUDNN_HOST_DEVICE inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

UCUDNN_HOST_DEVICE inline float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits.
UCUDNN_HOST_DEVICE inline uint16_t float_to_half_bits(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {                                  // inf or NaN
    if (abs == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);
    return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // quiet, the payload's top bits
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to infinity
  if (abs < 0x38800000u) {                                   // below 2^-14: a subnormal half or zero
    const uint32_t exponent = abs >> 23;
    if (exponent < 102) return static_cast<uint16_t>(sign);  // below 2^-25: rounds to zero
    // The value is significand · 2^(exponent - 150); in units of 2^-24 (the half's subnormal step)
    // that is significand >> (126 - exponent), rounded.
    const uint32_t significand = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;                   // 14 ... 24
    uint32_t q = significand >> shift;
    const uint32_t rest = significand & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (q & 1u))) ++q;  // may carry into the smallest normal: right
    return static_cast<uint16_t>(sign | q);
  }
  // A normal half: rebias the exponent, keep 10 of the 23 mantissa bits, round on the other 13.
  uint32_t q = ((((abs >> 23) - 127 + 15) << 10) | ((abs & 0x7fffffu) >> 13));
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (q & 1u))) ++q;  // a carry moves into the exponent: right
  return static_cast<uint16_t>(sign | q);
}

UCUDNN_HOST_DEVICE inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return bits_float(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN (payload kept)
  if (exponent == 0) {  // zero or subnormal: mantissa · 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return bits_float(sign | float_bits(magnitude));
  }
  return bits_float(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

// bfloat16: float32's top 16 bits (1 sign, 8 exponent, 7 mantissa). Rounding adds just under half
// of the dropped part, plus the kept lowest bit for ties to even; a carry runs into the exponent,
// so the largest values round to infinity and subnormals round as any other value.
UCUDNN_HOST_DEVICE inline uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

UCUDNN_HOST_DEVICE inline float bfloat16_bits_to_float(uint16_t b) {
  return bits_float(static_cast<uint32_t>(b) << 16);
}

// Note [double to half without double rounding]
// Rounding a double first to float and then to half can round twice the wrong way (a value just
// above a half's tie becomes the tie in float, which then rounds to even). Rounding to float *to
// odd* instead (toward zero, then the lowest bit set when inexact) keeps the information that the
// value was not the tie, and float's 24 bits are at least two more than half's 11 and bfloat16's 8
// at every magnitude either can hold, which is what makes the second rounding correct.
UCUDNN_HOST_DEVICE inline float double_to_float_round_to_odd(double d) {
  const float nearest = static_cast<float>(d);
  if (d != d || static_cast<double>(nearest) == d) return nearest;  // NaN or exact
  uint32_t u = float_bits(nearest);
  if ((u & 1u) == 0) {  // rounded onto an even neighbour: take the odd one on d's side instead
    const double back = static_cast<double>(nearest);
    const bool above = (back < 0 ? -back : back) > (d < 0 ? -d : d);  // |nearest| > |d|, also for ±inf and ±0
    u = above ? u - 1 : u + 1;
  }
  return bits_float(u);
}

}  // namespace half_detail

struct BFloat16;

// IEEE 754 binary16 ("half"), ONNX FLOAT16. `bits` is the encoding; the constructors round.
struct Float16 {
  uint16_t bits;

  Float16() = default;
  // From any arithmetic type, rounded to nearest even: float directly, the others through double
  // (exact for integers up to 2^53) without double rounding (Note [double to half without double
  // rounding]).
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  UCUDNN_HOST_DEVICE explicit Float16(T value) {
    if constexpr (std::is_same_v<T, float>)
      bits = half_detail::float_to_half_bits(value);
    else
      bits = half_detail::float_to_half_bits(half_detail::double_to_float_round_to_odd(static_cast<double>(value)));
  }
  UCUDNN_HOST_DEVICE explicit inline Float16(BFloat16 value);
  // Exact. Implicit, as CUDA's __half: `static_cast<T>(h)` of any arithmetic T then converts the float
  // (an explicit operator would allow only T = float), and a half value computes as a float.
  UCUDNN_HOST_DEVICE operator float() const { return half_detail::half_bits_to_float(bits); }

  UCUDNN_HOST_DEVICE static Float16 from_bits(uint16_t b) {
    Float16 h;
    h.bits = b;
    return h;
  }
};

// bfloat16, ONNX BFLOAT16: the top half of a float32.
struct BFloat16 {
  uint16_t bits;

  BFloat16() = default;
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  UCUDNN_HOST_DEVICE explicit BFloat16(T value) {
    if constexpr (std::is_same_v<T, float>)
      bits = half_detail::float_to_bfloat16_bits(value);
    else
      bits = half_detail::float_to_bfloat16_bits(
          half_detail::double_to_float_round_to_odd(static_cast<double>(value)));
  }
  // A float16 is exact in float, so this rounds once.
  UCUDNN_HOST_DEVICE explicit BFloat16(Float16 value) : BFloat16(static_cast<float>(value)) {}
  UCUDNN_HOST_DEVICE operator float() const { return half_detail::bfloat16_bits_to_float(bits); }

  UCUDNN_HOST_DEVICE static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

UCUDNN_HOST_DEVICE inline Float16::Float16(BFloat16 value) : Float16(static_cast<float>(value)) {}

static_assert(sizeof(Float16) == 2 && sizeof(BFloat16) == 2);
static_assert(std::is_trivially_copyable_v<Float16> && std::is_trivially_copyable_v<BFloat16>);

}  // namespace ucudnn
