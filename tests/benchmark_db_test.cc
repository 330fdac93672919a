// Tests for the SQLite benchmark database: round trip, reuse across opens,
// garbage files, foreign schema versions, conversion of version 1, rebuild,
// concurrent writers (processes and threads, each with its own connection);
// reading that never writes (read-only opens, reference databases marked
// read_only, read-only files and directories) and rows that lie (every
// column's type and range checked, the error naming file, table, row, column).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "runtime/cpu/conv_algorithms.h"
#include "optimizer/bench/benchmark_db.h"
#include "tests/support/temp_dir.h"

namespace ucudnn::optimizer {
namespace {

namespace fs = std::filesystem;

class BenchmarkDbTest : public ::testing::Test {
 protected:
  std::string path() const { return (dir_.path() / "nested" / "bench.sqlite").string(); }
  ucudnn_test::TempDir dir_{"ucudnn_db_test"};
};

// What "left alone" means: the file's bytes and the names in its directory.
struct Snapshot {
  std::string bytes;
  std::set<std::string> names;
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};
Snapshot snapshot(const std::string& path) {
  Snapshot s;
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  s.bytes = bytes.str();
  for (const fs::directory_entry& entry : fs::directory_iterator(fs::path(path).parent_path()))
    s.names.insert(entry.path().filename().string());
  return s;
}

// Runs `sql` on the file with a plain connection (what another program, or a
// hand, might do to it).
void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &message);
  EXPECT_EQ(rc, SQLITE_OK) << sql << ": " << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(raw);
}

KernelTimings sample_timings(int seed) {
  KernelTimings t;
  for (int64_t m : {1, 2, 4}) {
    t.by_batch[m] = {{seed % 7, "IMPLICIT_GEMM", 0.25 * m + seed, size_t{1} << 33, true},  // > 4 GiB: int64
                     {1, "", 0.125 * m, 0, false},
                     {0, "with 'quote'", 1.5, 42, true}};
  }
  return t;
}

std::string query_single(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string value = "<error>";
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
    const char* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    value = text ? text : "";
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

TEST_F(BenchmarkDbTest, RoundTripAndReuse) {
  {
    auto db = BenchmarkDb::open(path());
    ASSERT_TRUE(db.has_value()) << db.status().to_string();
    auto missing = db->lookup("k1");
    ASSERT_TRUE(missing.has_value());
    EXPECT_FALSE(missing->has_value());
    ASSERT_TRUE(db->store("k1", sample_timings(1)).is_ok());
    ASSERT_TRUE(db->store("k2", sample_timings(2)).is_ok());
    auto found = db->lookup("k1");
    ASSERT_TRUE(found.has_value() && found->has_value());
    EXPECT_EQ(**found, sample_timings(1));
  }
  // A second open reuses what is there; store replaces a kernel's rows.
  auto db = BenchmarkDb::open(path());
  ASSERT_TRUE(db.has_value()) << db.status().to_string();
  EXPECT_EQ(*db->kernel_count(), 2);
  auto k2 = db->lookup("k2");
  ASSERT_TRUE(k2.has_value() && k2->has_value());
  EXPECT_EQ(**k2, sample_timings(2));
  KernelTimings smaller;
  smaller.by_batch[8] = {{3, "x", 9.0, 7, true}};
  ASSERT_TRUE(db->store("k2", smaller).is_ok());
  EXPECT_EQ(**db->lookup("k2"), smaller);
  EXPECT_EQ(query_single(path(), "SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(BenchmarkDb::kSchemaVersion));
  // A rollback journal: readers of it create no FILE-wal / FILE-shm (Note [reading never writes]).
  EXPECT_EQ(query_single(path(), "PRAGMA journal_mode"), "delete");
}

TEST_F(BenchmarkDbTest, GarbageFileIsAnErrorAndRebuildWorks) {
  fs::create_directories(fs::path(path()).parent_path());
  {
    std::ofstream garbage(path(), std::ios::binary);
    for (int i = 0; i < 4096; ++i) garbage.put(static_cast<char>((i * 131 + 7) & 0xff));
  }
  const Snapshot before = snapshot(path());
  auto read = BenchmarkDb::open_read_only(path());
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
  auto db = BenchmarkDb::open(path());
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
  const std::string message = db.status().message();
  EXPECT_NE(message.find(path()), std::string::npos) << message;
  EXPECT_NE(message.find("--rebenchmark"), std::string::npos) << message;
  EXPECT_TRUE(snapshot(path()) == before) << "a garbage file was changed before it was refused";
  auto rebuilt = BenchmarkDb::open(path(), /*rebuild=*/true);
  ASSERT_TRUE(rebuilt.has_value()) << rebuilt.status().to_string();
  ASSERT_TRUE(rebuilt->store("k", sample_timings(3)).is_ok());
  EXPECT_EQ(**rebuilt->lookup("k"), sample_timings(3));
}

TEST_F(BenchmarkDbTest, DamagedPagesBehindAValidHeaderAreAnErrorNotACrash) {
  {
    auto db = BenchmarkDb::open(path());
    ASSERT_TRUE(db.has_value());
    for (int k = 0; k < 50; ++k) {
      std::string key = "k";
      key += std::to_string(k);
      ASSERT_TRUE(db->store(key, sample_timings(k)).is_ok());
    }
  }
  ASSERT_FALSE(fs::exists(path() + "-wal") && fs::file_size(path() + "-wal") > 0)
      << "the last connection should have checkpointed the WAL";
  const auto size = fs::file_size(path());
  ASSERT_GT(size, 8192u);
  {
    std::fstream file(path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100);  // keep the 100-byte header, smash the pages
    for (size_t i = 100; i < size; ++i) file.put(static_cast<char>((i * 7919) & 0xff));
  }
  auto db = BenchmarkDb::open(path());
  Status status = db.status();
  if (db.has_value()) {
    auto found = db->lookup("k3");
    status = found.status();
    if (status.is_ok()) status = db->store("k3", sample_timings(3));
  }
  ASSERT_FALSE(status.is_ok()) << "a smashed database must not read back as fine";
  EXPECT_NE(status.message().find(path()), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("--rebenchmark"), std::string::npos) << status.message();
  EXPECT_TRUE(BenchmarkDb::open(path(), true).has_value());
}

TEST_F(BenchmarkDbTest, ForeignSchemaVersionIsAnError) {
  { ASSERT_TRUE(BenchmarkDb::open(path()).has_value()); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE meta SET value = '999' WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  auto db = BenchmarkDb::open(path());
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(db.status().message().find("schema version 999"), std::string::npos) << db.status().message();
  EXPECT_NE(db.status().message().find(path()), std::string::npos);
  EXPECT_TRUE(BenchmarkDb::open(path(), true).has_value());
}

// A version-1 file (models/h200_benchmarks.sqlite before 2026-12-03) is
// converted on open: every row reads back in its order, the version becomes 2.
TEST_F(BenchmarkDbTest, VersionOneDatabaseIsConvertedOnOpen) {
  fs::create_directories(fs::path(path()).parent_path());
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &raw), SQLITE_OK);
  const char* version_one = R"sql(
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
    INSERT INTO meta VALUES ('schema_version', '1');
    CREATE TABLE measurements (kernel_key TEXT NOT NULL, micro_batch INTEGER NOT NULL, algorithm INTEGER NOT NULL,
                               name TEXT NOT NULL, time_ms REAL NOT NULL, workspace_bytes INTEGER NOT NULL,
                               available INTEGER NOT NULL);
    CREATE INDEX measurements_by_kernel ON measurements (kernel_key, micro_batch);
    INSERT INTO measurements VALUES ('kb', 4, 2, 'GEMM', 3.0, 8589934592, 1);
    INSERT INTO measurements VALUES ('ka', 2, 1, 'B', 2.0, 0, 0);
    INSERT INTO measurements VALUES ('kb', 4, 0, 'IMPLICIT_GEMM', 1.5, 0, 1);
    INSERT INTO measurements VALUES ('ka', 1, 0, 'A', 1.0, 16, 1);
  )sql";
  ASSERT_EQ(sqlite3_exec(raw, version_one, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_close(raw);

  auto db = BenchmarkDb::open(path());
  ASSERT_TRUE(db.has_value()) << db.status().to_string();
  EXPECT_EQ(query_single(path(), "SELECT value FROM meta WHERE key = 'schema_version'"), "2");
  EXPECT_EQ(query_single(path(), "SELECT COUNT(*) FROM kernels"), "2");
  EXPECT_EQ(*db->kernel_count(), 2);
  KernelTimings a, b;
  a.by_batch[1] = {{0, "A", 1.0, 16, true}};
  a.by_batch[2] = {{1, "B", 2.0, 0, false}};
  b.by_batch[4] = {{2, "GEMM", 3.0, size_t{1} << 33, true}, {0, "IMPLICIT_GEMM", 1.5, 0, true}};
  EXPECT_EQ(**db->lookup("ka"), a);
  EXPECT_EQ(**db->lookup("kb"), b);
  ASSERT_TRUE(db->store("ka", sample_timings(4)).is_ok());
  EXPECT_EQ(**db->lookup("ka"), sample_timings(4));
  EXPECT_EQ(**db->lookup("kb"), b);
}

// Another program's SQLite file is refused by both opens and left byte-identical:
// no journal mode switched, no table created, no FILE-wal / FILE-shm beside it.
TEST_F(BenchmarkDbTest, SqliteFileOfAnotherProgramIsAnErrorAndLeftAlone) {
  fs::create_directories(fs::path(path()).parent_path());
  raw_exec(path(), "CREATE TABLE photos (id INTEGER); INSERT INTO photos VALUES (7)");
  const Snapshot before = snapshot(path());
  ASSERT_EQ(before.names, (std::set<std::string>{"bench.sqlite"}));
  auto read = BenchmarkDb::open_read_only(path());
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(read.status().message().find("not a ucudnn benchmark database"), std::string::npos)
      << read.status().message();
  auto db = BenchmarkDb::open(path());
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(db.status().message().find("not a ucudnn benchmark database"), std::string::npos) << db.status().message();
  EXPECT_TRUE(snapshot(path()) == before) << "the foreign file was changed before it was refused";
}

// A file that says schema version 2 but lacks a column is refused before anything is written.
TEST_F(BenchmarkDbTest, DamagedSchemaIsRefusedBeforeWriting) {
  fs::create_directories(fs::path(path()).parent_path());
  raw_exec(path(), "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
                   "INSERT INTO meta VALUES ('schema_version', '2');"
                   "CREATE TABLE kernels (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);"
                   "CREATE TABLE measurements (kernel_id INTEGER, micro_batch INTEGER, algorithm INTEGER)");
  const Snapshot before = snapshot(path());
  for (bool writing : {false, true}) {
    auto db = writing ? BenchmarkDb::open(path()) : BenchmarkDb::open_read_only(path());
    ASSERT_FALSE(db.has_value());
    EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(db.status().message().find("lacks table measurements"), std::string::npos) << db.status().message();
  }
  EXPECT_TRUE(snapshot(path()) == before);
}

// --- Reading never writes ---------------------------------------------------------------------

// A kernel key as ucudnn writes it: a GPU forward convolution of batch 4 (the
// micro-batches of sample_timings), so rows are checked against its forward algorithm ids
// (algorithm_count: cuDNN's, UCUDNN_DEPTHWISE, ...).
std::string gpu_kernel_key() {
  ConvKernelKey key;
  key.device_name = "NVIDIA H200";
  key.sm_count = 132;
  key.cuda_version = key.driver_version = 13000;
  key.cudnn_version = 91900;
  key.math_type = "tf32";
  key.n = 4, key.c = 3, key.h = 8, key.w = 8, key.k = 4, key.r = 3, key.s = 3;
  return key.to_string();
}

TEST_F(BenchmarkDbTest, ReadingLeavesTheFileAndItsDirectoryAlone) {
  {
    auto db = BenchmarkDb::open(path());
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(db->store(gpu_kernel_key(), sample_timings(1)).is_ok());
  }
  const Snapshot before = snapshot(path());
  ASSERT_EQ(before.names, (std::set<std::string>{"bench.sqlite"}));
  {
    auto db = BenchmarkDb::open_read_only(path());
    ASSERT_TRUE(db.has_value()) << db.status().to_string();
    EXPECT_EQ(**db->lookup(gpu_kernel_key()), sample_timings(1));
    EXPECT_FALSE(db->lookup("absent")->has_value());
    EXPECT_EQ(*db->kernel_count(), 1);
    ASSERT_EQ(db->device_keys()->size(), 1u);
    EXPECT_EQ(db->device_keys()->front().device_name, "NVIDIA H200");
  }
  EXPECT_TRUE(snapshot(path()) == before) << "reading changed the file or created files beside it";
  auto missing = BenchmarkDb::open_read_only((dir_.path() / "absent.sqlite").string());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(dir_.path() / "absent.sqlite")) << "reading created the file";
}

// Opened read-only, a database is reopened for writing only when something is stored.
TEST_F(BenchmarkDbTest, StoringReopensForWriting) {
  { ASSERT_TRUE(BenchmarkDb::open(path()).has_value()); }
  auto db = BenchmarkDb::open_read_only(path());
  ASSERT_TRUE(db.has_value());
  ASSERT_TRUE(*db->can_store());
  ASSERT_TRUE(db->store("k", sample_timings(5)).is_ok());
  EXPECT_EQ(**db->lookup("k"), sample_timings(5));
  EXPECT_EQ(**BenchmarkDb::open_read_only(path())->lookup("k"), sample_timings(5));
}

// The mark of a shipped reference set: nothing is ever stored into it, by either open.
TEST_F(BenchmarkDbTest, ReferenceDatabaseMarkedReadOnlyIsNeverWritten) {
  {
    auto db = BenchmarkDb::open(path());
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(db->store("k", sample_timings(1)).is_ok());
  }
  raw_exec(path(), "INSERT INTO meta (key, value) VALUES ('read_only', 'test reference timings')");
  const Snapshot before = snapshot(path());
  auto db = BenchmarkDb::open_read_only(path());
  ASSERT_TRUE(db.has_value());
  EXPECT_EQ(**db->lookup("k"), sample_timings(1));
  auto storable = db->can_store();
  ASSERT_TRUE(storable.has_value()) << storable.status().to_string();
  EXPECT_FALSE(*storable);
  EXPECT_NE(db->cannot_store_reason().find("read-only reference database"), std::string::npos)
      << db->cannot_store_reason();
  EXPECT_NE(db->cannot_store_reason().find("test reference timings"), std::string::npos);
  EXPECT_FALSE(db->store("k2", sample_timings(2)).is_ok());
  auto writer = BenchmarkDb::open(path());
  ASSERT_FALSE(writer.has_value());
  EXPECT_NE(writer.status().message().find("read-only reference database"), std::string::npos)
      << writer.status().message();
  EXPECT_NE(writer.status().message().find("--db FILE"), std::string::npos) << writer.status().message();
  EXPECT_TRUE(snapshot(path()) == before);
}

// A version-1 file is read as it is; only opening it for writing converts it.
TEST_F(BenchmarkDbTest, VersionOneIsReadWithoutConversion) {
  fs::create_directories(fs::path(path()).parent_path());
  raw_exec(path(), R"sql(
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
    INSERT INTO meta VALUES ('schema_version', '1');
    CREATE TABLE measurements (kernel_key TEXT NOT NULL, micro_batch INTEGER NOT NULL, algorithm INTEGER NOT NULL,
                               name TEXT NOT NULL, time_ms REAL NOT NULL, workspace_bytes INTEGER NOT NULL,
                               available INTEGER NOT NULL);
    INSERT INTO measurements VALUES ('ka', 2, 1, 'B', 2.0, 0, 0);
    INSERT INTO measurements VALUES ('ka', 1, 0, 'A', 1.0, 16, 1);
  )sql");
  const Snapshot before = snapshot(path());
  KernelTimings a;
  a.by_batch[1] = {{0, "A", 1.0, 16, true}};
  a.by_batch[2] = {{1, "B", 2.0, 0, false}};
  {
    auto db = BenchmarkDb::open_read_only(path());
    ASSERT_TRUE(db.has_value()) << db.status().to_string();
    EXPECT_EQ(**db->lookup("ka"), a);
    EXPECT_EQ(*db->kernel_count(), 1);
  }
  EXPECT_TRUE(snapshot(path()) == before);
  EXPECT_EQ(query_single(path(), "SELECT value FROM meta WHERE key = 'schema_version'"), "1");
  auto db = BenchmarkDb::open_read_only(path());
  ASSERT_TRUE(*db->can_store());
  EXPECT_EQ(query_single(path(), "SELECT value FROM meta WHERE key = 'schema_version'"), "2");
  EXPECT_EQ(**db->lookup("ka"), a);
}

// A file written before databases left WAL mode is switched to the rollback
// journal the first time it is opened for writing, leaving no FILE-wal behind.
TEST_F(BenchmarkDbTest, WalFileIsSwitchedToTheRollbackJournalWhenWritten) {
  { ASSERT_TRUE(BenchmarkDb::open(path()).has_value()); }
  raw_exec(path(), "PRAGMA journal_mode = WAL");
  ASSERT_EQ(query_single(path(), "PRAGMA journal_mode"), "wal");
  {
    auto db = BenchmarkDb::open(path());
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(db->store("k", sample_timings(1)).is_ok());
  }
  EXPECT_EQ(query_single(path(), "PRAGMA journal_mode"), "delete");
  EXPECT_EQ(snapshot(path()).names, (std::set<std::string>{"bench.sqlite"}));
  // The same when it was opened read-only first (as plan_model does), which
  // creates FILE-wal and FILE-shm for a WAL-mode file.
  raw_exec(path(), "PRAGMA journal_mode = WAL");
  {
    auto db = BenchmarkDb::open_read_only(path());
    ASSERT_TRUE(db.has_value());
    EXPECT_EQ(**db->lookup("k"), sample_timings(1));
    ASSERT_TRUE(db->store("k2", sample_timings(2)).is_ok());
    EXPECT_EQ(**db->lookup("k2"), sample_timings(2));
  }
  EXPECT_EQ(query_single(path(), "PRAGMA journal_mode"), "delete");
  EXPECT_EQ(snapshot(path()).names, (std::set<std::string>{"bench.sqlite"}));
}

// Read-only files and directories read fine and are left alone. Permission bits
// do not stop root, so when the test runs as root the reads run in a child
// process that drops to user nobody (65534); the bytes and names are compared
// as well, which holds for any user.
TEST_F(BenchmarkDbTest, ReadOnlyFileAndDirectoryAreReadable) {
  const std::string rollback = path(), wal = (dir_.path() / "nested" / "wal.sqlite").string();
  for (const std::string& file : {rollback, wal}) {
    auto db = BenchmarkDb::open(file);
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(db->store(gpu_kernel_key(), sample_timings(1)).is_ok());
  }
  raw_exec(wal, "PRAGMA journal_mode = WAL");  // as files written before 2026-12 are
  ASSERT_FALSE(fs::exists(wal + "-wal"));
  const fs::path nested = dir_.path() / "nested";
  fs::permissions(dir_.path(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  for (const std::string& file : {rollback, wal}) fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(nested, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const Snapshot rollback_before = snapshot(rollback), wal_before = snapshot(wal);

  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // no gtest assertions here: the exit code says what failed
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(90);
    int code = 10;
    for (const std::string& file : {rollback, wal}) {
      auto db = BenchmarkDb::open_read_only(file);
      if (!db.has_value()) ::_exit(code + 1);
      auto found = db->lookup(gpu_kernel_key());
      if (!found.has_value() || !found->has_value() || **found != sample_timings(1)) ::_exit(code + 2);
      auto storable = db->can_store();
      if (!storable.has_value() || *storable) ::_exit(code + 3);
      if (db->cannot_store_reason().find("read-only") == std::string::npos) ::_exit(code + 4);
      code += 10;
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 90) GTEST_SKIP() << "cannot drop root privileges to test read-only files";
  // 1x: the rollback-journal file, 2x: the WAL one; x: 1 open, 2 lookup, 3 can_store, 4 its reason.
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(snapshot(rollback) == rollback_before);
  EXPECT_TRUE(snapshot(wal) == wal_before);
}

// --- Rows that lie ----------------------------------------------------------------------------

struct Lie {
  const char* what;
  const char* assignment;  // SET clause applied to measurement row 1
  const char* shown;       // how the message shows the bad value
};

class LyingRowTest : public BenchmarkDbTest, public ::testing::WithParamInterface<Lie> {};

// Every column of a measurement row is checked; the refusal names the file, the
// table, the row, the column and the value, and says what to do.
TEST_P(LyingRowTest, IsRefusedNamingRowAndColumn) {
  {
    auto db = BenchmarkDb::open(path());
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(db->store(gpu_kernel_key(), sample_timings(1)).is_ok());  // row 1: available, at micro-batch 1
  }
  raw_exec(path(), std::string("UPDATE measurements SET ") + GetParam().assignment + " WHERE rowid = 1");
  const Snapshot before = snapshot(path());
  auto db = BenchmarkDb::open_read_only(path());
  ASSERT_TRUE(db.has_value()) << db.status().to_string();
  auto found = db->lookup(gpu_kernel_key());
  ASSERT_FALSE(found.has_value()) << GetParam().what << " was read as a measurement";
  EXPECT_EQ(found.status().code(), StatusCode::kInvalidArgument);
  const std::string message = found.status().message();
  EXPECT_NE(message.find("corrupt benchmark database '" + path() + "'"), std::string::npos) << message;
  EXPECT_NE(message.find(std::string("row 1 of table measurements has ") + GetParam().shown), std::string::npos)
      << message;
  EXPECT_NE(message.find("--rebenchmark"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_TRUE(snapshot(path()) == before);
}

INSTANTIATE_TEST_SUITE_P(
    BenchmarkDb, LyingRowTest,
    ::testing::Values(Lie{"text time", "time_ms = 'abc'", "time_ms 'abc'"},
                      Lie{"negative time", "time_ms = -1.5", "time_ms -1.5"},
                      Lie{"zero time of an available algorithm", "time_ms = 0", "time_ms 0"},
                      Lie{"time with a unit", "time_ms = '1.5 ms'", "time_ms '1.5 ms'"},
                      Lie{"infinite time", "time_ms = 9e999", "time_ms inf"},
                      Lie{"negative workspace", "workspace_bytes = -256", "workspace_bytes -256"},
                      Lie{"fractional workspace", "workspace_bytes = 1.5", "workspace_bytes 1.5"},
                      Lie{"huge workspace", "workspace_bytes = 4611686018427387904",
                          "workspace_bytes 4611686018427387904"},
                      Lie{"unknown algorithm", "algorithm = 99", "algorithm 99"},
                      Lie{"negative algorithm", "algorithm = -1", "algorithm -1"},
                      Lie{"text algorithm", "algorithm = 'GEMM'", "algorithm 'GEMM'"},
                      Lie{"zero micro-batch", "micro_batch = 0", "micro_batch 0"},
                      Lie{"micro-batch above the batch", "micro_batch = 5", "micro_batch 5"},
                      Lie{"text micro-batch", "micro_batch = 'x'", "micro_batch 'x'"},
                      Lie{"available neither 0 nor 1", "available = 2", "available 2"},
                      Lie{"blob name", "name = x'00ff'", "name a blob of 2 bytes"},
                      Lie{"multi-line text", "time_ms = 'a' || char(10) || 'b'", "time_ms 'a?b'"}),
    [](const ::testing::TestParamInfo<Lie>& info) {
      std::string name;
      for (const char* c = info.param.what; *c; ++c) name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
      return name;
    });

// The CPU's kernels have the CPU backend's algorithms, not cuDNN's.
TEST_F(BenchmarkDbTest, CpuKernelRowsHaveCpuAlgorithms) {
  ConvKernelKey cpu;
  cpu.device_name = "cpu:test";
  cpu.math_type = "fp32";
  cpu.n = 4, cpu.c = 3, cpu.h = 8, cpu.w = 8, cpu.k = 4, cpu.r = 3, cpu.s = 3;
  KernelTimings t;
  constexpr int kFirstMissing = cpu::kNumCpuConvAlgorithms;  // the CPU has algorithms 0 .. count - 1
  t.by_batch[4] = {{kFirstMissing, "im2col_gemm", 1.0, 0, true}};
  {
    auto db = BenchmarkDb::open(path());
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(db->store(cpu.to_string(), t).is_ok());
  }
  auto found = BenchmarkDb::open_read_only(path())->lookup(cpu.to_string());
  ASSERT_FALSE(found.has_value());
  EXPECT_NE(found.status().message().find("has algorithm " + std::to_string(kFirstMissing) +
                                          " (expected an algorithm number from 0 to " +
                                          std::to_string(kFirstMissing - 1) + ")"),
            std::string::npos)
      << found.status().message();
}

// A stored key that is not one ucudnn writes is refused where keys are listed.
TEST_F(BenchmarkDbTest, MalformedKernelKeyIsRefused) {
  {
    auto db = BenchmarkDb::open(path());
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(db->store(gpu_kernel_key(), sample_timings(1)).is_ok());
  }
  std::string bad = gpu_kernel_key();
  bad.replace(bad.find("layout=nchw"), 11, "layout=xyzw");
  raw_exec(path(), "UPDATE kernels SET key = '" + bad + "' WHERE id = 1");
  auto keys = BenchmarkDb::open_read_only(path())->device_keys();
  ASSERT_FALSE(keys.has_value());
  EXPECT_NE(keys.status().message().find("row 1 of table kernels has key 'dev=NVIDIA H200"), std::string::npos)
      << keys.status().message();
}

// parse_kernel_key is to_string's inverse, and nothing else parses.
TEST(KernelKeyText, ParsesOnlyWhatToStringWrites) {
  ConvKernelKey key;
  key.device_name = "Odd;GPU=1 %";
  key.sm_count = 132;
  key.layout = "nhwc";
  key.n = 8, key.c = 3, key.h = 9, key.w = 7, key.k = 5, key.r = 3, key.s = 2;
  key.pad_h = 1, key.pad_w = 0, key.pad_h_end = 2, key.pad_w_end = 0;
  key.stride_h = 2, key.dilation_w = 2, key.groups = 1;
  key.direction = ConvDirection::kBackwardFilter;
  auto parsed = parse_kernel_key(key.to_string());
  ASSERT_TRUE(parsed.has_value()) << key.to_string();
  EXPECT_EQ(*parsed, key);
  EXPECT_EQ(algorithm_count(key), kCudnnBackwardFilterAlgorithms);
  const std::string text = key.to_string();
  for (const std::string& bad : {std::string("k1"), text + ";", text.substr(0, text.size() - 1),
                                 [&] { std::string t = text; t.replace(t.find(";n=8"), 4, ";n=-8"); return t; }(),
                                 [&] { std::string t = text; t.replace(t.find("dir=bwd_filter"), 14, "dir=bwdf"); return t; }()})
    EXPECT_FALSE(parse_kernel_key(bad).has_value()) << bad;
}

constexpr int kWriters = 4;
constexpr int kKernelsPerWriter = 40;

std::string writer_key(int writer, int kernel) {
  return "writer" + std::to_string(writer) + "/kernel" + std::to_string(kernel);
}

// Returns 0 on success; used by child processes (no gtest assertions there).
int write_many(const std::string& path, int writer) {
  auto db = BenchmarkDb::open(path);
  if (!db.has_value()) return 1;
  for (int k = 0; k < kKernelsPerWriter; ++k) {
    if (!db->store(writer_key(writer, k), sample_timings(writer * 1000 + k)).is_ok()) return 2;
  }
  return 0;
}

void expect_all_rows(const std::string& path) {
  auto db = BenchmarkDb::open(path);
  ASSERT_TRUE(db.has_value()) << db.status().to_string();
  EXPECT_EQ(*db->kernel_count(), kWriters * kKernelsPerWriter);
  for (int w = 0; w < kWriters; ++w) {
    for (int k = 0; k < kKernelsPerWriter; ++k) {
      auto found = db->lookup(writer_key(w, k));
      ASSERT_TRUE(found.has_value() && found->has_value()) << writer_key(w, k);
      EXPECT_EQ(**found, sample_timings(w * 1000 + k)) << writer_key(w, k);
    }
  }
  EXPECT_EQ(query_single(path, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(query_single(path, "SELECT COUNT(*) FROM measurements"),
            std::to_string(kWriters * kKernelsPerWriter * 9));
}

TEST_F(BenchmarkDbTest, ConcurrentProcessesEachWithOwnConnection) {
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(write_many(path(), w));  // all open the (possibly not yet created) file at once
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "writer process failed";
  }
  expect_all_rows(path());
}

TEST_F(BenchmarkDbTest, ConcurrentThreadsEachWithOwnConnection) {
  std::vector<int> results(kWriters, -1);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] { results[w] = write_many(path(), w); });
  }
  for (auto& t : threads) t.join();
  for (int w = 0; w < kWriters; ++w) EXPECT_EQ(results[w], 0) << "writer " << w;
  expect_all_rows(path());
}

TEST(BenchmarkDbPath, DefaultPathFollowsXdg) {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old_xdg ? old_xdg : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(default_db_path(), "/tmp/xdg-test/ucudnn/benchmarks.sqlite");
  ::unsetenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (home) {
    EXPECT_EQ(default_db_path(), std::string(home) + "/.cache/ucudnn/benchmarks.sqlite");
  }
  if (old_xdg) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}

}  // namespace
}  // namespace ucudnn::optimizer
