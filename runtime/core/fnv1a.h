// FNV-1a (64-bit): the one hash of bytes ucudnn uses for fingerprints, cache keys and checksums
// (plans' model fingerprints, the generated kernels' cache names, checkpoint checksums, the ranks'
// plan comparison, the CPU's shared-weights prefilter). Not a defence against tampering.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ucudnn {

inline constexpr uint64_t kFnv1aOffsetBasis = 14695981039346656037ull;  // 0xcbf29ce484222325
inline constexpr uint64_t kFnv1aPrime = 1099511628211ull;               // 0x100000001b3

// One FNV-1a step: `hash` with `value` (a byte, or a whole mixed word) folded in.
constexpr uint64_t fnv1a_step(uint64_t hash, uint64_t value) { return (hash ^ value) * kFnv1aPrime; }

// FNV-1a over bytes, fed in pieces: add(...) as often as needed, then `hash`.
struct Fnv1a {
  uint64_t hash = kFnv1aOffsetBasis;
  void add(const void* data, size_t n) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) hash = fnv1a_step(hash, bytes[i]);
  }
  void add(std::string_view text) { add(text.data(), text.size()); }
};

// FNV-1a of `text`, starting from `basis`.
inline uint64_t fnv1a(std::string_view text, uint64_t basis = kFnv1aOffsetBasis) {
  Fnv1a h{basis};
  h.add(text);
  return h.hash;
}

// Note [legacy fnv1a basis]: plans' model fingerprints (runtime/plan/plan.cc) and the generated
// pointwise kernels' cache names (runtime/cuda/pointwise_jit.cc) were first written with this
// mistyped offset basis (a digit short of kFnv1aOffsetBasis). It is kept for them only so that
// plans saved before and kernels cached before still match; any basis hashes as well.
inline constexpr uint64_t kLegacyFnv1aBasis = 1469598103934665603ull;

}  // namespace ucudnn
