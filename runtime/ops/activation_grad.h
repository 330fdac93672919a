// The activation_grad family's elementwise math, written once for the CPU
// kernels (runtime/cpu/activation_grad.cc) and the CUDA kernels
// (runtime/cuda/activation_grad_kernels.cu): the derivative of each activation
// ActivationGrad differentiates, and DropoutTrain's mask hash. Plain inline
// functions, __host__ __device__ under nvcc. The descriptors are in
// activation_grad.cc; the tests' references (tests/reference/) are written apart.
#pragma once

#include <math.h>

#include <cstdint>
#include <string>

#include "runtime/core/host_device.h"
#include "runtime/ir/pointwise_program.h"

namespace ucudnn {

// ActivationGrad's `activation` attribute: the forward op it differentiates, a PointwiseOp (Note [one
// formula per op], runtime/ir/pointwise_program.h): kRelu, kLeakyRelu, kSigmoid, kTanh, kHardSigmoid,
// kHardSwish, kClip or kElu.
using ActivationKind = ir::PointwiseOp;

// The kind named `name` ("Relu", ..., "Elu": the forward op's ONNX name); false when unknown.
bool activation_kind_from_name(const std::string& name, ActivationKind* kind);
// The names activation_kind_from_name accepts, for messages: "Relu, LeakyRelu, ...".
const char* activation_kind_names();

// Note [derivatives at kinks]
// Where an activation is not differentiable the derivative is PyTorch's:
// Relu'(0) = 0; LeakyRelu'(0) = alpha and Elu'(0) = alpha (the negative
// branch, x <= 0); HardSigmoid' = alpha only in the open linear region
// 0 < alpha·x + beta < 1; HardSwish' = 0 for x < -3, 1 for x > 3, (2x + 3)/6
// on [-3, 3]; Clip passes the gradient where low <= x <= high (so nowhere when
// low > high, where the output is the constant high).

// d activation(x) / dx. `alpha`, `beta`: the forward op's attributes (LeakyRelu, Elu: alpha;
// HardSigmoid: alpha, beta); `low`, `high`: Clip's bounds (±infinity when absent).
UCUDNN_HOST_DEVICE inline float activation_derivative(ActivationKind kind, float x, float alpha, float beta, float low,
                                                      float high) {
  switch (kind) {
    case ActivationKind::kRelu: return x > 0.0f ? 1.0f : 0.0f;
    case ActivationKind::kLeakyRelu: return x > 0.0f ? 1.0f : alpha;
    case ActivationKind::kSigmoid: {
      // Stable on both tails: exp of a non-positive number never overflows.
      const float e = expf(-fabsf(x));
      const float s = x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
      return s * (1.0f - s);
    }
    case ActivationKind::kTanh: {
      const float t = tanhf(x);
      return 1.0f - t * t;
    }
    case ActivationKind::kHardSigmoid: {
      const float v = alpha * x + beta;
      return v > 0.0f && v < 1.0f ? alpha : 0.0f;
    }
    case ActivationKind::kHardSwish: return x < -3.0f ? 0.0f : (x > 3.0f ? 1.0f : (2.0f * x + 3.0f) / 6.0f);
    case ActivationKind::kClip: return x >= low && x <= high ? 1.0f : 0.0f;
    case ActivationKind::kElu: return x > 0.0f ? 1.0f : alpha * expf(x);
    default: break;  // activation_kind_from_name gives no other kind
  }
  return 0.0f;
}

// Note [dropout hash]
// DropoutTrain's mask is a pure function of (seed, element index), so the CPU
// and the GPU keep exactly the same elements. A counter-based generator:
// element i takes output i of the splitmix64 stream whose state starts at
// mix(seed), i.e. mix(mix(seed) + (i + 1)·γ), γ the golden-ratio increment and
// mix splitmix64's finalizer (Steele, Lea, Flood 2014). Mixing the seed first
// keeps the masks of consecutive seeds (one per training step) unrelated —
// with seed ^ i, seed 1's mask would be a permutation of seed 0's. The top 24
// bits give u in [0, 1), exact in float; the element is kept when u >= ratio,
// so ratio 0 keeps everything. No state and no order: any thread draws any index.

UCUDNN_HOST_DEVICE inline uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The uniform draw in [0, 1) of element `index` under `seed`.
UCUDNN_HOST_DEVICE inline float dropout_uniform(int64_t seed, int64_t index) {
  const uint64_t key = splitmix64_mix(static_cast<uint64_t>(seed));
  const uint64_t bits = splitmix64_mix(key + (static_cast<uint64_t>(index) + 1) * 0x9E3779B97F4A7C15ull);
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);  // top 24 bits / 2^24
}

// The mask value of element `index`: `scale` (= 1 / (1 - ratio)) when kept, 0 when dropped.
UCUDNN_HOST_DEVICE inline float dropout_mask(int64_t seed, int64_t index, float ratio, float scale) {
  return dropout_uniform(seed, index) >= ratio ? scale : 0.0f;
}

// DropoutTrain's scale for a ratio in [0, 1): computed here once, the same float on every backend.
UCUDNN_HOST_DEVICE inline float dropout_scale(float ratio) { return 1.0f / (1.0f - ratio); }

}  // namespace ucudnn
