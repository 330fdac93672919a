// Planning for "cuda" from a recorded database alone (no GPU needed): the
// device identity comes from the database (BenchmarkDb::device_keys), every
// timing from its rows; a missing kernel, a database without GPU rows, an
// ambiguous one and --rebenchmark without a GPU are clear errors. Where a GPU
// is present plan_model measures instead, so the planning cases skip there
// (tests/cudnn_benchmarker_test.cc covers that path). Also: the shipped
// models/h200_benchmarks.sqlite is never written (a CPU plan with it leaves it
// byte-identical), read-only files and directories are read, lying rows are
// refused rather than planned.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "api/loading.h"
#include "optimizer/bench/benchmark_db.h"
#include "optimizer/bench/stored_benchmarker.h"
#include "optimizer/kernel_key.h"
#include "optimizer/plan_model.h"
#include "runtime/ir/fusion.h"
#include "tests/support/temp_dir.h"
#include "tests/test_paths.h"

namespace ucudnn {
namespace {

namespace fs = std::filesystem;
using optimizer::AlgoMeasurement;
using optimizer::BenchmarkDb;
using optimizer::ConvKernelKey;
using optimizer::KernelTimings;

using ucudnn_test::source_dir;


ConvKernelKey gpu_key(const std::string& name, const std::string& math) {
  ConvKernelKey key;
  key.device_name = name;
  key.sm_count = 132;
  key.cuda_version = 13000;
  key.cudnn_version = 91900;
  key.driver_version = 13020;
  key.math_type = math;
  key.layout = "nchw";
  return key;
}

ir::Graph tiny_cnn(int64_t batch) {
  SessionOptions options;
  options.batch = batch;
  auto graph = load_inference_graph(source_dir() + "/models/tiny/tiny_cnn/model.onnx", options);
  EXPECT_TRUE(graph.has_value()) << graph.status().to_string();
  return std::move(*graph);
}

// Algorithm 1 is 3x faster than 0 but needs 4 KiB per sample; 7 is unavailable.
KernelTimings synthetic(const std::vector<int64_t>& sizes) {
  KernelTimings t;
  for (int64_t b : sizes) {
    const double n = static_cast<double>(b);
    t.by_batch[b] = {{0, "IMPLICIT_GEMM", 0.001 + 0.3 * n, 0, true},
                     {1, "IMPLICIT_PRECOMP_GEMM", 0.001 + 0.1 * n, static_cast<size_t>(b) * 4096, true},
                     {7, "WINOGRAD_NONFUSED", 0, 0, false}};
  }
  return t;
}

// Stores synthetic timings of every kernel of `graph` under `device`; skips kernel `skip` (-1: none).
void record(BenchmarkDb& db, const ir::Graph& graph, const ConvKernelKey& device, int skip = -1) {
  auto kernels = optimizer::collect_conv_kernels(graph, device);
  ASSERT_TRUE(kernels.has_value()) << kernels.status().to_string();
  ASSERT_GE(kernels->size(), 2u) << "the test needs a model with several convolutions";
  for (size_t k = 0; k < kernels->size(); ++k) {
    if (static_cast<int>(k) == skip) continue;
    const auto sizes = optimizer::micro_batch_sizes(optimizer::BatchSizePolicy::kPowerOfTwo, (*kernels)[k].batch());
    ASSERT_TRUE(db.store((*kernels)[k].key.to_string(), synthetic(sizes)).is_ok());
  }
}

// record() into the database file at `path` (created if missing), closed again before returning.
void record_file(const std::string& path, const ir::Graph& graph, const ConvKernelKey& device, int skip = -1) {
  auto db = BenchmarkDb::open(path);
  ASSERT_TRUE(db.has_value()) << db.status().to_string();
  record(*db, graph, device, skip);
}

// A plan for "cuda" under wr within `bytes` per kernel, from the database at `db_path`.
optimizer::PlanRequest wr(size_t bytes, const std::string& db_path) {
  optimizer::PlanRequest request;
  request.device = "cuda";
  request.planner.policy = optimizer::Policy::kWr;
  request.planner.workspace_bytes = bytes;
  request.db_path = db_path;
  request.progress = false;
  return request;
}

Expected<optimizer::PlanResult> plan_for_cuda(const ir::Graph& graph, const optimizer::PlanRequest& request) {
  UCUDNN_ASSIGN_OR_RETURN(optimizer::PlannedModel planned, optimizer::plan_model(graph, request));
  return std::move(planned.result);
}

TEST(StoredBenchmarker, DeviceKeysRoundTripEscapedNames) {
  const ucudnn_test::TempDir dir("ucudnn_stored_test");
  const std::string path = dir.file("keys.sqlite");
  auto db = BenchmarkDb::open(path);
  ASSERT_TRUE(db.has_value()) << db.status().to_string();
  ir::Graph graph = tiny_cnn(4);
  const ConvKernelKey a = gpu_key("Odd;GPU=1 %", "tf32"), b = gpu_key("NVIDIA H200", "fp32");
  ConvKernelKey cpu;
  cpu.device_name = "cpu:Some CPU x2 threads";
  record(*db, graph, a);
  record(*db, graph, b);
  record(*db, graph, cpu);
  auto keys = db->device_keys();
  ASSERT_TRUE(keys.has_value()) << keys.status().to_string();
  ASSERT_EQ(keys->size(), 3u);
  int matched = 0;
  for (const ConvKernelKey& key : *keys) matched += (key == a) + (key == b) + (key == cpu);
  EXPECT_EQ(matched, 3);
  // The GPU with the asked-for math type is chosen; CPU rows never are.
  auto tf32 = optimizer::stored_gpu_device_key(*db, "tf32");
  ASSERT_TRUE(tf32.has_value()) << tf32.status().to_string();
  EXPECT_EQ(*tf32, a);
  auto fp32 = optimizer::stored_gpu_device_key(*db, "fp32");
  ASSERT_TRUE(fp32.has_value());
  EXPECT_EQ(*fp32, b);
}

TEST(StoredBenchmarker, NoGpuRowsAndAmbiguousDatabasesAreErrors) {
  const ucudnn_test::TempDir dir("ucudnn_stored_test");
  const std::string path = dir.file("ambiguous.sqlite");
  auto db = BenchmarkDb::open(path);
  ASSERT_TRUE(db.has_value());
  auto none = optimizer::stored_gpu_device_key(*db, "tf32");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("no GPU measurements"), std::string::npos) << none.status().message();
  ir::Graph graph = tiny_cnn(4);
  ConvKernelKey cpu;
  cpu.device_name = "cpu:Test CPU x2 threads";
  record(*db, graph, cpu);
  auto cpu_only = optimizer::stored_gpu_device_key(*db, "tf32");
  ASSERT_FALSE(cpu_only.has_value());
  EXPECT_NE(cpu_only.status().message().find("it holds timings for cpu 'cpu:Test CPU x2 threads' only"),
            std::string::npos)
      << cpu_only.status().message();
  record(*db, graph, gpu_key("GPU A", "tf32"));
  record(*db, graph, gpu_key("GPU B", "tf32"));
  auto two = optimizer::stored_gpu_device_key(*db, "tf32");
  ASSERT_FALSE(two.has_value());
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(two.status().message().find("GPU A"), std::string::npos);
  EXPECT_NE(two.status().message().find("GPU B"), std::string::npos);
}

TEST(StoredBenchmarker, PlansForCudaFromTheDatabaseAlone) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present: planning for cuda measures on it instead";
  const ucudnn_test::TempDir dir("ucudnn_stored_test");
  const std::string path = dir.file("plan.sqlite");
  ir::Graph graph = tiny_cnn(8);
  record_file(path, graph, gpu_key("Recorded GPU", "tf32"));
  // Room for algorithm 1 at micro-batches of 4 only: wr divides every convolution 4 + 4.
  auto result = plan_for_cuda(graph, wr(4 * 4096, path));
  ASSERT_TRUE(result.has_value()) << result.status().to_string();
  EXPECT_EQ(result->plan.device, "cuda");
  EXPECT_EQ(result->plan.device_name, "Recorded GPU");
  EXPECT_EQ(result->kernels_benchmarked, 0);
  EXPECT_EQ(result->kernels_reused, static_cast<int>(result->kernels.size()));
  int convs = 0;
  for (const runtime::PlanStep& step : result->plan.steps) {
    if (graph.nodes[step.node].op != OpKind::kConv) {
      EXPECT_EQ(step.workspace_bytes, 0u);
      continue;
    }
    ++convs;
    ASSERT_EQ(step.micro_batches.size(), 2u) << graph.nodes[step.node].describe();
    for (const runtime::MicroBatch& m : step.micro_batches) {
      EXPECT_EQ(m.size, 4);
      EXPECT_EQ(m.algorithm, 1);
    }
  }
  EXPECT_GE(convs, 2);
}

// --workspace unlimited from recorded rows: every policy gives each convolution its fastest
// configuration, algorithm 1 on the whole batch (0.801 ms beside algorithm 0's 2.401 ms).
TEST(StoredBenchmarker, UnlimitedWorkspaceUnderEveryPolicy) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present: planning for cuda measures on it instead";
  const ucudnn_test::TempDir dir("ucudnn_stored_test");
  const std::string path = dir.file("unlimited.sqlite");
  ir::Graph graph = tiny_cnn(8);
  record_file(path, graph, gpu_key("Recorded GPU", "tf32"));
  for (optimizer::Policy policy : {optimizer::Policy::kUndivided, optimizer::Policy::kWr, optimizer::Policy::kWd}) {
    SCOPED_TRACE(optimizer::policy_name(policy));
    optimizer::PlanRequest request = wr(optimizer::kUnlimitedWorkspace, path);
    request.planner.policy = policy;
    auto result = plan_for_cuda(graph, request);
    ASSERT_TRUE(result.has_value()) << result.status().to_string();
    int convs = 0;
    for (const runtime::PlanStep& step : result->plan.steps) {
      if (graph.nodes[step.node].op != OpKind::kConv) continue;
      ++convs;
      EXPECT_EQ(step.micro_batches, (std::vector<runtime::MicroBatch>{{8, 1}})) << graph.nodes[step.node].describe();
    }
    EXPECT_GE(convs, 2);
  }
}

TEST(StoredBenchmarker, MissingKernelNamesIt) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present: a missing kernel is measured there";
  const ucudnn_test::TempDir dir("ucudnn_stored_test");
  const std::string path = dir.file("missing.sqlite");
  ir::Graph graph = tiny_cnn(8);
  const ConvKernelKey device = gpu_key("Recorded GPU", "tf32");
  record_file(path, graph, device, /*skip=*/1);
  auto kernels = optimizer::collect_conv_kernels(graph, device);
  ASSERT_TRUE(kernels.has_value());
  auto result = plan_for_cuda(graph, wr(size_t{64} << 20, path));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find((*kernels)[1].key.to_string()), std::string::npos)
      << result.status().message();
  // Strict FP32 asks for rows this database does not have.
  optimizer::PlanRequest strict_request = wr(size_t{64} << 20, path);
  strict_request.math_type = "fp32";
  auto strict = plan_for_cuda(graph, strict_request);
  ASSERT_FALSE(strict.has_value());
  EXPECT_NE(strict.status().message().find("'fp32'"), std::string::npos) << strict.status().message();
}

TEST(StoredBenchmarker, RebenchmarkWithoutGpuIsRefusedAndKeepsTheDatabase) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present";
  const ucudnn_test::TempDir dir("ucudnn_stored_test");
  const std::string path = dir.file("rebench.sqlite");
  ir::Graph graph = tiny_cnn(8);
  record_file(path, graph, gpu_key("Recorded GPU", "tf32"));
  optimizer::PlanRequest request = wr(size_t{64} << 20, path);
  request.rebenchmark = true;
  auto result = plan_for_cuda(graph, request);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  auto db = BenchmarkDb::open(path);
  ASSERT_TRUE(db.has_value());
  auto count = db->kernel_count();
  ASSERT_TRUE(count.has_value());
  EXPECT_GT(*count, 0);
}

TEST(StoredBenchmarker, UnknownDeviceIsRejected) {
  ir::Graph graph = tiny_cnn(2);
  const ucudnn_test::TempDir dir("ucudnn_stored_test");
  optimizer::PlanRequest request = wr(1 << 20, dir.file("tpu.sqlite"));
  request.device = "tpu";
  auto result = plan_for_cuda(graph, request);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
}

// --- The shipped reference database and databases that lie ------------------------------------

// What "left alone" means: the file's bytes and the names in its directory.
std::pair<std::string, std::set<std::string>> snapshot(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::set<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(fs::path(path).parent_path()))
    names.insert(entry.path().filename().string());
  return {bytes.str(), names};
}

void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql << ": " << sqlite3_errmsg(raw);
  sqlite3_close(raw);
}

std::string shipped_db() { return source_dir() + "/models/h200_benchmarks.sqlite"; }

// models/h200_benchmarks.sqlite carries the read-only mark, and is in
// rollback-journal mode so that reading it creates no FILE-wal / FILE-shm.
TEST(ShippedDatabase, IsAMarkedReferenceSetReadWithoutWriting) {
  const auto before = snapshot(shipped_db());
  ASSERT_GT(before.first.size(), 100u);
  EXPECT_EQ(before.first[18], 1) << "models/h200_benchmarks.sqlite is in WAL mode (docs/OPTIMIZER.md says how to fix)";
  EXPECT_EQ(before.first[19], 1);
  {
    auto db = BenchmarkDb::open_read_only(shipped_db());
    ASSERT_TRUE(db.has_value()) << db.status().to_string();
    auto storable = db->can_store();  // decided from the mark, without opening for writing
    ASSERT_TRUE(storable.has_value()) << storable.status().to_string();
    EXPECT_FALSE(*storable) << "models/h200_benchmarks.sqlite lacks the read_only mark (docs/OPTIMIZER.md)";
    EXPECT_NE(db->cannot_store_reason().find("read-only reference database"), std::string::npos);
    auto keys = db->device_keys();
    ASSERT_TRUE(keys.has_value()) << keys.status().to_string();
    EXPECT_FALSE(keys->empty());
  }
  EXPECT_TRUE(snapshot(shipped_db()) == before) << "reading the shipped database changed it or its folder";
}

// The regression of issue 11: `ucudnn plan` on the CPU with the H200 database
// measured the CPU and stored its rows into that file. Now the file (a copy
// here) is left byte-identical, stderr says why the CPU is measured and that
// nothing was stored — once.
TEST(ShippedDatabase, CpuPlanLeavesItUnchanged) {
  const ucudnn_test::TempDir dir("ucudnn_stored_test");
  const std::string copy = dir.file("h200_benchmarks.sqlite");
  fs::copy_file(shipped_db(), copy);
  const auto before = snapshot(copy);
  optimizer::PlanRequest request;
  request.device = "cpu";
  request.db_path = copy;
  request.progress = false;
  ir::Graph graph = tiny_cnn(2);
  ::testing::internal::CaptureStderr();
  auto planned = optimizer::plan_model(graph, request);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
  EXPECT_GE(planned->result.kernels_benchmarked, 2) << "the CPU's timings are not in an H200 database";
  EXPECT_TRUE(snapshot(copy) == before) << "planning on the CPU wrote into the H200 database";
  EXPECT_NE(err.find(copy + " holds timings for cuda 'NVIDIA H200'"), std::string::npos) << err;
  EXPECT_NE(err.find("only, none for cpu 'cpu:"), std::string::npos) << err;
  EXPECT_NE(err.find("benchmarking on this machine"), std::string::npos) << err;
  const size_t not_stored = err.find("not stored in " + copy);
  EXPECT_NE(not_stored, std::string::npos) << err;
  EXPECT_EQ(err.find("not stored", not_stored + 1), std::string::npos) << "said more than once: " << err;
  EXPECT_NE(err.find("--db FILE"), std::string::npos) << err;
}

// A database of the CPU's own timings in a read-only directory, the file
// read-only too: planning reads it (every kernel reused) and leaves it alone.
// As root the permission bits do not stop writes, so what is checked is that
// the bytes and the directory's names are unchanged (benchmark_db_test checks
// the refusal to store as user nobody).
TEST(StoredTimings, ReadOnlyFileInReadOnlyDirectoryIsRead) {
  const ucudnn_test::TempDir dir("ucudnn_stored_test");
  const std::string path = dir.file("cpu.sqlite");
  optimizer::PlanRequest request;
  request.device = "cpu";
  request.db_path = path;
  request.progress = false;
  ir::Graph graph = tiny_cnn(2);
  auto first = optimizer::plan_model(graph, request);
  ASSERT_TRUE(first.has_value()) << first.status().to_string();
  fs::permissions(path, fs::perms::owner_read);
  fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
  const auto before = snapshot(path);
  ::testing::internal::CaptureStderr();
  auto again = optimizer::plan_model(graph, request);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(again.has_value()) << again.status().to_string();
  EXPECT_EQ(again->result.kernels_benchmarked, 0);
  EXPECT_EQ(again->result.kernels_reused, static_cast<int>(again->result.kernels.size()));
  EXPECT_EQ(err, "") << "nothing to say when every timing is there";
  EXPECT_TRUE(snapshot(path) == before);
}

// Lying rows reach no plan: 'abc' was read as 0 ms (an "optimal" plan at 0 ms),
// a negative workspace was cast to size_t.
TEST(StoredTimings, LyingRowsAreRefusedNotPlanned) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present: planning for cuda measures on it instead";
  for (const char* lie : {"time_ms = 'abc'", "workspace_bytes = -256"}) {
    SCOPED_TRACE(lie);
    const ucudnn_test::TempDir dir("ucudnn_stored_test");
    const std::string path = dir.file("lying.sqlite");
    ir::Graph graph = tiny_cnn(8);
    record_file(path, graph, gpu_key("Recorded GPU", "tf32"));
    raw_exec(path, std::string("UPDATE measurements SET ") + lie + " WHERE rowid = 2");  // algorithm 1 at micro-batch 1
    auto result = plan_for_cuda(graph, wr(size_t{64} << 20, path));
    ASSERT_FALSE(result.has_value()) << "planned at " << result->policy.total_time_ms << " ms";
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    const std::string message = result.status().message();
    EXPECT_NE(message.find("corrupt benchmark database '" + path + "': row 2 of table measurements has"),
              std::string::npos)
        << message;
  }
}

// Without a GPU and without the file there is nothing to plan from; nothing is created.
TEST(StoredTimings, MissingDatabaseForCudaWithoutGpuCreatesNothing) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present: planning for cuda measures on it instead";
  const ucudnn_test::TempDir dir("ucudnn_stored_test");
  const std::string path = dir.file("nested/none.sqlite");
  auto result = plan_for_cuda(tiny_cnn(2), wr(size_t{64} << 20, path));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_NE(result.status().message().find(path), std::string::npos) << result.status().message();
  EXPECT_FALSE(fs::exists(dir.path() / "nested"));
}

// Note [graph engines and epilogues] (optimizer/plan_model.cc): a graph-API engine timed faster than
// every legacy algorithm is chosen for a bare convolution, never for one with a bias and a fused Relu
// (which the legacy call fuses, and a graph engine would run as extra passes the bare timing does not see).
TEST(StoredBenchmarker, GraphEnginesOnlyWhereTheLegacyCallFusesNoEpilogue) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present: planning for cuda measures on it instead";
  const ucudnn_test::TempDir dir("ucudnn_stored_test");
  const std::string path = dir.file("engines.sqlite");
  ir::Graph graph = tiny_cnn(8);
  ir::Node* bare = nullptr;  // the first Conv, stripped of its bias and fused activation
  for (ir::Node& node : graph.nodes)
    if (node.op == OpKind::kConv) {
      bare = &node;
      break;
    }
  ASSERT_NE(bare, nullptr);
  if (bare->inputs.size() > 2) bare->inputs.resize(2);
  bare->attrs.erase(ir::kFusedActivationAttr);
  {
    auto db = BenchmarkDb::open(path);
    ASSERT_TRUE(db.has_value()) << db.status().to_string();
    auto kernels = optimizer::collect_conv_kernels(graph, gpu_key("Recorded GPU", "tf32"));
    ASSERT_TRUE(kernels.has_value()) << kernels.status().to_string();
    for (const optimizer::ConvKernel& kernel : *kernels) {
      const auto sizes = optimizer::micro_batch_sizes(optimizer::BatchSizePolicy::kPowerOfTwo, kernel.batch());
      KernelTimings t = synthetic(sizes);
      for (auto& [b, row] : t.by_batch)
        row.push_back({optimizer::kGraphEngineBase, "ENGINE_0", 0.001 * static_cast<double>(b), 0, true});
      ASSERT_TRUE(db->store(kernel.key.to_string(), t).is_ok());
    }
  }
  auto result = plan_for_cuda(graph, wr(size_t{1} << 30, path));
  ASSERT_TRUE(result.has_value()) << result.status().to_string();
  int with_epilogue = 0, without = 0;
  for (const runtime::PlanStep& step : result->plan.steps) {
    const ir::Node& node = graph.nodes[step.node];
    if (node.op != OpKind::kConv) continue;
    const bool epilogue =
        node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue && ir::fused_activation(node) == "Relu";
    ++(epilogue ? with_epilogue : without);
    ASSERT_FALSE(step.micro_batches.empty()) << node.describe();
    for (const runtime::MicroBatch& m : step.micro_batches)
      EXPECT_EQ(m.algorithm == optimizer::kGraphEngineBase, !epilogue) << node.describe();
  }
  EXPECT_GE(with_epilogue, 1);
  EXPECT_EQ(without, 1);
}

}  // namespace
}  // namespace ucudnn
