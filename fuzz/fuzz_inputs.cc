// Bytes → the public reading functions (fuzz_inputs.h). Files go to one temporary folder per
// process ($TMPDIR, else /tmp), removed at exit; each reader's file is rewritten on every call.
#include "fuzz/fuzz_inputs.h"

#include <sqlite3.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onnx_import/onnx_import.h"
#include "optimizer/bench/benchmark_db.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/executor/executor.h"
#include "runtime/plan/plan_json.h"
#include "training/checkpoint.h"
#include "training/data/idx.h"
#include "training/data/image_decode.h"

#ifndef UCUDNN_SOURCE_DIR
#error "UCUDNN_SOURCE_DIR (the source tree, for models/tiny/tiny_cnn) must be defined"
#endif

namespace ucudnn::fuzz {
namespace {

namespace fs = std::filesystem;

// Plans whose arena and pool together exceed this are only parsed and checked, not given to an
// Executor: allocating a lying plan's terabyte is the Executor's out-of-memory error, but
// libFuzzer's malloc limit would report it as a crash.
constexpr size_t kMaxExecutorBytes = size_t{64} << 20;

void remove_temp_dir();

const std::string& temp_dir() {
  static const std::string dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/ucudnn-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("ucudnn fuzz: mkdtemp");
      std::abort();
    }
    return pattern;
  }();
  static const bool registered = std::atexit(remove_temp_dir) == 0;
  (void)registered;
  return dir;
}

void remove_temp_dir() {
  std::error_code ec;
  fs::remove_all(temp_dir(), ec);
}

// Writes `bytes` to `name` in the temporary folder and returns its path.
std::string write_temp_file(const std::string& name, std::string_view bytes) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "ucudnn fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

// The Status of a reading function's result (ok when it has a value).
template <typename T>
Status status_of(const Expected<T>& result) {
  return result.has_value() ? Status::ok() : result.status();
}

const ir::Graph& tiny_cnn_batch8() {
  static const ir::Graph graph = [] {
    onnx_import::ImportOptions options;
    options.batch = 8;  // the batch of tests/data/tiny_cnn_plan_wd.golden.json
    const char* source_dir = std::getenv("UCUDNN_SOURCE_DIR");  // CTest sets it (tests/test_paths.h)
    const std::string model =
        std::string(source_dir ? source_dir : UCUDNN_SOURCE_DIR) + "/models/tiny/tiny_cnn/model.onnx";
    auto loaded = onnx_import::load_model(model, options);
    if (!loaded) {
      std::fprintf(stderr, "ucudnn fuzz: %s\n", loaded.status().to_string().c_str());
      std::abort();
    }
    return std::move(*loaded);
  }();
  return graph;
}

// Up to 8 kernel keys stored in the database (schema version 2, else 1), read with SQLite directly.
std::vector<std::string> first_kernel_keys(const std::string& path) {
  std::vector<std::string> keys;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    for (const char* sql :
         {"SELECT key FROM kernels LIMIT 8", "SELECT DISTINCT kernel_key FROM measurements LIMIT 8"}) {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK)
        while (sqlite3_step(stmt) == SQLITE_ROW)
          if (const unsigned char* key = sqlite3_column_text(stmt, 0))
            keys.emplace_back(reinterpret_cast<const char*>(key));
      sqlite3_finalize(stmt);
      if (!keys.empty()) break;
    }
  }
  sqlite3_close(db);
  return keys;
}

// Aborts (a finding) when what a reader accepted breaks its own contract.
void require(bool holds, const char* what) {
  if (!holds) {
    std::fprintf(stderr, "ucudnn fuzz: an accepted input broke the reader's contract: %s\n", what);
    std::abort();
  }
}

// The first refusal worth reporting of two readers given the same bytes: OK when either accepted
// them; else `first`, unless `second` is out of memory or internal (never the answer to bad bytes).
Status either_accepted(const Status& first, const Status& second) {
  if (first.is_ok() || second.is_ok()) return Status::ok();
  const bool second_worse = second.code() == StatusCode::kOutOfMemory || second.code() == StatusCode::kInternal;
  return second_worse ? second : first;
}

}  // namespace

void require_clean(const Status& status) {
  if (!status.is_ok() && status.message().empty()) {
    std::fprintf(stderr, "ucudnn fuzz: an error Status (code %d) without a message\n",
                 static_cast<int>(status.code()));
    std::abort();
  }
}

Status read_model_bytes(std::string_view bytes) {
  const std::string path = write_temp_file("model.onnx", bytes);
  require_clean(status_of(onnx_import::summarize_model(path)));
  onnx_import::ImportOptions options;
  return status_of(onnx_import::load_model(path, options));
}

Status read_tensor_bytes(std::string_view bytes) {
  return status_of(onnx_import::read_tensor_file(write_temp_file("tensor.pb", bytes)));
}

Status read_npy_bytes(std::string_view bytes) {
  std::string file = "\x93NUMPY";
  file.append(bytes);
  return read_tensor_bytes(file);
}

Status read_plan_bytes(std::string_view bytes) {
  auto plan = runtime::plan_from_json(std::string(bytes));
  if (!plan) return plan.status();
  const ir::Graph& graph = tiny_cnn_batch8();
  const Status matches = runtime::check_plan_matches(*plan, graph, "cpu", "");
  require_clean(matches);
  // The Executor checks the plan whether or not its fingerprint matches (a lying plan may claim it).
  if (plan->device != "cpu" || plan->arena_bytes > kMaxExecutorBytes ||
      plan->workspace_pool_bytes > kMaxExecutorBytes)
    return matches;
  static const std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  const Status created = status_of(runtime::Executor::create(*backend, graph, std::move(*plan)));
  return matches.is_ok() ? created : matches;
}

Status read_database_bytes(std::string_view bytes) {
  const std::string path = write_temp_file("bench.sqlite", bytes);
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    std::error_code ec;
    fs::remove(path + suffix, ec);
  }
  auto db = optimizer::BenchmarkDb::open_read_only(path);  // what plan and report read with
  if (!db) return db.status();
  const Status count = status_of(db->kernel_count());
  require_clean(count);
  const Status devices = status_of(db->device_keys());
  require_clean(devices);
  Status first_error = !count.is_ok() ? count : devices;
  for (const std::string& key : first_kernel_keys(path)) {
    const Status looked_up = status_of(db->lookup(key));
    require_clean(looked_up);
    if (first_error.is_ok()) first_error = looked_up;
  }
  return first_error;
}

Status read_checkpoint_bytes(std::string_view bytes) {
  auto checkpoint = training::load_checkpoint(write_temp_file("checkpoint.ckpt", bytes));
  if (!checkpoint) return checkpoint.status();
  // The reader promises to allocate nothing beyond what the file holds.
  size_t tensor_bytes = 0;
  for (const auto& [name, tensor] : checkpoint->tensors) tensor_bytes += tensor.nbytes();
  require(tensor_bytes + 8 * checkpoint->rng_state.size() <= bytes.size(), "checkpoint data larger than the file");
  return Status::ok();
}

Status read_idx_bytes(std::string_view bytes) {
  const std::string path = write_temp_file("data.idx", bytes);
  auto images = data::read_idx_images(path);
  require_clean(status_of(images));
  if (images)
    require(images->rows > 0 && images->cols > 0 &&
                images->pixels.size() == static_cast<uint64_t>(images->count * images->rows * images->cols),
            "IDX images whose pixels are not count x rows x cols");
  auto labels = data::read_idx_labels(path);
  require_clean(status_of(labels));
  return either_accepted(status_of(images), status_of(labels));
}

Status read_image_bytes(std::string_view bytes) {
  auto image = data::decode_image(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "fuzz input");
  if (!image) return image.status();
  require(image->height > 0 && image->width > 0 &&
              image->pixels.size() == static_cast<uint64_t>(image->height * image->width * 3),
          "an RGB image whose pixels are not height x width x 3");
  return Status::ok();
}

}  // namespace ucudnn::fuzz
