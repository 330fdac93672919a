// Inputs the fuzzers (fuzz/, scripts/fuzz, docs/FUZZING.md) found crashing a reader, minimised and
// committed under tests/data/fuzz_regressions/<target>/: each is fed to the same reading function
// as in its fuzz target (fuzz/fuzz_inputs.cc) and must now be refused with an error that says why.
// They are files of a few bytes, so the refusal must be about the input, never out of memory: a
// reader that allocates what a few bytes claim before checking them fails here (and crashes
// under scripts/run-tests --sanitize).
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_inputs.h"
#include "tests/test_paths.h"

namespace ucudnn {
namespace {

namespace fs = std::filesystem;

struct Reader {
  const char* target;  // the folder under tests/data/fuzz_regressions and the fuzz target's name
  Status (*read)(std::string_view bytes);
};
const Reader kReaders[] = {{"onnx_model", fuzz::read_model_bytes},
                           {"tensor_pb", fuzz::read_tensor_bytes},
                           {"npy", fuzz::read_npy_bytes},
                           {"plan_json", fuzz::read_plan_bytes},
                           {"benchmark_db", fuzz::read_database_bytes},
                           {"checkpoint", fuzz::read_checkpoint_bytes},
                           {"idx", fuzz::read_idx_bytes},
                           {"image", fuzz::read_image_bytes}};

struct Reproducer {
  const Reader* reader;
  fs::path path;
};
void PrintTo(const Reproducer& reproducer, std::ostream* out) { *out << reproducer.path.string(); }

std::string regressions_dir() { return ucudnn_test::source_dir() + "/tests/data/fuzz_regressions"; }

std::vector<Reproducer> all_reproducers() {
  std::vector<Reproducer> found;
  for (const Reader& reader : kReaders) {
    const fs::path dir = fs::path(regressions_dir()) / reader.target;
    if (!fs::is_directory(dir)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file()) found.push_back({&reader, entry.path()});
  }
  return found;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class FuzzRegression : public testing::TestWithParam<Reproducer> {};

TEST_P(FuzzRegression, RefusedWithAMessage) {
  const Reproducer& reproducer = GetParam();
  ASSERT_TRUE(fs::is_regular_file(reproducer.path)) << reproducer.path;
  const Status status = reproducer.reader->read(read_file(reproducer.path));
  EXPECT_FALSE(status.is_ok()) << reproducer.path << " was accepted";
  EXPECT_FALSE(status.message().empty()) << reproducer.path << ": " << status.to_string();
  EXPECT_NE(status.code(), StatusCode::kOutOfMemory) << reproducer.path << ": " << status.to_string();
  EXPECT_NE(status.code(), StatusCode::kInternal) << reproducer.path << ": " << status.to_string();
}

INSTANTIATE_TEST_SUITE_P(Reproducers, FuzzRegression, testing::ValuesIn(all_reproducers()),
                         [](const testing::TestParamInfo<Reproducer>& info) {
                           std::string name = std::string(info.param.reader->target) + "_" +
                                              info.param.path.filename().string();
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// Every folder under tests/data/fuzz_regressions is a target's, so no reproducer is skipped by a typo.
TEST(FuzzRegressions, EveryFolderIsATarget) {
  ASSERT_TRUE(fs::is_directory(regressions_dir())) << regressions_dir();
  for (const fs::directory_entry& entry : fs::directory_iterator(regressions_dir())) {
    bool known = false;
    for (const Reader& reader : kReaders) known |= entry.path().filename() == reader.target;
    EXPECT_TRUE(known) << entry.path() << " is not the folder of a fuzz target";
  }
}

}  // namespace
}  // namespace ucudnn
