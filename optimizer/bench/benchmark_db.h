// BenchmarkDb: the SQLite store of convolution measurements.
//
// Kernels are keyed by ConvKernelKey::to_string(), measurements by kernel and
// micro-batch size:
//   meta(key TEXT PRIMARY KEY, value TEXT)          -- holds schema_version
//   kernels(id INTEGER PRIMARY KEY, key TEXT UNIQUE)
//   measurements(kernel_id, micro_batch, algorithm, name, time_ms,
//                workspace_bytes, available)        -- one row per measurement
// Several processes may share one file: WAL journal, a busy timeout, and one
// IMMEDIATE transaction per stored kernel (store replaces the kernel's rows).
// A file that is not SQLite, or holds another schema version, is reported as
// kInvalidArgument naming the path and the fix; a version-1 file (the key in
// every row) is converted in place on open; open(path, rebuild=true)
// deletes and recreates it. One BenchmarkDb object belongs to one thread.
#pragma once

#include <optional>
#include <string>

#include <vector>

#include "optimizer/benchmark_table.h"
#include "optimizer/kernel_key.h"
#include "runtime/core/status.h"

struct sqlite3;

namespace ucudnn::optimizer {

class BenchmarkDb {
 public:
  static constexpr int kSchemaVersion = 2;

  // Opens or creates the database at `path` (creating parent directories).
  // rebuild: delete whatever is there first (the CLI's --rebenchmark).
  static Expected<BenchmarkDb> open(const std::string& path, bool rebuild = false);

  BenchmarkDb(BenchmarkDb&& other) noexcept;
  BenchmarkDb& operator=(BenchmarkDb&& other) noexcept;
  BenchmarkDb(const BenchmarkDb&) = delete;
  BenchmarkDb& operator=(const BenchmarkDb&) = delete;
  ~BenchmarkDb();

  const std::string& path() const { return path_; }

  // Every stored measurement of `kernel_key`; nullopt when none is stored.
  Expected<std::optional<KernelTimings>> lookup(const std::string& kernel_key);
  // Replaces the rows of `kernel_key` with `timings`, atomically.
  Status store(const std::string& kernel_key, const KernelTimings& timings);
  // Number of distinct kernels stored.
  Expected<int64_t> kernel_count();
  // The distinct devices the stored kernels were measured on: keys with only the
  // device part filled (name, SM count, versions, dtype, math type, layout), sorted
  // by their text. Lets a machine without that device plan from the recorded rows.
  Expected<std::vector<ConvKernelKey>> device_keys();

 private:
  BenchmarkDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status error(const std::string& what) const;

  sqlite3* db_ = nullptr;
  std::string path_;
};

// $XDG_CACHE_HOME/ucudnn/benchmarks.sqlite, else ~/.cache/ucudnn/benchmarks.sqlite.
std::string default_db_path();

}  // namespace ucudnn::optimizer
