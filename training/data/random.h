// Seeds and random numbers for data loading, defined exactly (not by a standard library's
// choice of algorithm) so that a run is reproduced on any platform and with any thread count:
//
//   epoch order   std::mt19937_64 seeded with (seed + epoch); Fisher–Yates from the back: for
//                 i = n−1 … 1, j = draw_below(engine, i + 1), swap(order[i], order[j]).
//   sample seed   splitmix64(splitmix64(splitmix64(seed) ^ epoch) ^ index), index = the sample's
//                 index in the data set (not its position in the epoch).
//   sample draws  std::mt19937_64 seeded with the sample seed (SampleRng); uniform doubles from the
//                 top 53 bits of one output.
//
// draw_below(engine, n) is rejection sampling on the raw 64-bit output: outputs below
// (2^64 mod n) are drawn again, the rest give output % n, so every value is equally likely.
// std::uniform_*_distribution and std::shuffle are not used: their algorithms differ between
// standard libraries (and versions of one).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ucudnn::data {

// The splitmix64 finaliser of x (Steele, Lea, Flood 2014): x + golden gamma, then two
// xor-shift-multiply rounds. A bijection on 64 bits.
uint64_t splitmix64(uint64_t x);

// The seed of sample `index` in epoch `epoch` of a run seeded with `seed` (formula above).
uint64_t sample_seed(uint64_t seed, int64_t epoch, int64_t index);

// A uniform value in [0, n), n >= 1 (rejection sampling, see above).
uint64_t draw_below(std::mt19937_64& engine, uint64_t n);

// The order in which an epoch visits the data set's `size` samples: 0, 1, …, size−1 when
// `shuffle` is false, else that list shuffled as described above.
std::vector<int64_t> epoch_order(int64_t size, bool shuffle, uint64_t seed, int64_t epoch);

// Rank `rank`'s share of an epoch's `order` in data-parallel training of `world_size` ranks with
// `batch_size` samples each: for every whole global batch g (world_size · batch_size positions) the
// positions [g·W·B + r·B, g·W·B + (r+1)·B); a last, partial global batch is dropped. Rank r's batch
// b is then the r-th slice of global batch b, and the ranks' shares are disjoint. World size 1:
// `order` unchanged. Needs batch_size >= 1 and 0 <= rank < world_size.
std::vector<int64_t> shard_order(const std::vector<int64_t>& order, int64_t batch_size, int rank, int world_size);

// The random draws of one sample's transforms.
class SampleRng {
 public:
  explicit SampleRng(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1): the top 53 bits of one output times 2^-53.
  double uniform();
  // Uniform in [low, high): low + (high − low) · uniform().
  double uniform(double low, double high) { return low + (high - low) * uniform(); }
  // Uniform integer in [low, high] (inclusive; low <= high).
  int64_t integer(int64_t low, int64_t high);

 private:
  std::mt19937_64 engine_;
};

}  // namespace ucudnn::data
