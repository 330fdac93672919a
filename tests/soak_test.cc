// Soak (issue 44): one session run many times, and many load/unload cycles, on the CPU — resident
// memory must stay flat and no file descriptor may leak. CI runs a short soak; the full one
// (docs/RELIABILITY.md, "Soak") sets UCUDNN_SOAK_RUNS=100000 UCUDNN_SOAK_CYCLES=1000.
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/support/tensor_checks.h"
#include "tests/test_paths.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn_test {
namespace {

int64_t env_count(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoll(v) > 0 ? std::atoll(v) : fallback;
}

// Resident set size in bytes (/proc/self/statm's second field, in pages).
double resident_bytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

int open_descriptors() {
  int count = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d) != nullptr) ++count;
    closedir(d);
  }
  return count;
}

ucudnn::SessionOptions options() {
  ucudnn::SessionOptions o;
  o.batch = 2;
  o.threads = 1;
  o.progress = false;
  o.benchmark_db = ::testing::TempDir() + "ucudnn_soak_test.sqlite";
  return o;
}

std::string tiny_cnn() { return source_dir() + "/models/tiny/tiny_cnn/model.onnx"; }

// Growth of resident memory over the second half of the runs (the first half warms allocators and
// caches up), and of open descriptors over all of them.
TEST(Soak, OneSessionRunManyTimes) {
  const int64_t runs = env_count("UCUDNN_SOAK_RUNS", 2000);
  auto session = ucudnn::Session::load(tiny_cnn(), options());
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  std::mt19937 rng(3);
  std::vector<ucudnn::Tensor> inputs;
  for (const ucudnn::TensorInfo& info : (*session)->inputs())
    inputs.push_back(make_random_tensor(info.dtype, info.shape, rng));
  const int fds = open_descriptors();
  double half_rss = 0;
  for (int64_t r = 0; r < runs; ++r) {
    if (r == runs / 2) half_rss = resident_bytes();
    ASSERT_TRUE((*session)->run(inputs).has_value()) << "run " << r;
  }
  const double growth = resident_bytes() - half_rss;
  std::printf("soak: %lld runs; resident memory over the second half %+.1f KiB (%+.3f B a run); descriptors %d -> %d\n",
              static_cast<long long>(runs), growth / 1024, growth / static_cast<double>(runs - runs / 2), fds,
              open_descriptors());
  EXPECT_LT(growth, 4.0 * 1024 * 1024) << "resident memory grew over " << runs - runs / 2 << " runs";
  EXPECT_EQ(open_descriptors(), fds);
}

TEST(Soak, LoadAndUnloadManyTimes) {
  const int64_t cycles = env_count("UCUDNN_SOAK_CYCLES", 20);
  const int fds_before = open_descriptors();
  double half_rss = 0;
  for (int64_t c = 0; c < cycles; ++c) {
    if (c == cycles / 2) half_rss = resident_bytes();
    auto session = ucudnn::Session::load(tiny_cnn(), options());
    ASSERT_TRUE(session.has_value()) << "cycle " << c << ": " << session.status().to_string();
  }
  const double growth = resident_bytes() - half_rss;
  std::printf("soak: %lld load/unload cycles; resident memory over the second half %+.1f KiB (%+.1f B a cycle); "
              "descriptors %d -> %d\n",
              static_cast<long long>(cycles), growth / 1024, growth / static_cast<double>(cycles - cycles / 2),
              fds_before, open_descriptors());
  EXPECT_LT(growth, 8.0 * 1024 * 1024) << "resident memory grew over " << cycles - cycles / 2 << " cycles";
  EXPECT_EQ(open_descriptors(), fds_before);
}

}  // namespace
}  // namespace ucudnn_test
