// SQLite implementation of BenchmarkDb (schema, access and concurrency in
// benchmark_db.h): opening for reading or writing, the schema check and
// conversion, and the check of every row read.
#include "optimizer/bench/benchmark_db.h"

#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "runtime/core/file_io.h"

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
// connections changing the journal mode, or upgrading read locks to BEGIN
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

// What read_format finds in a file, before anything is written to it.
struct FileFormat {
  int version = 0;                       // 0: no tables yet (a new or empty file)
  bool has_index = false;                // measurements_by_kernel
  std::optional<std::string> read_only;  // meta's kReadOnlyKey value, when marked
};

Status not_ours(const std::string& path, const std::string& what) {
  return invalid_argument("benchmark database '" + path + "' " + what + " (not a ucudnn benchmark database); " +
                          fix_hint());
}

// The value of `key` in meta, or nullopt when the row is missing.
Expected<std::optional<std::string>> meta_value(sqlite3* db, const std::string& path, const char* key) {
  Statement select(db, "SELECT value FROM meta WHERE key = ?1");
  if (select.prepare_code() != SQLITE_OK) return db_error(db, path, "reading meta", select.prepare_code());
  sqlite3_bind_text(select.get(), 1, key, -1, SQLITE_STATIC);
  const int rc = sqlite3_step(select.get());
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return db_error(db, path, std::string("reading meta '") + key + "'", rc);
  const char* text = reinterpret_cast<const char*>(sqlite3_column_text(select.get(), 0));
  return std::optional<std::string>(text ? text : "");
}

// Fails unless `table` has every column of `columns` (a comma-separated list).
Status check_columns(sqlite3* db, const std::string& path, const std::string& table, const std::string& columns,
                     const std::string& version) {
  const std::string sql = "SELECT " + columns + " FROM " + table + " LIMIT 0";
  Statement probe(db, sql.c_str());
  if (probe.prepare_code() == SQLITE_OK) return Status::ok();
  if ((probe.prepare_code() & 0xff) != SQLITE_ERROR) return db_error(db, path, "reading table " + table, probe.prepare_code());
  return not_ours(path, "says schema version " + version + " but lacks table " + table + " with columns " + columns);
}

// The file's format, read with SELECTs only: a garbage file fails here (NOTADB),
// another program's SQLite file, another schema version or a damaged schema is
// InvalidArgument naming the path, so nothing is written to any of them.
Expected<FileFormat> read_format(sqlite3* db, const std::string& path) {
  FileFormat format;
  std::set<std::string> tables;
  {
    Statement master(db, "SELECT type, name FROM sqlite_master");
    if (master.prepare_code() != SQLITE_OK) return db_error(db, path, "reading the table list", master.prepare_code());
    int rc;
    while ((rc = sqlite3_step(master.get())) == SQLITE_ROW) {
      const char* type = reinterpret_cast<const char*>(sqlite3_column_text(master.get(), 0));
      const char* name = reinterpret_cast<const char*>(sqlite3_column_text(master.get(), 1));
      const std::string kind = type ? type : "", named = name ? name : "";
      if (kind == "table") tables.insert(named);
      if (kind == "index" && named == "measurements_by_kernel") format.has_index = true;
    }
    if (rc != SQLITE_DONE) return db_error(db, path, "reading the table list", rc);
  }
  if (tables.empty()) return format;
  if (!tables.count("meta")) return not_ours(path, "is an SQLite file without ucudnn's 'meta' table");
  UCUDNN_ASSIGN_OR_RETURN(std::optional<std::string> version, meta_value(db, path, "schema_version"));
  const std::string found = version ? *version : "(none)";
  if (found == "1") {
    format.version = 1;
    UCUDNN_RETURN_IF_ERROR(check_columns(
        db, path, "measurements", "kernel_key, micro_batch, algorithm, name, time_ms, workspace_bytes, available", "1"));
  } else if (found == std::to_string(BenchmarkDb::kSchemaVersion)) {
    format.version = BenchmarkDb::kSchemaVersion;
    UCUDNN_RETURN_IF_ERROR(check_columns(db, path, "kernels", "id, key", found));
    UCUDNN_RETURN_IF_ERROR(check_columns(
        db, path, "measurements", "kernel_id, micro_batch, algorithm, name, time_ms, workspace_bytes, available", found));
  } else {
    return invalid_argument("benchmark database '" + path + "' has schema version " + found +
                            " but this ucudnn uses version " + std::to_string(BenchmarkDb::kSchemaVersion) + "; " +
                            fix_hint());
  }
  UCUDNN_ASSIGN_OR_RETURN(format.read_only, meta_value(db, path, BenchmarkDb::kReadOnlyKey));
  return format;
}

// Creates the schema in an empty file, converts version 1, or adds a missing
// index — in one IMMEDIATE transaction, after reading the format again under
// its lock (another process may have created the schema meanwhile).
Status ensure_schema(sqlite3* db, const std::string& path) {
  UCUDNN_RETURN_IF_ERROR(exec(db, path, "BEGIN IMMEDIATE"));
  auto body = [&]() -> Status {
    UCUDNN_ASSIGN_OR_RETURN(FileFormat format, read_format(db, path));
    if (format.version == 0) {
      UCUDNN_RETURN_IF_ERROR(exec(db, path, kSchema));
      const std::string insert = "INSERT INTO meta (key, value) VALUES ('schema_version', '" +
                                 std::to_string(BenchmarkDb::kSchemaVersion) + "')";
      return exec(db, path, insert.c_str());
    }
    if (format.version == 1) {
      UCUDNN_RETURN_IF_ERROR(exec(db, path, kSetAsideVersion1));
      UCUDNN_RETURN_IF_ERROR(exec(db, path, kSchema));
      return exec(db, path, kCopyFromVersion1);
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

// Note [reading never writes]: a reader opens with SQLITE_OPEN_READONLY and
// runs SELECTs only, so the file's bytes never change. The journal matters too:
// a WAL-mode file makes even a read-only reader create FILE-wal and FILE-shm
// beside it (and fail where it cannot, e.g. in a read-only directory), so
// databases are kept in rollback-journal mode, whose readers create nothing:
// new files start in it, and a file still in WAL mode (written before
// 2026-12) is switched back the first time it is opened for writing. Such a
// WAL file in a directory where the reader cannot create FILE-shm is read with
// SQLite's immutable=1 when no FILE-wal exists — then every committed row is in
// the file itself, and a writer would have to create FILE-wal first.
bool is_wal_file_without_wal(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char header[20] = {};
  if (!file.read(header, sizeof header)) return false;
  std::error_code ec;
  return header[18] == 2 && header[19] == 2 && !std::filesystem::exists(path + "-wal", ec);
}

// `path` as an SQLite URI ("file:..."), for the immutable parameter.
std::string uri_of(const std::string& path) {
  std::string uri = "file:";
  for (char ch : path) {
    if (ch == '%' || ch == '?' || ch == '#') {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(ch));
      uri += escaped;
    } else {
      uri += ch;
    }
  }
  return uri + "?immutable=1";
}

// Leaves WAL mode for the rollback journal (Note [reading never writes]); best
// effort: while another connection has the file open in WAL mode it stays so.
void leave_wal_mode(sqlite3* db) {
  Statement mode(db, "PRAGMA journal_mode");
  if (mode.prepare_code() != SQLITE_OK || sqlite3_step(mode.get()) != SQLITE_ROW) return;
  const char* text = reinterpret_cast<const char*>(sqlite3_column_text(mode.get(), 0));
  if (!text || std::string(text) != "wal") return;
  sqlite3_reset(mode.get());
  sqlite3_exec(db, "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr);
}

// Why a database marked read_only takes no rows; `mark` is the meta value.
std::string read_only_reason(const std::string& mark) {
  return "it is marked as a read-only reference database ('" + mark + "')";
}

Status remove_database_files(const std::string& path) {
  for (const std::string suffix : {"", "-wal", "-shm", "-journal"}) {
    std::error_code ec;
    std::filesystem::remove(path + suffix, ec);
    if (ec) return io_error("cannot delete '" + path + suffix + "' to rebuild the benchmark database: " + ec.message());
  }
  return Status::ok();
}

// --- Checking the rows read --------------------------------------------------------------------

// A stored value as the error message shows it, on one line.
std::string describe_value(sqlite3_stmt* s, int column) {
  switch (sqlite3_column_type(s, column)) {
    case SQLITE_NULL: return "NULL";
    case SQLITE_INTEGER: return std::to_string(sqlite3_column_int64(s, column));
    case SQLITE_FLOAT: {
      char text[32];
      std::snprintf(text, sizeof text, "%.17g", sqlite3_column_double(s, column));
      return text;
    }
    case SQLITE_BLOB: return "a blob of " + std::to_string(sqlite3_column_bytes(s, column)) + " bytes";
    default: break;
  }
  const char* raw = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
  std::string text = raw ? raw : "";
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  for (char& ch : text)
    if (static_cast<unsigned char>(ch) < 0x20) ch = '?';
  return "'" + text + "'";
}

// One row of a statement whose column 0 is the rowid: each read checks the
// column's type and range, and a failure names the file, table, row and column.
class CheckedRow {
 public:
  CheckedRow(sqlite3_stmt* s, const std::string& path, const char* table) : s_(s), path_(path), table_(table) {}

  Status corrupt(int column, const std::string& expected) const {
    return invalid_argument("corrupt benchmark database '" + path_ + "': row " +
                            std::to_string(sqlite3_column_int64(s_, 0)) + " of table " + table_ + " has " +
                            sqlite3_column_name(s_, column) + " " + describe_value(s_, column) + " (expected " +
                            expected + "); delete the file or re-benchmark with --rebenchmark");
  }
  Expected<int64_t> integer(int column, int64_t low, int64_t high, const std::string& expected) const {
    if (sqlite3_column_type(s_, column) != SQLITE_INTEGER) return corrupt(column, expected);
    const int64_t value = sqlite3_column_int64(s_, column);
    if (value < low || value > high) return corrupt(column, expected);
    return value;
  }
  Expected<double> number(int column, double low, bool low_inclusive, const std::string& expected) const {
    const int type = sqlite3_column_type(s_, column);
    if (type != SQLITE_FLOAT && type != SQLITE_INTEGER) return corrupt(column, expected);
    const double value = sqlite3_column_double(s_, column);
    if (!std::isfinite(value) || value < low || (!low_inclusive && value == low)) return corrupt(column, expected);
    return value;
  }
  Expected<std::string> text(int column, const std::string& expected) const {
    if (sqlite3_column_type(s_, column) != SQLITE_TEXT) return corrupt(column, expected);
    const char* raw = reinterpret_cast<const char*>(sqlite3_column_text(s_, column));
    return std::string(raw ? raw : "");
  }

 private:
  sqlite3_stmt* s_;
  const std::string& path_;
  const char* table_;
};

// One measurement row (rowid, micro_batch, algorithm, name, time_ms,
// workspace_bytes, available) of a kernel with `algorithms` algorithms and
// mini-batch `batch`: every value checked, nothing trusted.
Expected<std::pair<int64_t, AlgoMeasurement>> read_measurement(const CheckedRow& row, int algorithms, int64_t batch) {
  UCUDNN_ASSIGN_OR_RETURN(const int64_t micro_batch,
                          row.integer(1, 1, batch, "an integer from 1 to the kernel's batch " + std::to_string(batch)));
  UCUDNN_ASSIGN_OR_RETURN(const int64_t algorithm,
                          row.integer(2, 0, algorithms - 1,
                                      "an algorithm number from 0 to " + std::to_string(algorithms - 1)));
  UCUDNN_ASSIGN_OR_RETURN(const int64_t available, row.integer(6, 0, 1, "0 or 1"));
  AlgoMeasurement m;
  m.algorithm = static_cast<int>(algorithm);
  m.available = available == 1;
  UCUDNN_ASSIGN_OR_RETURN(m.name, row.text(3, "the algorithm's name as text"));
  // An unavailable algorithm has no time (0); a measured one took some.
  UCUDNN_ASSIGN_OR_RETURN(m.time_ms, m.available ? row.number(4, 0.0, false, "a finite number of milliseconds > 0")
                                                 : row.number(4, 0.0, true, "a finite number of milliseconds >= 0"));
  UCUDNN_ASSIGN_OR_RETURN(const int64_t workspace,
                          row.integer(5, 0, BenchmarkDb::kMaxWorkspaceBytes,
                                      "a byte count from 0 to 2^48"));
  m.workspace_bytes = static_cast<size_t>(workspace);
  return std::make_pair(micro_batch, std::move(m));
}

}  // namespace

void BenchmarkDb::Closer::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

Expected<BenchmarkDb> BenchmarkDb::open_reading(const std::string& path, bool immutable, int* sqlite_code) {
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READONLY | (immutable ? SQLITE_OPEN_URI : 0);
  const int rc = sqlite3_open_v2(immutable ? uri_of(path).c_str() : path.c_str(), &raw, flags, nullptr);
  Connection connection(raw);  // closes `raw` on every return below
  *sqlite_code = rc;
  if (rc != SQLITE_OK) return db_error(raw, path, "opening for reading", rc);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  Expected<FileFormat> format = read_format(raw, path);
  if (!format) {
    *sqlite_code = sqlite3_extended_errcode(raw);
    return format.status();
  }
  BenchmarkDb db(std::move(connection), path);
  db.version_ = format->version;
  if (format->read_only)
    db.cannot_store_reason_ = read_only_reason(*format->read_only);
  return db;
}

Expected<BenchmarkDb> BenchmarkDb::open_read_only(const std::string& path) {
  if (path.empty()) return invalid_argument("benchmark database path is empty");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return not_found("benchmark database '" + path + "' does not exist");
  int code = SQLITE_OK;
  Expected<BenchmarkDb> db = open_reading(path, /*immutable=*/false, &code);
  const int primary = code & 0xff;
  if (!db && (primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN) && is_wal_file_without_wal(path))
    return open_reading(path, /*immutable=*/true, &code);  // Note [reading never writes]
  return db;
}

Expected<BenchmarkDb> BenchmarkDb::open_for_writing(const std::string& path, std::string* cannot_store) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  Connection connection(raw);  // closes `raw` on every return below
  if (rc != SQLITE_OK) return db_error(raw, path, "opening", rc);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  // Nothing is written before the file is known to be a ucudnn database that may
  // be written. Permissions first: a WAL-mode file in a read-only directory
  // cannot even be read through this connection.
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string directory = parent.empty() ? "." : parent.string();
  if (sqlite3_db_readonly(raw, "main") == 1) {
    *cannot_store = "the file is read-only to this process";
  } else if (::access(directory.c_str(), W_OK) != 0) {  // the rollback journal goes beside the file
    *cannot_store = "its directory '" + directory + "' is read-only to this process";
  } else {
    UCUDNN_ASSIGN_OR_RETURN(FileFormat format, read_format(raw, path));
    if (format.read_only) {
      *cannot_store = read_only_reason(*format.read_only);
    } else if (format.version != kSchemaVersion || !format.has_index) {
      UCUDNN_RETURN_IF_ERROR(ensure_schema(raw, path));
    }
  }
  if (!cannot_store->empty()) return invalid_argument("benchmark database '" + path + "': " + *cannot_store);
  leave_wal_mode(raw);
  BenchmarkDb db(std::move(connection), path);
  db.version_ = kSchemaVersion;
  db.writable_ = true;
  return db;
}

Expected<BenchmarkDb> BenchmarkDb::open(const std::string& path, bool rebuild) {
  if (path.empty()) return invalid_argument("benchmark database path is empty");
  if (rebuild) UCUDNN_RETURN_IF_ERROR(remove_database_files(path));
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) return io_error("cannot create the directory '" + parent.string() + "' for the benchmark database: " + ec.message());
  }
  std::string cannot_store;
  Expected<BenchmarkDb> db = open_for_writing(path, &cannot_store);
  if (!db && !cannot_store.empty())
    return invalid_argument("cannot store timings in the benchmark database '" + path + "': " + cannot_store +
                            "; use a database of your own (--db FILE)");
  return db;
}

Status BenchmarkDb::error(const std::string& what) const {
  return db_error(db_.get(), path_, what, sqlite3_extended_errcode(db_.get()));
}

Expected<bool> BenchmarkDb::can_store() {
  if (writable_) return true;
  if (!cannot_store_reason_.empty()) return false;
  // The read-only connection closes first: while it is open a WAL-mode file could
  // not leave WAL mode (leave_wal_mode needs the file to itself).
  db_.reset();
  std::string reason;
  Expected<BenchmarkDb> reopened = open_for_writing(path_, &reason);
  if (!reopened) {
    Expected<BenchmarkDb> reader = open_read_only(path_);  // reading goes on as before
    if (reader) db_ = std::move(reader->db_);
    if (reason.empty()) return reopened.status();
    if (!reader) return reader.status();
    cannot_store_reason_ = reason;
    return false;
  }
  db_ = std::move(reopened->db_);
  version_ = reopened->version_;
  writable_ = true;
  return true;
}

Expected<std::optional<KernelTimings>> BenchmarkDb::lookup(const std::string& kernel_key) {
  if (version_ == 0) return std::optional<KernelTimings>();  // an empty file holds nothing
  // Keys that are not ConvKernelKeys (tests' "k1") get the widest limits.
  const std::optional<ConvKernelKey> key = parse_kernel_key(kernel_key);
  const int algorithms = key ? algorithm_count(*key) : max_algorithm_count();
  const int64_t batch = key ? key->n : std::numeric_limits<int32_t>::max();
  Statement select(db_.get(), version_ == 1
                                  ? "SELECT rowid, micro_batch, algorithm, name, time_ms, workspace_bytes, available "
                                    "FROM measurements WHERE kernel_key = ?1 ORDER BY micro_batch, rowid"
                                  : "SELECT m.rowid, m.micro_batch, m.algorithm, m.name, m.time_ms, m.workspace_bytes, "
                                    "m.available FROM measurements AS m JOIN kernels ON kernels.id = m.kernel_id "
                                    "WHERE kernels.key = ?1 ORDER BY m.micro_batch, m.rowid");
  if (select.prepare_code() != SQLITE_OK) return error("preparing the lookup");
  sqlite3_bind_text(select.get(), 1, kernel_key.c_str(), static_cast<int>(kernel_key.size()), SQLITE_TRANSIENT);
  const CheckedRow row(select.get(), path_, "measurements");
  KernelTimings timings;
  bool any = false;
  int rc;
  while ((rc = sqlite3_step(select.get())) == SQLITE_ROW) {
    UCUDNN_ASSIGN_OR_RETURN(auto measurement, read_measurement(row, algorithms, batch));
    timings.by_batch[measurement.first].push_back(std::move(measurement.second));
    any = true;
  }
  if (rc != SQLITE_DONE) return error("looking up kernel '" + kernel_key + "'");
  if (!any) return std::optional<KernelTimings>();
  return std::optional<KernelTimings>(std::move(timings));
}

Status BenchmarkDb::store(const std::string& kernel_key, const KernelTimings& timings) {
  UCUDNN_ASSIGN_OR_RETURN(const bool storable, can_store());
  if (!storable)
    return invalid_argument("cannot store kernel '" + kernel_key + "' in the benchmark database '" + path_ + "': " +
                            cannot_store_reason_);
  sqlite3* db = db_.get();
  UCUDNN_RETURN_IF_ERROR(exec(db, path_, "BEGIN IMMEDIATE")
                             .with_context("starting a transaction to store kernel '" + kernel_key + "'"));
  auto body = [&]() -> Status {
    Statement add_kernel(db, "INSERT OR IGNORE INTO kernels (key) VALUES (?1)");
    if (add_kernel.prepare_code() != SQLITE_OK) return error("preparing the kernel insert");
    sqlite3_bind_text(add_kernel.get(), 1, kernel_key.c_str(), static_cast<int>(kernel_key.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(add_kernel.get()) != SQLITE_DONE) return error("adding kernel '" + kernel_key + "'");
    Statement find_kernel(db, "SELECT id FROM kernels WHERE key = ?1");
    if (find_kernel.prepare_code() != SQLITE_OK) return error("preparing the kernel id lookup");
    sqlite3_bind_text(find_kernel.get(), 1, kernel_key.c_str(), static_cast<int>(kernel_key.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(find_kernel.get()) != SQLITE_ROW) return error("finding the id of kernel '" + kernel_key + "'");
    const sqlite3_int64 kernel_id = sqlite3_column_int64(find_kernel.get(), 0);
    Statement remove(db, "DELETE FROM measurements WHERE kernel_id = ?1");
    if (remove.prepare_code() != SQLITE_OK) return error("preparing the delete");
    sqlite3_bind_int64(remove.get(), 1, kernel_id);
    if (sqlite3_step(remove.get()) != SQLITE_DONE) return error("deleting old rows of kernel '" + kernel_key + "'");
    Statement insert(db,
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
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  }
  if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    Status commit_error = error("committing kernel '" + kernel_key + "'");
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return commit_error;
  }
  return Status::ok();
}

Expected<int64_t> BenchmarkDb::kernel_count() {
  if (version_ == 0) return int64_t{0};
  Statement count(db_.get(), version_ == 1 ? "SELECT COUNT(DISTINCT kernel_key) FROM measurements"
                                           : "SELECT COUNT(DISTINCT kernel_id) FROM measurements");
  if (count.prepare_code() != SQLITE_OK) return error("preparing the kernel count");
  if (sqlite3_step(count.get()) != SQLITE_ROW) return error("counting kernels");
  return static_cast<int64_t>(sqlite3_column_int64(count.get(), 0));
}

Expected<std::vector<ConvKernelKey>> BenchmarkDb::device_keys() {
  if (version_ == 0) return std::vector<ConvKernelKey>();
  // Column 0 is the row that names the key: kernels' in version 2, a measurement's in version 1.
  Statement select(db_.get(), version_ == 1
                                  ? "SELECT MIN(rowid) AS rowid, kernel_key FROM measurements GROUP BY kernel_key"
                                  : "SELECT id, key FROM kernels WHERE id IN (SELECT kernel_id FROM measurements)");
  if (select.prepare_code() != SQLITE_OK) return error("preparing the device list");
  const CheckedRow row(select.get(), path_, version_ == 1 ? "measurements" : "kernels");
  const std::string expected = "a ucudnn kernel key such as 'dev=NVIDIA H200;sm=132;...;dir=fwd'";
  std::map<std::string, ConvKernelKey> devices;  // sorted by their text
  int rc;
  while ((rc = sqlite3_step(select.get())) == SQLITE_ROW) {
    UCUDNN_ASSIGN_OR_RETURN(const std::string text, row.text(1, expected));
    const std::optional<ConvKernelKey> key = parse_kernel_key(text);
    if (!key) return row.corrupt(1, expected);
    ConvKernelKey device;  // the device part only
    device.device_name = key->device_name;
    device.sm_count = key->sm_count;
    device.cuda_version = key->cuda_version;
    device.cudnn_version = key->cudnn_version;
    device.driver_version = key->driver_version;
    device.dtype = key->dtype;
    device.math_type = key->math_type;
    device.layout = key->layout;
    devices.emplace(device.to_string(), device);
  }
  if (rc != SQLITE_DONE) return error("listing the devices");
  std::vector<ConvKernelKey> keys;
  for (auto& [text, key] : devices) keys.push_back(std::move(key));
  return keys;
}

std::string default_db_path() { return (std::filesystem::path(user_cache_dir()) / "benchmarks.sqlite").string(); }

}  // namespace ucudnn::optimizer
