// Note [shared converted weights]: the CPU's convolutions keep constant weights converted between
// runs (oneDNN's blocked layout, Note [oneDNN weights]; Winograd's transformed filters, Note
// [Winograd weights]). The executor prepares one object per call, so a convolution cut into k
// micro-batches would keep k copies, and nodes that read one initializer one each. A registry keyed
// by the target layout and a hash of W's values hands every such object the same copy while one of
// them holds it (the copy is freed with its last holder). Each holder reports its share of the bytes
// (PreparedConv::owned_bytes), so a session's total counts the copy once.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace ucudnn::cpu {

// A hash of `count` floats' bytes (64-bit FNV-1a over 64-bit words, then the tail's bytes).
inline uint64_t hash_weights(const float* w, size_t count) {
  constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t h = 14695981039346656037ull;
  const size_t bytes = count * sizeof(float), words = bytes / sizeof(uint64_t);
  const auto* raw = reinterpret_cast<const unsigned char*>(w);
  for (size_t i = 0; i < words; ++i) {
    uint64_t word;
    std::memcpy(&word, raw + i * sizeof(uint64_t), sizeof(word));
    h = (h ^ word) * kPrime;
  }
  for (size_t i = words * sizeof(uint64_t); i < bytes; ++i) h = (h ^ raw[i]) * kPrime;
  return h;
}

// `bytes` divided among the holders of `held` (0 when nothing is held).
template <typename T>
size_t share_of(const std::shared_ptr<T>& held, size_t bytes) {
  return held ? bytes / static_cast<size_t>(std::max<long>(held.use_count(), 1)) : 0;
}

// Converted copies of constant weights (Converted) per target layout (Layout, with ==) and W's values.
template <typename Layout, typename Converted>
class SharedWeights {
 public:
  // The copy of the `count` floats at `w` for `layout`; `convert()` makes one when no holder has it.
  template <typename Convert>
  std::shared_ptr<Converted> get(const Layout& layout, const float* w, size_t count, Convert&& convert) {
    const uint64_t hash = hash_weights(w, count);
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.held.expired(); }),
                   entries_.end());
    for (const Entry& e : entries_)
      if (e.hash == hash && e.count == count && e.layout == layout)
        if (std::shared_ptr<Converted> found = e.held.lock()) return found;
    std::shared_ptr<Converted> made = convert();
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
