// SQLite implementation of BenchmarkDb (schema and concurrency in benchmark_db.h).
#include "optimizer/bench/benchmark_db.h"

#include <chrono>
#include <thread>

#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <utility>

namespace ucudnn::optimizer {
namespace {

constexpr int kBusyTimeoutMs = 60'000;

// Version 2: each kernel key is stored once (version 1 repeated the ~200-byte
// key in every row, which made a database of every micro-batch size 1..256
// six times larger).
const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS kernels (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS measurements (
  kernel_id INTEGER NOT NULL REFERENCES kernels (id),
  micro_batch INTEGER NOT NULL,
  algorithm INTEGER NOT NULL,
  name TEXT NOT NULL,
  time_ms REAL NOT NULL,
  workspace_bytes INTEGER NOT NULL,
  available INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS measurements_by_kernel ON measurements (kernel_id, micro_batch);
)sql";

// Version 1 → 2, inside ensure_schema's transaction: the old table is set
// aside, kSchema creates the new ones, the rows are copied in their order.
const char* kSetAsideVersion1 = R"sql(
DROP INDEX IF EXISTS measurements_by_kernel;
ALTER TABLE measurements RENAME TO measurements_v1;
)sql";
const char* kCopyFromVersion1 = R"sql(
INSERT INTO kernels (key) SELECT DISTINCT kernel_key FROM measurements_v1 ORDER BY kernel_key;
INSERT INTO measurements (kernel_id, micro_batch, algorithm, name, time_ms, workspace_bytes, available)
  SELECT kernels.id, m.micro_batch, m.algorithm, m.name, m.time_ms, m.workspace_bytes, m.available
  FROM measurements_v1 AS m JOIN kernels ON kernels.key = m.kernel_key ORDER BY m.rowid;
DROP TABLE measurements_v1;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
)sql";

std::string fix_hint() {
  return "delete the file or rerun with --rebenchmark to rebuild it";
}

bool is_corruption(int code) {
  const int primary = code & 0xff;
  return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT;
}

// A prepared statement that finalizes itself.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  int prepare_code() const { return rc_; }
  sqlite3_stmt* get() { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

Status db_error(sqlite3* db, const std::string& path, const std::string& what, int code) {
  std::string message = "benchmark database '" + path + "': " + what + " failed: " +
                        (db ? sqlite3_errmsg(db) : sqlite3_errstr(code));
  if (is_corruption(code)) {
    return invalid_argument(message + " — the file is not a valid ucudnn benchmark database; " + fix_hint());
  }
  return io_error(message);
}

// Note [busy without the busy handler]: SQLite returns SQLITE_BUSY at once,
// without calling the busy handler, where waiting could deadlock — e.g. two
// connections switching a new file to WAL, or upgrading read locks to BEGIN
// IMMEDIATE together. Those statements are safe to simply try again, so exec
// retries them until kBusyTimeoutMs has passed.
Status exec(sqlite3* db, const std::string& path, const char* sql) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (int attempt = 0;; ++attempt) {
    char* raw_error = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &raw_error);
    sqlite3_free(raw_error);
    if (rc == SQLITE_OK) return Status::ok();
    const int primary = rc & 0xff;
    if ((primary == SQLITE_BUSY || primary == SQLITE_LOCKED) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1 + attempt % 20));
      continue;
    }
    return db_error(db, path, std::string("'") + sql + "'", rc);
  }
}

// Creates the schema in an empty file, or checks the one that is there.
Status ensure_schema(sqlite3* db, const std::string& path) {
  UCUDNN_RETURN_IF_ERROR(exec(db, path, "BEGIN IMMEDIATE"));
  auto body = [&]() -> Status {
    int table_count = 0;
    bool has_meta = false;
    {
      Statement tables(db, "SELECT name FROM sqlite_master WHERE type = 'table'");
      if (tables.prepare_code() != SQLITE_OK) return db_error(db, path, "reading the table list", tables.prepare_code());
      int rc;
      while ((rc = sqlite3_step(tables.get())) == SQLITE_ROW) {
        ++table_count;
        const char* name = reinterpret_cast<const char*>(sqlite3_column_text(tables.get(), 0));
        if (name && std::string(name) == "meta") has_meta = true;
      }
      if (rc != SQLITE_DONE) return db_error(db, path, "reading the table list", rc);
    }
    if (table_count == 0) {
      UCUDNN_RETURN_IF_ERROR(exec(db, path, kSchema));
      const std::string insert = "INSERT INTO meta (key, value) VALUES ('schema_version', '" +
                                 std::to_string(BenchmarkDb::kSchemaVersion) + "')";
      return exec(db, path, insert.c_str());
    }
    if (!has_meta) {
      return invalid_argument("benchmark database '" + path +
                              "' is an SQLite file without ucudnn's 'meta' table (not a ucudnn benchmark database); " +
                              fix_hint());
    }
    std::string found = "(none)";
    {  // finalized before a migration changes the tables
      Statement version(db, "SELECT value FROM meta WHERE key = 'schema_version'");
      if (version.prepare_code() != SQLITE_OK) return db_error(db, path, "reading schema_version", version.prepare_code());
      const int rc = sqlite3_step(version.get());
      if (rc == SQLITE_ROW) {
        const char* text = reinterpret_cast<const char*>(sqlite3_column_text(version.get(), 0));
        found = text ? text : "(null)";
      } else if (rc != SQLITE_DONE) {
        return db_error(db, path, "reading schema_version", rc);
      }
    }
    if (found == "1") {
      UCUDNN_RETURN_IF_ERROR(exec(db, path, kSetAsideVersion1));
      UCUDNN_RETURN_IF_ERROR(exec(db, path, kSchema));
      return exec(db, path, kCopyFromVersion1);
    } else if (found != std::to_string(BenchmarkDb::kSchemaVersion)) {
      return invalid_argument("benchmark database '" + path + "' has schema version " + found +
                              " but this ucudnn uses version " + std::to_string(BenchmarkDb::kSchemaVersion) +
                              "; " + fix_hint());
    }
    return exec(db, path, kSchema);  // idempotent: adds a missing index
  };
  Status status = body();
  if (!status.is_ok()) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  }
  return exec(db, path, "COMMIT");
}

Status remove_database_files(const std::string& path) {
  for (const std::string suffix : {"", "-wal", "-shm", "-journal"}) {
    std::error_code ec;
    std::filesystem::remove(path + suffix, ec);
    if (ec) return io_error("cannot delete '" + path + suffix + "' to rebuild the benchmark database: " + ec.message());
  }
  return Status::ok();
}

}  // namespace

Expected<BenchmarkDb> BenchmarkDb::open(const std::string& path, bool rebuild) {
  if (path.empty()) return invalid_argument("benchmark database path is empty");
  if (rebuild) UCUDNN_RETURN_IF_ERROR(remove_database_files(path));
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) return io_error("cannot create the directory '" + parent.string() + "' for the benchmark database: " + ec.message());
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  BenchmarkDb db(raw, path);  // closes `raw` on every return below
  if (rc != SQLITE_OK) return db_error(raw, path, "opening", rc);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  // The first statement reads the header: a garbage file fails here with NOTADB.
  UCUDNN_RETURN_IF_ERROR(exec(raw, path, "PRAGMA journal_mode = WAL"));
  UCUDNN_RETURN_IF_ERROR(exec(raw, path, "PRAGMA synchronous = NORMAL"));
  UCUDNN_RETURN_IF_ERROR(ensure_schema(raw, path));
  return db;
}

BenchmarkDb::BenchmarkDb(BenchmarkDb&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

BenchmarkDb& BenchmarkDb::operator=(BenchmarkDb&& other) noexcept {
  if (this != &other) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

BenchmarkDb::~BenchmarkDb() {
  if (db_) sqlite3_close_v2(db_);
}

Status BenchmarkDb::error(const std::string& what) const {
  return db_error(db_, path_, what, sqlite3_extended_errcode(db_));
}

Expected<std::optional<KernelTimings>> BenchmarkDb::lookup(const std::string& kernel_key) {
  Statement select(db_,
                   "SELECT m.micro_batch, m.algorithm, m.name, m.time_ms, m.workspace_bytes, m.available "
                   "FROM measurements AS m JOIN kernels ON kernels.id = m.kernel_id "
                   "WHERE kernels.key = ?1 ORDER BY m.micro_batch, m.rowid");
  if (select.prepare_code() != SQLITE_OK) return error("preparing the lookup");
  sqlite3_bind_text(select.get(), 1, kernel_key.c_str(), static_cast<int>(kernel_key.size()), SQLITE_TRANSIENT);
  KernelTimings timings;
  bool any = false;
  int rc;
  while ((rc = sqlite3_step(select.get())) == SQLITE_ROW) {
    sqlite3_stmt* s = select.get();
    AlgoMeasurement m;
    m.algorithm = sqlite3_column_int(s, 1);
    const char* name = reinterpret_cast<const char*>(sqlite3_column_text(s, 2));
    m.name = name ? name : "";
    m.time_ms = sqlite3_column_double(s, 3);
    m.workspace_bytes = static_cast<size_t>(sqlite3_column_int64(s, 4));
    m.available = sqlite3_column_int(s, 5) != 0;
    timings.by_batch[sqlite3_column_int64(s, 0)].push_back(std::move(m));
    any = true;
  }
  if (rc != SQLITE_DONE) return error("looking up kernel '" + kernel_key + "'");
  if (!any) return std::optional<KernelTimings>();
  return std::optional<KernelTimings>(std::move(timings));
}

Status BenchmarkDb::store(const std::string& kernel_key, const KernelTimings& timings) {
  UCUDNN_RETURN_IF_ERROR(exec(db_, path_, "BEGIN IMMEDIATE")
                             .with_context("starting a transaction to store kernel '" + kernel_key + "'"));
  auto body = [&]() -> Status {
    Statement add_kernel(db_, "INSERT OR IGNORE INTO kernels (key) VALUES (?1)");
    if (add_kernel.prepare_code() != SQLITE_OK) return error("preparing the kernel insert");
    sqlite3_bind_text(add_kernel.get(), 1, kernel_key.c_str(), static_cast<int>(kernel_key.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(add_kernel.get()) != SQLITE_DONE) return error("adding kernel '" + kernel_key + "'");
    Statement find_kernel(db_, "SELECT id FROM kernels WHERE key = ?1");
    if (find_kernel.prepare_code() != SQLITE_OK) return error("preparing the kernel id lookup");
    sqlite3_bind_text(find_kernel.get(), 1, kernel_key.c_str(), static_cast<int>(kernel_key.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(find_kernel.get()) != SQLITE_ROW) return error("finding the id of kernel '" + kernel_key + "'");
    const sqlite3_int64 kernel_id = sqlite3_column_int64(find_kernel.get(), 0);
    Statement remove(db_, "DELETE FROM measurements WHERE kernel_id = ?1");
    if (remove.prepare_code() != SQLITE_OK) return error("preparing the delete");
    sqlite3_bind_int64(remove.get(), 1, kernel_id);
    if (sqlite3_step(remove.get()) != SQLITE_DONE) return error("deleting old rows of kernel '" + kernel_key + "'");
    Statement insert(db_,
                     "INSERT INTO measurements (kernel_id, micro_batch, algorithm, name, time_ms, "
                     "workspace_bytes, available) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (insert.prepare_code() != SQLITE_OK) return error("preparing the insert");
    sqlite3_stmt* s = insert.get();
    for (const auto& [micro_batch, measurements] : timings.by_batch) {
      for (const AlgoMeasurement& m : measurements) {
        sqlite3_reset(s);
        sqlite3_bind_int64(s, 1, kernel_id);
        sqlite3_bind_int64(s, 2, micro_batch);
        sqlite3_bind_int(s, 3, m.algorithm);
        sqlite3_bind_text(s, 4, m.name.c_str(), static_cast<int>(m.name.size()), SQLITE_TRANSIENT);
        sqlite3_bind_double(s, 5, m.time_ms);
        sqlite3_bind_int64(s, 6, static_cast<sqlite3_int64>(m.workspace_bytes));
        sqlite3_bind_int(s, 7, m.available ? 1 : 0);
        if (sqlite3_step(s) != SQLITE_DONE) return error("inserting a row of kernel '" + kernel_key + "'");
      }
    }
    return Status::ok();
  };
  Status status = body();
  if (!status.is_ok()) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  }
  if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    Status commit_error = error("committing kernel '" + kernel_key + "'");
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return commit_error;
  }
  return Status::ok();
}

Expected<int64_t> BenchmarkDb::kernel_count() {
  Statement count(db_, "SELECT COUNT(DISTINCT kernel_id) FROM measurements");
  if (count.prepare_code() != SQLITE_OK) return error("preparing the kernel count");
  if (sqlite3_step(count.get()) != SQLITE_ROW) return error("counting kernels");
  return static_cast<int64_t>(sqlite3_column_int64(count.get(), 0));
}

namespace {

std::string unescape(const std::string& text) {  // inverse of kernel_key.cc's escape
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string code = text.substr(i, 3);
    if (code == "%3B" || code == "%3D" || code == "%25") {
      out += code == "%3B" ? ';' : code == "%3D" ? '=' : '%';
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The device part of a stored key ("dev=...;sm=...;...;layout=..."), or nullopt
// when a field is missing or malformed (a row written by something else).
std::optional<ConvKernelKey> parse_device_part(const std::string& text) {
  std::map<std::string, std::string> fields;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(';', begin);
    if (end == std::string::npos) end = text.size();
    const std::string field = text.substr(begin, end - begin);
    const size_t eq = field.find('=');
    if (eq == std::string::npos) return std::nullopt;
    fields[field.substr(0, eq)] = unescape(field.substr(eq + 1));
    begin = end + 1;
  }
  for (const char* name : {"dev", "sm", "cuda", "cudnn", "drv", "dtype", "math", "layout"})
    if (!fields.count(name)) return std::nullopt;
  ConvKernelKey key;
  try {
    key.device_name = fields["dev"];
    key.sm_count = std::stoi(fields["sm"]);
    key.cuda_version = std::stoi(fields["cuda"]);
    key.cudnn_version = std::stoi(fields["cudnn"]);
    key.driver_version = std::stoi(fields["drv"]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  key.dtype = fields["dtype"];
  key.math_type = fields["math"];
  key.layout = fields["layout"];
  return key;
}

}  // namespace

Expected<std::vector<ConvKernelKey>> BenchmarkDb::device_keys() {
  // Everything before ";n=" is the device part (kernel_key.cc's field order).
  Statement select(db_,
                   "SELECT DISTINCT substr(key, 1, instr(key, ';n=') - 1) FROM kernels "
                   "WHERE instr(key, ';n=') > 0 AND id IN (SELECT kernel_id FROM measurements)");
  if (select.prepare_code() != SQLITE_OK) return error("preparing the device list");
  std::set<std::string> prefixes;
  int rc;
  while ((rc = sqlite3_step(select.get())) == SQLITE_ROW) {
    const char* text = reinterpret_cast<const char*>(sqlite3_column_text(select.get(), 0));
    if (text) prefixes.insert(text);
  }
  if (rc != SQLITE_DONE) return error("listing the devices");
  std::vector<ConvKernelKey> keys;
  for (const std::string& prefix : prefixes)
    if (std::optional<ConvKernelKey> key = parse_device_part(prefix)) keys.push_back(std::move(*key));
  return keys;
}

std::string default_db_path() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg && std::filesystem::path(xdg).is_absolute()) {
    return (std::filesystem::path(xdg) / "ucudnn" / "benchmarks.sqlite").string();
  }
  const char* home = std::getenv("HOME");
  if (home && *home) return (std::filesystem::path(home) / ".cache" / "ucudnn" / "benchmarks.sqlite").string();
  return (std::filesystem::path(".cache") / "ucudnn" / "benchmarks.sqlite").string();
}

}  // namespace ucudnn::optimizer
