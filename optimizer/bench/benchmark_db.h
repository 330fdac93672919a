// BenchmarkDb: the SQLite store of convolution measurements.
//
// Kernels are keyed by ConvKernelKey::to_string(), measurements by kernel and
// micro-batch size:
//   meta(key TEXT PRIMARY KEY, value TEXT)          -- schema_version; read_only (below)
//   kernels(id INTEGER PRIMARY KEY, key TEXT UNIQUE)
//   measurements(kernel_id, micro_batch, algorithm, name, time_ms,
//                workspace_bytes, available)        -- one row per measurement
//
// Reading never writes: open_read_only uses SQLITE_OPEN_READONLY, creates no
// file and changes no journal mode, so a read-only file or directory reads fine
// and a file nobody stores into stays byte-identical (Note [reading never
// writes]). A database is opened for writing only when something must be
// stored (can_store), and never when its meta table holds `read_only` — the
// mark of a shipped reference set such as models/h200_benchmarks.sqlite.
//
// Nothing read is trusted: every stored key must parse (parse_kernel_key) and
// every measurement row have the right types and a plausible value (a finite
// time, a workspace in range, a known algorithm, a micro-batch within the
// kernel's batch); the first that does not is an InvalidArgument naming the
// file, the table, the row and the column. A file that is not SQLite, or holds
// another program's tables or another schema version, is InvalidArgument too,
// found before anything is written; a version-1 file (the key in every row) is
// read as it is and converted when first opened for writing; open(path,
// rebuild=true) deletes and recreates it.
//
// Several processes may share one file: a rollback journal, a busy timeout, and
// one IMMEDIATE transaction per stored kernel (store replaces the kernel's rows).
// One BenchmarkDb object belongs to one thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "optimizer/benchmark_table.h"
#include "optimizer/kernel_key.h"
#include "runtime/core/status.h"

struct sqlite3;

namespace ucudnn::optimizer {

class BenchmarkDb {
 public:
  static constexpr int kSchemaVersion = 2;
  // The meta key that marks a read-only reference database; its value says why
  // (e.g. "H200 reference timings shipped with ucudnn").
  static constexpr const char* kReadOnlyKey = "read_only";
  // Workspaces above this are refused as corrupt (no device has 256 TiB), which
  // also keeps sums of many of them far from size_t overflow.
  static constexpr int64_t kMaxWorkspaceBytes = int64_t{1} << 48;

  // Opens the database at `path` for reading only: nothing is created or changed.
  // NotFound when there is no file; InvalidArgument when it is not a ucudnn database.
  static Expected<BenchmarkDb> open_read_only(const std::string& path);
  // Opens or creates the database at `path` for writing (creating parent
  // directories). rebuild: delete whatever is there first (the CLI's
  // --rebenchmark). Refuses a read-only reference database and a file or
  // directory this process may not write, saying so.
  static Expected<BenchmarkDb> open(const std::string& path, bool rebuild = false);

  BenchmarkDb(BenchmarkDb&& other) noexcept = default;
  BenchmarkDb& operator=(BenchmarkDb&& other) noexcept = default;
  BenchmarkDb(const BenchmarkDb&) = delete;
  BenchmarkDb& operator=(const BenchmarkDb&) = delete;
  ~BenchmarkDb() = default;

  const std::string& path() const { return path_; }

  // Every stored measurement of `kernel_key`; nullopt when none is stored.
  Expected<std::optional<KernelTimings>> lookup(const std::string& kernel_key);
  // Whether store() can write: a database opened read-only is reopened for writing
  // on the first call. False, with cannot_store_reason() saying why, for a
  // reference database (kReadOnlyKey) or a file or directory this process may not
  // write; a file that turned out corrupt is an error.
  Expected<bool> can_store();
  const std::string& cannot_store_reason() const { return cannot_store_reason_; }
  // True the first time only: lets the caller say once that timings were not stored.
  bool first_unstored_notice() { return !std::exchange(unstored_noticed_, true); }
  // Replaces the rows of `kernel_key` with `timings`, atomically (can_store() first).
  Status store(const std::string& kernel_key, const KernelTimings& timings);
  // Number of distinct kernels stored.
  Expected<int64_t> kernel_count();
  // The distinct devices the stored kernels were measured on: keys with only the
  // device part filled (name, SM count, versions, dtype, math type, layout), sorted
  // by their text. Lets a machine without that device plan from the recorded rows.
  // A stored key that does not parse is InvalidArgument naming its row.
  Expected<std::vector<ConvKernelKey>> device_keys();

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  using Connection = std::unique_ptr<sqlite3, Closer>;
  // open() without the refusal: a file that cannot be written leaves `cannot_store` set.
  static Expected<BenchmarkDb> open_for_writing(const std::string& path, std::string* cannot_store);
  static Expected<BenchmarkDb> open_reading(const std::string& path, bool immutable, int* sqlite_code);

  BenchmarkDb(Connection db, std::string path) : db_(std::move(db)), path_(std::move(path)) {}
  Status error(const std::string& what) const;

  Connection db_;
  std::string path_;
  int version_ = kSchemaVersion;     // of the file as read: 0 (empty), 1 or 2
  bool writable_ = false;            // opened for writing, schema current
  std::string cannot_store_reason_;  // set once can_store() found it cannot
  bool unstored_noticed_ = false;
};

// How many algorithms the key's device offers in its direction: on a GPU (sm_count > 0)
// cuDNN 9's count, forward plus UCUDNN_DEPTHWISE and the graph-API ids (kGpuForwardAlgorithmIds); on the CPU the CPU
// backend's for the direction's op (cpu::cpu_algorithm_count). Stored algorithm numbers
// are checked against it (0 <= algorithm < count).
int algorithm_count(const ConvKernelKey& key);
// The largest algorithm_count of any device and direction (keys that do not parse).
int max_algorithm_count();
// (Both defined in cpu_benchmarker.cc, which may ask the CPU backend.)

// $XDG_CACHE_HOME/ucudnn/benchmarks.sqlite, else ~/.cache/ucudnn/benchmarks.sqlite.
std::string default_db_path();

}  // namespace ucudnn::optimizer
