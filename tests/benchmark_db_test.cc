// Tests for the SQLite benchmark database: round trip, reuse across opens,
// garbage files, foreign schema versions, conversion of version 1, rebuild,
// and concurrent writers (processes and threads, each with its own connection).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "optimizer/bench/benchmark_db.h"

namespace ucudnn::optimizer {
namespace {

namespace fs = std::filesystem;

class BenchmarkDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ucudnn_db_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path() const { return (dir_ / "nested" / "bench.sqlite").string(); }
  fs::path dir_;
};

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
  EXPECT_EQ(query_single(path(), "PRAGMA journal_mode"), "wal");
}

TEST_F(BenchmarkDbTest, GarbageFileIsAnErrorAndRebuildWorks) {
  fs::create_directories(fs::path(path()).parent_path());
  {
    std::ofstream garbage(path(), std::ios::binary);
    for (int i = 0; i < 4096; ++i) garbage.put(static_cast<char>((i * 131 + 7) & 0xff));
  }
  auto db = BenchmarkDb::open(path());
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
  const std::string message = db.status().message();
  EXPECT_NE(message.find(path()), std::string::npos) << message;
  EXPECT_NE(message.find("--rebenchmark"), std::string::npos) << message;
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

TEST_F(BenchmarkDbTest, SqliteFileOfAnotherProgramIsAnError) {
  fs::create_directories(fs::path(path()).parent_path());
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE photos (id INTEGER)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  auto db = BenchmarkDb::open(path());
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(db.status().message().find("not a ucudnn benchmark database"), std::string::npos) << db.status().message();
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
