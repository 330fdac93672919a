// SiLU and sigmoid over a span of floats, in place, vectorised for the CPU this runs on.
//
// Note [vector activations]: both compute Eigen 3.4's logistic, a rational approximation
// (|error| < 1e-6 of 1; exp(x) below x = -9, where the logistic is below 1.3e-4), 16 lanes at a
// time with AVX-512 where the CPU has it (chosen once, at run time, so a build for x86-64-v3 such
// as the device bundle uses it too), else through Eigen at the build's instruction set. Both give
// SiLU(-inf) = NaN, as x / (1 + exp(-x)) does. They are what a convolution's SiLU or sigmoid epilogue
// runs after oneDNN's primitive: oneDNN 2.6's own swish post-op cost 2 to 3 times more on
// EfficientNet's 1x1 and depthwise convolutions (docs/history/PERFORMANCE-2026-12.md, "SiLU after oneDNN's
// convolutions"). One thread: the callers split the work.
#pragma once

#include <cstdint>

namespace ucudnn::cpu {

void silu_in_place(float* y, int64_t n);     // y = y · logistic(y)
void sigmoid_in_place(float* y, int64_t n);  // y = logistic(y)

// The same through Eigen at the build's instruction set: the fallback of the two above, and what
// the tests hold the AVX-512 code to.
void silu_in_place_portable(float* y, int64_t n);
void sigmoid_in_place_portable(float* y, int64_t n);

// Whether silu_in_place and sigmoid_in_place run the AVX-512 code on this CPU.
bool vector_activations_use_avx512();

}  // namespace ucudnn::cpu
