// Seeds, shuffles and per-sample draws of the data loader (see random.h for the exact recipe).
#include "training/data/random.h"

#include <numeric>
#include <utility>

namespace ucudnn::data {

uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t sample_seed(uint64_t seed, int64_t epoch, int64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(epoch)) ^ static_cast<uint64_t>(index));
}

uint64_t draw_below(std::mt19937_64& engine, uint64_t n) {
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n: the outputs below it would bias the result
  for (;;) {
    const uint64_t r = engine();
    if (r >= threshold) return r % n;
  }
}

std::vector<int64_t> epoch_order(int64_t size, bool shuffle, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(size));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (!shuffle) return order;
  std::mt19937_64 engine(seed + static_cast<uint64_t>(epoch));
  for (int64_t i = size - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(draw_below(engine, static_cast<uint64_t>(i) + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

double SampleRng::uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

int64_t SampleRng::integer(int64_t low, int64_t high) {
  return low + static_cast<int64_t>(draw_below(engine_, static_cast<uint64_t>(high - low) + 1));
}

std::vector<int64_t> shard_order(const std::vector<int64_t>& order, int64_t batch_size, int rank, int world_size) {
  if (world_size <= 1) return order;
  const size_t slice = static_cast<size_t>(batch_size), global = slice * static_cast<size_t>(world_size);
  std::vector<int64_t> shard;
  shard.reserve(order.size() / global * slice);
  for (size_t start = 0; start + global <= order.size(); start += global) {
    const auto first = order.begin() + static_cast<std::ptrdiff_t>(start + static_cast<size_t>(rank) * slice);
    shard.insert(shard.end(), first, first + static_cast<std::ptrdiff_t>(slice));
  }
  return shard;
}

}  // namespace ucudnn::data
