// The DataLoader (training/data/loader.h) and the seeds behind it (random.h): the epoch order is
// a permutation fixed by (seed, epoch), batches are the same bytes with 0, 1 or 4 threads and any
// prefetch depth, every sample is visited once per epoch, drop_last, errors naming the file; and
// the synthetic data set.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"
#include "training/data/image_encode.h"
#include "training/data/image_folder.h"
#include "training/data/loader.h"
#include "training/data/random.h"
#include "training/data/synthetic.h"

namespace ucudnn::data {
namespace {

using ucudnn_test::TempDir;

// Every batch of one epoch, copied out: images then labels.
struct Epoch {
  std::vector<std::vector<float>> images;
  std::vector<std::vector<int64_t>> labels;
};

Epoch read_epoch(DataLoader& loader, int64_t epoch) {
  loader.start_epoch(epoch);
  Epoch out;
  for (;;) {
    auto batch = loader.next();
    EXPECT_TRUE(batch.has_value()) << batch.status().to_string();
    if (!batch.has_value() || *batch == nullptr) break;
    const Batch& b = **batch;
    EXPECT_EQ(b.index, static_cast<int64_t>(out.images.size()));
    EXPECT_EQ(b.epoch, epoch);
    const float* images = b.images.data<float>();
    const int64_t* labels = b.labels.data<int64_t>();
    out.images.emplace_back(images, images + b.images.numel());
    out.labels.emplace_back(labels, labels + b.labels.numel());
  }
  return out;
}

std::unique_ptr<DataLoader> make_loader(std::shared_ptr<const Dataset> set, LoaderOptions options) {
  auto loader = DataLoader::create(std::move(set), options);
  EXPECT_TRUE(loader.has_value()) << loader.status().to_string();
  return loader.has_value() ? std::move(*loader) : nullptr;
}

// ---- seeds and order ------------------------------------------------------------------------------

TEST(DataRandom, EngineAndSplitmixAreTheStandardOnes) {
  std::mt19937_64 engine;
  engine.discard(9999);
  EXPECT_EQ(engine(), 9981545732273789042ull);  // the C++ standard's required 10000th value
  // splitmix64 from state 0 (the reference generator's first outputs: state += gamma, then mix).
  EXPECT_EQ(splitmix64(0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(splitmix64(0x9E3779B97F4A7C15ull), 0x6E789E6AA1B965F4ull);
}

TEST(DataRandom, EpochOrderIsASeededPermutation) {
  const std::vector<int64_t> plain = epoch_order(10, false, 5, 3);
  EXPECT_EQ(plain, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const std::vector<int64_t> a = epoch_order(1000, true, 5, 0);
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> expected(1000);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(sorted, expected);
  EXPECT_EQ(a, epoch_order(1000, true, 5, 0));
  EXPECT_NE(a, epoch_order(1000, true, 5, 1));
  EXPECT_NE(a, epoch_order(1000, true, 6, 0));
  EXPECT_EQ(epoch_order(1000, true, 5, 1), epoch_order(1000, true, 6, 0));  // seeded with seed + epoch
  // The documented recipe, written out: Fisher–Yates from the back with draw_below.
  std::mt19937_64 engine(5 + 2);
  std::vector<int64_t> manual(6);
  std::iota(manual.begin(), manual.end(), 0);
  for (int64_t i = 5; i > 0; --i) {
    const uint64_t threshold = (0 - static_cast<uint64_t>(i + 1)) % static_cast<uint64_t>(i + 1);
    uint64_t r = engine();
    while (r < threshold) r = engine();
    std::swap(manual[i], manual[r % static_cast<uint64_t>(i + 1)]);
  }
  EXPECT_EQ(epoch_order(6, true, 5, 2), manual);
}

TEST(DataRandom, SampleSeedsDifferPerEpochAndIndex) {
  EXPECT_EQ(sample_seed(1, 2, 3), splitmix64(splitmix64(splitmix64(1) ^ 2) ^ 3));
  EXPECT_NE(sample_seed(1, 2, 3), sample_seed(1, 3, 3));
  EXPECT_NE(sample_seed(1, 2, 3), sample_seed(1, 2, 4));
  SampleRng rng(42);
  for (int i = 0; i < 1000; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const int64_t k = rng.integer(-2, 2);
    ASSERT_GE(k, -2);
    ASSERT_LE(k, 2);
  }
}

// ---- synthetic ----------------------------------------------------------------------------------

TEST(DataSynthetic, SamplesArePureFunctionsOfSeedAndIndex) {
  auto set = SyntheticDataset::create(100, {3, 4, 5}, 7, 9);
  ASSERT_TRUE(set.has_value()) << set.status().to_string();
  std::vector<float> a(60), b(60);
  int64_t la = -1, lb = -1;
  ASSERT_TRUE((*set)->load(17, 1, a.data(), &la).is_ok());
  ASSERT_TRUE((*set)->load(17, 2, b.data(), &lb).is_ok());
  EXPECT_EQ(a, b);
  EXPECT_EQ(la, lb);
  std::vector<int64_t> per_class(7, 0);
  for (int64_t i = 0; i < 100; ++i) {
    ASSERT_TRUE((*set)->load(i, 0, a.data(), &la).is_ok());
    ASSERT_GE(la, 0);
    ASSERT_LT(la, 7);
    ++per_class[la];
    for (float v : a) ASSERT_TRUE(v >= -1.0f && v < 1.0f) << v;
  }
  EXPECT_GT(*std::min_element(per_class.begin(), per_class.end()), 3);
  ASSERT_TRUE((*set)->load(18, 0, b.data(), &lb).is_ok());
  ASSERT_TRUE((*set)->load(17, 0, a.data(), &la).is_ok());
  EXPECT_NE(a, b);
  EXPECT_FALSE(SyntheticDataset::create(0, {3, 4, 5}, 7).has_value());
  EXPECT_FALSE(SyntheticDataset::create(10, {3, 0, 5}, 7).has_value());
  EXPECT_FALSE(SyntheticDataset::create(10, {}, 7).has_value());
  EXPECT_TRUE(SyntheticDataset::create(10, {3, 2, 4, 5}, 7).has_value());  // a clip [C, T, H, W]
}

// ---- the loader ----------------------------------------------------------------------------------

TEST(DataLoader, EveryEpochVisitsEverySampleOnce) {
  // The synthetic set's label carries no index, so use images: sample i's first value is unique.
  auto set = SyntheticDataset::create(103, {1, 2, 2}, 5, 1);
  ASSERT_TRUE(set.has_value());
  std::vector<float> first(103);
  for (int64_t i = 0; i < 103; ++i) {
    std::vector<float> image(4);
    int64_t label;
    ASSERT_TRUE((*set)->load(i, 0, image.data(), &label).is_ok());
    first[i] = image[0];
  }
  auto loader = make_loader(*set, {.batch_size = 10, .shuffle = true, .seed = 3, .num_threads = 3});
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(loader->batches_per_epoch(), 11);
  std::vector<std::vector<int64_t>> orders;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    const Epoch e = read_epoch(*loader, epoch);
    ASSERT_EQ(e.images.size(), 11u);
    EXPECT_EQ(e.labels.back().size(), 3u);  // 103 = 10 · 10 + 3
    std::vector<int64_t> order;
    for (const auto& images : e.images)
      for (size_t s = 0; s < images.size(); s += 4)
        order.push_back(std::find(first.begin(), first.end(), images[s]) - first.begin());
    EXPECT_EQ(order, epoch_order(103, true, 3, epoch)) << "epoch " << epoch;
    orders.push_back(order);
  }
  EXPECT_NE(orders[0], orders[1]);
}

TEST(DataLoader, DropLastAndOptionsChecks) {
  auto set = SyntheticDataset::create(25, {1, 1, 3}, 2);
  ASSERT_TRUE(set.has_value());
  auto loader = make_loader(*set, {.batch_size = 10, .drop_last = true, .num_threads = 2});
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(loader->batches_per_epoch(), 2);
  const Epoch e = read_epoch(*loader, 0);
  EXPECT_EQ(e.labels.size(), 2u);
  EXPECT_EQ(e.images[1].size(), 30u);
  EXPECT_FALSE(DataLoader::create(*set, {.batch_size = 26, .drop_last = true}).has_value());
  EXPECT_FALSE(DataLoader::create(*set, {.batch_size = 0}).has_value());
  EXPECT_FALSE(DataLoader::create(*set, {.prefetch = 0}).has_value());
  EXPECT_FALSE(DataLoader::create(*set, {.num_threads = -1}).has_value());
  auto unstarted = make_loader(*set, {.batch_size = 5});
  EXPECT_FALSE(unstarted->next().has_value());  // next() before start_epoch()
}

// ImageFolder with the train transforms (random crops and flips): the same bytes whatever the
// thread count and prefetch depth; a new epoch draws new crops.
TEST(DataLoader, BatchesDoNotDependOnThreads) {
  TempDir dir("data_loader");
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 7; ++i) {
      std::vector<uint8_t> pixels(static_cast<size_t>(20 * (16 + i) * 3));
      for (size_t p = 0; p < pixels.size(); ++p) pixels[p] = static_cast<uint8_t>((p * (7 + k) + i * 13) % 251);
      auto bytes = i % 2 ? encode_jpeg(20, 16 + i, 3, pixels.data()) : encode_png(20, 16 + i, 3, pixels.data());
      ASSERT_TRUE(bytes.has_value());
      const std::string path = dir.file("train/c" + std::to_string(k) + "/" + std::to_string(i) + ".png");
      std::filesystem::create_directories(std::filesystem::path(path).parent_path());
      std::ofstream(path, std::ios::binary) << *bytes;  // the name's extension need not match
    }
  auto set = ImageFolderDataset::open(dir.path().string(), Split::kTrain, {.size = 8});
  ASSERT_TRUE(set.has_value()) << set.status().to_string();
  ASSERT_EQ((*set)->size(), 21);
  std::vector<Epoch> runs;
  for (const auto& [threads, prefetch] : {std::pair{0, 1}, std::pair{1, 1}, std::pair{4, 3}, std::pair{4, 1}}) {
    auto loader = make_loader(*set, {.batch_size = 4, .seed = 77, .num_threads = threads, .prefetch = prefetch});
    ASSERT_NE(loader, nullptr);
    runs.push_back(read_epoch(*loader, 0));
    runs.push_back(read_epoch(*loader, 1));
  }
  for (size_t r = 2; r < runs.size(); ++r) {
    EXPECT_EQ(runs[r].images, runs[r % 2].images) << "run " << r;
    EXPECT_EQ(runs[r].labels, runs[r % 2].labels) << "run " << r;
  }
  EXPECT_NE(runs[0].images, runs[1].images);
  ASSERT_EQ(runs[0].images.size(), 6u);
  EXPECT_EQ(runs[0].images[0].size(), static_cast<size_t>(4 * 3 * 8 * 8));
  // The batch holds each sample as the data set loads it with its seed.
  const std::vector<int64_t> order = epoch_order(21, true, 77, 1);
  std::vector<float> sample(3 * 8 * 8);
  int64_t label = -1;
  ASSERT_TRUE((*set)->load(order[5], sample_seed(77, 1, order[5]), sample.data(), &label).is_ok());
  const std::vector<float>& batch1 = runs[1].images[1];  // positions 4..7
  EXPECT_TRUE(std::equal(sample.begin(), sample.end(), batch1.begin() + 1 * sample.size()));
  EXPECT_EQ(runs[1].labels[1][1], label);
}

TEST(DataLoader, RestartingAnEpochMidwayAndErrorsNamingTheFile) {
  TempDir dir("data_loader");
  const std::vector<uint8_t> pixels(4 * 4 * 3, 100);
  for (int i = 0; i < 6; ++i) {
    const std::string path = dir.file("train/only/" + std::to_string(i) + ".png");
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << (i == 4 ? std::string("not a png") : *encode_png(4, 4, 3, pixels.data()));
  }
  auto set = ImageFolderDataset::open(dir.path().string(), Split::kTrain, {.size = 2});
  ASSERT_TRUE(set.has_value()) << set.status().to_string();
  for (int threads : {0, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    auto loader = make_loader(*set, {.batch_size = 2, .shuffle = false, .num_threads = threads});
    ASSERT_NE(loader, nullptr);
    loader->start_epoch(0);
    ASSERT_TRUE(loader->next().has_value());
    loader->start_epoch(1);  // abandons epoch 0 halfway
    auto first = loader->next();
    ASSERT_TRUE(first.has_value() && *first != nullptr);
    EXPECT_EQ((*first)->index, 0);
    EXPECT_EQ((*first)->epoch, 1);
    ASSERT_TRUE(loader->next().has_value());
    auto broken = loader->next();  // samples 4 and 5: 4.png is not an image
    ASSERT_FALSE(broken.has_value());
    EXPECT_NE(broken.status().message().find(dir.file("train/only/4.png")), std::string::npos)
        << broken.status().to_string();
    EXPECT_NE(broken.status().message().find("batch 2 of epoch 1"), std::string::npos) << broken.status().to_string();
    auto end = loader->next();
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(*end, nullptr);
  }
}

}  // namespace
}  // namespace ucudnn::data
