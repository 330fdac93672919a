// Note [vector activations] (vector_activations.h). The AVX-512 code is compiled for that target
// function by function (the target attribute), so this file builds at the project's ISA and no
// Eigen template is ever instantiated for AVX-512 (which could leak into AVX2 code at link time).
// Note [GCC 12 AVX-512 false positive] (matmul.cc): GCC 12 reports -Wmaybe-uninitialized inside its own
// avx512fintrin.h for the intrinsics below (GCC bug 105593). Silenced for this file only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "runtime/cpu/vector_activations.h"

#include <limits>

#include <Eigen/Core>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define UCUDNN_VECTOR_ACTIVATIONS_AVX512 1
#endif

namespace ucudnn::cpu {

namespace {

#ifdef UCUDNN_VECTOR_ACTIVATIONS_AVX512

#define UCUDNN_AVX512 __attribute__((target("avx512f")))

// exp(x), Cephes' polynomial as Eigen's pexp: x = k·ln2 + r with |r| <= ln2/2, exp(r) by a degree-7
// polynomial, then scaled by 2^k (scalef, which goes down through the subnormals to 0). x is clamped
// to [-104, 88.376]: exp is 0 below and overflows above.
UCUDNN_AVX512 inline __m512 exp_avx512(__m512 x) {
  x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.3762626647950f)), _mm512_set1_ps(-104.0f));
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), x);  // ln2 in two parts
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(p, k);
}

// Eigen 3.4's scalar_logistic_op<float> (its FMA variant), lane for lane down to x = -88.7: an odd
// over an even polynomial plus 1/2 from -9 up to the cut-off where it reaches 1, exp(x) below -9
// (which goes on down to 0 where Eigen's stops at 2.9e-39); NaN stays NaN.
UCUDNN_AVX512 inline __m512 logistic_avx512(__m512 v) {
  const __m512 x = _mm512_min_ps(v, _mm512_set1_ps(15.7243833541870117f));
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 p = _mm512_fmadd_ps(x2, _mm512_set1_ps(4.37031012579801e-11f), _mm512_set1_ps(1.15627324459942e-07f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(6.08574864600143e-05f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(8.51377133304701e-03f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(2.48287947061529e-01f));
  p = _mm512_mul_ps(x, p);
  __m512 q = _mm512_fmadd_ps(x2, _mm512_set1_ps(6.10247389755681e-13f), _mm512_set1_ps(5.76102136993427e-09f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(6.29106785017040e-06f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(1.70198817374094e-03f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(1.16817656904453e-01f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(9.93151921023180e-01f));
  const __m512 logistic = _mm512_add_ps(_mm512_div_ps(p, q), _mm512_set1_ps(0.5f));
  const __mmask16 small = _mm512_cmp_ps_mask(v, _mm512_set1_ps(-9.0f), _CMP_LT_OQ);
  const __m512 result = small ? _mm512_mask_mov_ps(logistic, small, exp_avx512(v)) : logistic;
  return _mm512_mask_mov_ps(result, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);  // min() dropped a NaN
}

template <bool kSilu>
UCUDNN_AVX512 inline __m512 activation_avx512(__m512 v) {  // (a lambda would not inherit the target)
  return kSilu ? _mm512_mul_ps(v, logistic_avx512(v)) : logistic_avx512(v);
}

// Full vectors, then the tail under a mask (masked lanes are neither read nor written).
template <bool kSilu>
UCUDNN_AVX512 void apply_avx512(float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, activation_avx512<kSilu>(_mm512_loadu_ps(y + i)));
  if (i < n) {
    const auto mask = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, mask, activation_avx512<kSilu>(_mm512_maskz_loadu_ps(mask, y + i)));
  }
}

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

#endif  // UCUDNN_VECTOR_ACTIVATIONS_AVX512

}  // namespace

bool vector_activations_use_avx512() {
#ifdef UCUDNN_VECTOR_ACTIVATIONS_AVX512
  return cpu_has_avx512();
#else
  return false;
#endif
}

// The AVX-512 code where the CPU has it, else the portable one.
template <bool kSilu>
void dispatch(float* y, int64_t n) {
  if (n <= 0) return;
#ifdef UCUDNN_VECTOR_ACTIVATIONS_AVX512
  if (cpu_has_avx512()) return apply_avx512<kSilu>(y, n);
#endif
  kSilu ? silu_in_place_portable(y, n) : sigmoid_in_place_portable(y, n);
}

void silu_in_place(float* y, int64_t n) { dispatch<true>(y, n); }
void sigmoid_in_place(float* y, int64_t n) { dispatch<false>(y, n); }

void silu_in_place_portable(float* y, int64_t n) {
  Eigen::Map<Eigen::ArrayXf> a(y, n);
  // Eigen's logistic(-inf) is 2.9e-39 in whole vectors, not 0: -inf · logistic(-inf) is made NaN here.
  a = (a == -std::numeric_limits<float>::infinity()).select(std::numeric_limits<float>::quiet_NaN(), a * a.logistic());
}

void sigmoid_in_place_portable(float* y, int64_t n) {
  Eigen::Map<Eigen::ArrayXf> a(y, n);
  a = a.logistic();
}

}  // namespace ucudnn::cpu
