// Note [shared converted weights]: the CPU's convolutions and Gemm keep constant weights converted
// between runs (oneDNN's blocked layout, Note [oneDNN weights] and Note [oneDNN Gemm]; Winograd's
// transformed filters, Note [Winograd weights]). The executor prepares one object per call, so a
// convolution cut into k micro-batches would keep k copies, and nodes that read one initializer one each. A registry hands
// every such object the same copy while one of them holds it (the copy is freed with its last holder):
// a caller converts its W, and when a held copy for the same target layout has the same bytes, it
// takes that one and drops its own. A hash of W's values only narrows the candidates; equal converted
// bytes decide, so two W whose hashes collide never share. Each holder names the copy it keeps
// (PreparedConv::kept, Kernel::kept), and a session counts each copy once (Executor::kernel_bytes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/core/fnv1a.h"

namespace ucudnn::cpu {

// A hash of `count` floats' bytes (FNV-1a over 64-bit words, each mixed first): a prefilter only.
inline uint64_t hash_weights(const float* w, size_t count) {
  auto mix = [](uint64_t z) {  // splitmix64's finaliser: every input bit reaches every output bit
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  uint64_t h = kFnv1aOffsetBasis;
  const size_t bytes = count * sizeof(float), words = bytes / sizeof(uint64_t);
  const auto* raw = reinterpret_cast<const unsigned char*>(w);
  for (size_t i = 0; i < words; ++i) {
    uint64_t word;
    std::memcpy(&word, raw + i * sizeof(uint64_t), sizeof(word));
    h = fnv1a_step(h, mix(word));
  }
  for (size_t i = words * sizeof(uint64_t); i < bytes; ++i) h = fnv1a_step(h, raw[i]);
  return h;
}

// Converted copies of constant weights (Converted) per target layout (Layout, with ==) and W's values.
template <typename Layout, typename Converted>
class SharedWeights {
 public:
  // The copy of the `count` floats at `w` for `layout`. `convert()` makes this caller's copy; `same(a,
  // b)` says whether two copies hold the same bytes. A held copy equal to it is returned instead.
  template <typename Convert, typename Same>
  std::shared_ptr<Converted> get(const Layout& layout, const float* w, size_t count, Convert&& convert,
                                 Same&& same) {
    const uint64_t hash = hash_weights(w, count);
    std::shared_ptr<Converted> made = convert();  // outside the lock: conversions of other layers go on
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.held.expired(); }),
                   entries_.end());
    for (const Entry& e : entries_)
      if (e.hash == hash && e.count == count && e.layout == layout)
        if (std::shared_ptr<Converted> found = e.held.lock(); found && same(*found, *made)) return found;
    entries_.push_back({layout, hash, count, made});
    return made;
  }

 private:
  struct Entry {
    Layout layout;
    uint64_t hash = 0;
    size_t count = 0;
    std::weak_ptr<Converted> held;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace ucudnn::cpu
