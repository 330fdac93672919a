// Sharded benchmarking (optimizer/bench/sharded_benchmarking.h) without a GPU: the
// --benchmark-devices lists; the pool with fake GPU benchmarkers on tiny_cnn's
// training graph (forward, backward-data and backward-filter kernels) — timings, database
// rows and their order, and the plan the same for 1, 2 and 4 workers as for one benchmarker
// on the calling thread; `store` called on the calling thread only, in the kernels' order;
// errors of a measurement, of `store` and of starting a worker; GPUs of different models
// refused. With a GPU (skipped here): plan_model with benchmark_devices "0" and "all" gives
// the plan and the database that it gives without them.
#include "optimizer/bench/sharded_benchmarking.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "onnx_import/onnx_import.h"
#include "optimizer/bench/benchmark_db.h"
#include "optimizer/bench/device_benchmarker.h"
#include "optimizer/passes/passes.h"
#include "optimizer/plan_model.h"
#include "optimizer/planner.h"
#include "runtime/plan/plan_json.h"
#include "tests/support/temp_dir.h"
#include "tests/test_paths.h"
#include "training/training_graph.h"

namespace ucudnn::optimizer {
namespace {

// --- The device lists -------------------------------------------------------------------------

TEST(BenchmarkDevices, ParsesAllAndIdLists) {
  auto all = parse_benchmark_devices("all");
  ASSERT_TRUE(all.has_value()) << all.status().to_string();
  EXPECT_TRUE(all->all);
  auto list = parse_benchmark_devices("2,0,5");
  ASSERT_TRUE(list.has_value()) << list.status().to_string();
  EXPECT_FALSE(list->all);
  EXPECT_EQ(list->ids, (std::vector<int>{2, 0, 5}));
  for (const char* bad : {"", "0,,1", "1,", ",1", "gpu0", "-1", " 1", "1 ", "0,0", "ALL", "1.5", "99999999999"}) {
    auto parsed = parse_benchmark_devices(bad);
    ASSERT_FALSE(parsed.has_value()) << "'" << bad << "' was accepted";
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("--benchmark-devices '" + std::string(bad) + "'"), std::string::npos)
        << parsed.status().to_string();
  }
  EXPECT_NE(parse_benchmark_devices("0,0").status().message().find("GPU 0 is named twice"), std::string::npos);
}

TEST(BenchmarkDevices, SelectsAmongThePresentGpus) {
  auto all = select_benchmark_devices("all", 4);
  ASSERT_TRUE(all.has_value()) << all.status().to_string();
  EXPECT_EQ(*all, (std::vector<int>{0, 1, 2, 3}));
  auto some = select_benchmark_devices("3,1", 4);
  ASSERT_TRUE(some.has_value()) << some.status().to_string();
  EXPECT_EQ(*some, (std::vector<int>{3, 1}));
  auto out_of_range = select_benchmark_devices("0,2", 2);
  ASSERT_FALSE(out_of_range.has_value());
  EXPECT_NE(out_of_range.status().message().find("there is no GPU 2; 2 GPUs are present (ids 0 to 1)"),
            std::string::npos)
      << out_of_range.status().to_string();
  EXPECT_NE(select_benchmark_devices("1", 1).status().message().find("1 GPU is present"), std::string::npos);
  EXPECT_NE(select_benchmark_devices("all", 0).status().message().find("no GPU is present"), std::string::npos);
}

// --- The pool with fake GPUs ------------------------------------------------------------------

// What every fake worker shares: the threads that measured, how many items, what to fail.
struct FakeLab {
  std::mutex mutex;
  std::condition_variable cv;
  std::set<std::thread::id> measuring_threads;
  std::atomic<int> measurements{0};
  std::string fail_key;      // a kernel key: its measurement at fail_size fails
  int64_t fail_size = 0;
  int wait_for_threads = 0;  // each measurement waits (up to 10 s) until this many threads measured
};

// A GPU that measures nothing: per (kernel, size) three algorithms whose times and workspaces are
// a function of the kernel's key and the size alone, so any worker gives the same table. Sleeps a
// little, differently per item, so that items finish out of the order they were handed out in.
class FakeGpuBenchmarker final : public Benchmarker {
 public:
  FakeGpuBenchmarker(FakeLab& lab, std::string name, int sm_count) : lab_(lab) {
    key_.device_name = std::move(name);
    key_.sm_count = sm_count;
    key_.cuda_version = key_.driver_version = 13000;
    key_.cudnn_version = 91900;
    key_.math_type = "tf32";
  }
  ConvKernelKey device_key() const override { return key_; }
  Expected<KernelTimings> measure(const ir::Graph&, const ConvKernel& kernel,
                                  const std::vector<int64_t>& sizes) override {
    {
      std::unique_lock<std::mutex> lock(lab_.mutex);
      lab_.measuring_threads.insert(std::this_thread::get_id());
      lab_.cv.notify_all();
      lab_.cv.wait_for(lock, std::chrono::seconds(10), [&] {
        return static_cast<int>(lab_.measuring_threads.size()) >= lab_.wait_for_threads;
      });
    }
    const std::string key = kernel.key.to_string();
    const size_t seed = std::hash<std::string>()(key);
    KernelTimings timings;
    for (int64_t size : sizes) {
      ++lab_.measurements;
      if (key == lab_.fail_key && size == lab_.fail_size) return device_error("fake cuDNN failure");
      std::this_thread::sleep_for(std::chrono::microseconds((seed + size_t(size)) % 7 * 150));
      for (int algorithm = 0; algorithm < 3; ++algorithm) {
        const double base = double((seed >> (4 * algorithm)) % 1000) / 1000.0 + 0.25;
        timings.by_batch[size].push_back({algorithm, "ALGO_" + std::to_string(algorithm),
                                          base * double(size) / double(algorithm + 1),
                                          size_t(algorithm) * size_t(size) * 4096, algorithm != 1 || size > 2});
      }
    }
    return timings;
  }

 private:
  FakeLab& lab_;
  ConvKernelKey key_;
};

std::vector<BenchmarkWorkerSpec> fake_workers(FakeLab& lab, int count, const std::string& name = "NVIDIA H200") {
  std::vector<BenchmarkWorkerSpec> specs;
  for (int i = 0; i < count; ++i)
    specs.push_back({"GPU " + std::to_string(i), [&lab, name]() -> Expected<std::unique_ptr<Benchmarker>> {
                       return std::unique_ptr<Benchmarker>(new FakeGpuBenchmarker(lab, name, 132));
                     }});
  return specs;
}

// tiny_cnn's training graph at batch 16: convolutions in all three directions, five
// micro-batch sizes each.
const ir::Graph& training_graph() {
  static const ir::Graph graph = [] {
    onnx_import::ImportOptions import;
    import.batch = 16;
    auto inference =
        onnx_import::load_model(ucudnn_test::source_dir() + "/models/tiny/tiny_cnn/model.onnx", import);
    EXPECT_TRUE(inference.has_value()) << inference.status().to_string();
    auto training = training::build_training_graph(*inference, {});
    EXPECT_TRUE(training.has_value()) << training.status().to_string();
    return training->graph;
  }();
  return graph;
}

// Every row of the database file in id order: the kernels in the order they were stored, then
// the measurements.
std::vector<std::string> database_rows(const std::string& path) {
  sqlite3* db = nullptr;
  std::vector<std::string> rows;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  for (const char* sql : {"SELECT id, key FROM kernels ORDER BY id",
                          "SELECT * FROM measurements ORDER BY kernel_id, micro_batch, algorithm"}) {
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &statement, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    while (sqlite3_step(statement) == SQLITE_ROW) {
      std::string row;
      for (int c = 0; c < sqlite3_column_count(statement); ++c) {
        const unsigned char* text = sqlite3_column_text(statement, c);
        row += (c ? "|" : "") + std::string(text ? reinterpret_cast<const char*>(text) : "NULL");
      }
      rows.push_back(row);
    }
    sqlite3_finalize(statement);
  }
  sqlite3_close(db);
  return rows;
}

std::string plan_json(const ir::Graph& graph, GraphTimings timings) {
  PlannerOptions options;
  options.workspace_bytes = size_t{1} << 20;
  auto planned = plan_from_timings(graph, "cuda", options, std::move(timings));
  EXPECT_TRUE(planned.has_value()) << planned.status().to_string();
  return planned ? runtime::plan_to_json(planned->plan, graph) : "";
}

void expect_same_timings(const GraphTimings& expected, const GraphTimings& got) {
  EXPECT_EQ(got.device_name, expected.device_name);
  ASSERT_EQ(got.kernels.size(), expected.kernels.size());
  ASSERT_EQ(got.timings.size(), expected.timings.size());
  for (size_t i = 0; i < expected.kernels.size(); ++i) {
    EXPECT_EQ(got.kernels[i].key, expected.kernels[i].key) << i;
    EXPECT_EQ(got.timings[i].name, expected.timings[i].name) << i;
    EXPECT_EQ(got.timings[i].calls, expected.timings[i].calls) << i;
    EXPECT_TRUE(got.timings[i].timings == expected.timings[i].timings) << expected.timings[i].name;
  }
  EXPECT_EQ(got.kernels_benchmarked, expected.kernels_benchmarked);
  EXPECT_EQ(got.kernels_reused, expected.kernels_reused);
}

TEST(BenchmarkPool, SameTimingsDatabaseAndPlanWhateverTheWorkers) {
  const ir::Graph& graph = training_graph();
  ucudnn_test::TempDir dir("ucudnn_sharded");
  FakeLab lab;
  // The reference: one benchmarker on this thread (plan_model without benchmark_devices).
  FakeGpuBenchmarker single(lab, "NVIDIA H200", 132);
  auto reference_db = BenchmarkDb::open(dir.file("single.sqlite"));
  ASSERT_TRUE(reference_db.has_value()) << reference_db.status().to_string();
  auto reference = gather_timings(graph, BatchSizePolicy::kPowerOfTwo, single, &*reference_db, false, false);
  ASSERT_TRUE(reference.has_value()) << reference.status().to_string();
  std::set<ConvDirection> directions;
  for (const ConvKernel& kernel : reference->kernels) directions.insert(kernel.direction());
  ASSERT_EQ(directions.size(), 3u) << "the training graph has kernels in all three directions";
  ASSERT_GE(reference->kernels_benchmarked, 5);
  const std::vector<std::string> reference_rows = database_rows(dir.file("single.sqlite"));
  const std::string reference_plan = plan_json(graph, *reference);

  for (int workers : {1, 2, 4}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    auto pool = BenchmarkPool::start(fake_workers(lab, workers));
    ASSERT_TRUE(pool.has_value()) << pool.status().to_string();
    EXPECT_EQ((*pool)->workers(), workers);
    const std::string path = dir.file("sharded" + std::to_string(workers) + ".sqlite");
    auto db = BenchmarkDb::open(path);
    ASSERT_TRUE(db.has_value()) << db.status().to_string();
    lab.measurements = 0;
    auto sharded = gather_timings(graph, BatchSizePolicy::kPowerOfTwo, **pool, &*db, false, false);
    ASSERT_TRUE(sharded.has_value()) << sharded.status().to_string();
    expect_same_timings(*reference, *sharded);
    EXPECT_EQ(database_rows(path), reference_rows);
    EXPECT_EQ(plan_json(graph, *sharded), reference_plan);
    EXPECT_EQ(lab.measurements.load(), 5 * reference->kernels_benchmarked) << "one item per kernel and size";

    // Warm: everything from the database, nothing measured.
    lab.measurements = 0;
    auto warm = gather_timings(graph, BatchSizePolicy::kPowerOfTwo, **pool, &*db, false, false);
    ASSERT_TRUE(warm.has_value()) << warm.status().to_string();
    EXPECT_EQ(lab.measurements.load(), 0);
    EXPECT_EQ(warm->kernels_reused, reference->kernels_benchmarked);
    EXPECT_EQ(plan_json(graph, *warm), reference_plan);
  }
}

// The jobs of `graph`'s kernels at the power-of-two sizes.
std::vector<BenchmarkJob> all_jobs(const std::vector<ConvKernel>& kernels) {
  std::vector<BenchmarkJob> jobs;
  for (const ConvKernel& kernel : kernels)
    jobs.push_back({&kernel, micro_batch_sizes(BatchSizePolicy::kPowerOfTwo, kernel.batch())});
  return jobs;
}

TEST(BenchmarkPool, StoresOnTheCallingThreadInTheKernelsOrder) {
  const ir::Graph& graph = training_graph();
  FakeLab lab;
  lab.wait_for_threads = 2;  // the first item waits for a second worker: two threads measure for sure
  auto pool = BenchmarkPool::start(fake_workers(lab, 4));
  ASSERT_TRUE(pool.has_value()) << pool.status().to_string();
  auto kernels = collect_conv_kernels(graph, (*pool)->device_key());
  ASSERT_TRUE(kernels.has_value()) << kernels.status().to_string();
  const std::vector<BenchmarkJob> jobs = all_jobs(*kernels);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<size_t> stored;
  int last_done = 0, total_items = 0;
  const Status status = (*pool)->measure(
      graph, jobs,
      [&](size_t job, KernelTimings timings) {
        // The wrapper around the writer: the database's one user is this thread.
        EXPECT_EQ(std::this_thread::get_id(), caller) << "store called off the calling thread";
        EXPECT_EQ(timings.by_batch.size(), jobs[job].sizes.size()) << "every size of the kernel merged";
        stored.push_back(job);
        return Status::ok();
      },
      [&](int done, int total) {
        EXPECT_EQ(std::this_thread::get_id(), caller);
        EXPECT_GT(done, last_done);
        last_done = done;
        total_items = total;
      });
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  std::vector<size_t> in_order(jobs.size());
  for (size_t j = 0; j < in_order.size(); ++j) in_order[j] = j;
  EXPECT_EQ(stored, in_order);
  EXPECT_EQ(total_items, static_cast<int>(5 * jobs.size()));
  EXPECT_EQ(last_done, total_items);
  EXPECT_GE(lab.measuring_threads.size(), 2u);
  EXPECT_EQ(lab.measuring_threads.count(caller), 0u) << "the workers measure, not the writer";
}

TEST(BenchmarkPool, AMeasurementErrorStopsTheWorkersAndNamesKernelAndGpu) {
  const ir::Graph& graph = training_graph();
  FakeLab lab;
  auto pool = BenchmarkPool::start(fake_workers(lab, 3));
  ASSERT_TRUE(pool.has_value()) << pool.status().to_string();
  auto kernels = collect_conv_kernels(graph, (*pool)->device_key());
  ASSERT_TRUE(kernels.has_value()) << kernels.status().to_string();
  const std::vector<BenchmarkJob> jobs = all_jobs(*kernels);
  const size_t failing = 2;
  lab.fail_key = (*kernels)[failing].key.to_string();
  lab.fail_size = 4;
  std::vector<size_t> stored;
  const auto record = [&](size_t job, KernelTimings) {
    stored.push_back(job);
    return Status::ok();
  };
  const Status status = (*pool)->measure(graph, jobs, record, nullptr);
  ASSERT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), StatusCode::kDeviceError) << status.to_string();
  const std::string& message = status.message();
  EXPECT_NE(message.find("fake cuDNN failure"), std::string::npos) << message;
  EXPECT_NE(message.find(graph.nodes[(*kernels)[failing].nodes.front()].describe()), std::string::npos) << message;
  EXPECT_NE(message.find("micro-batch 4) on GPU "), std::string::npos) << message;
  for (size_t job : stored) EXPECT_LT(job, failing) << "nothing stored from the failed kernel on";

  // The pool serves the next call (the other layout of a plan) as before.
  lab.fail_key.clear();
  stored.clear();
  const Status again = (*pool)->measure(graph, jobs, record, nullptr);
  EXPECT_TRUE(again.is_ok()) << again.to_string();
  EXPECT_EQ(stored.size(), jobs.size());
}

TEST(BenchmarkPool, AStoreErrorStopsTheMeasuring) {
  const ir::Graph& graph = training_graph();
  FakeLab lab;
  auto pool = BenchmarkPool::start(fake_workers(lab, 2));
  ASSERT_TRUE(pool.has_value()) << pool.status().to_string();
  auto kernels = collect_conv_kernels(graph, (*pool)->device_key());
  ASSERT_TRUE(kernels.has_value()) << kernels.status().to_string();
  std::vector<size_t> stored;
  const Status status = (*pool)->measure(
      graph, all_jobs(*kernels),
      [&](size_t job, KernelTimings) {
        stored.push_back(job);
        return job == 1 ? invalid_argument("disk full") : Status::ok();
      },
      nullptr);
  EXPECT_EQ(status.message(), "disk full");
  EXPECT_EQ(stored, (std::vector<size_t>{0, 1}));
}

TEST(BenchmarkPool, AWorkerThatCannotStartIsReported) {
  FakeLab lab;
  std::vector<BenchmarkWorkerSpec> specs = fake_workers(lab, 3);
  specs[1].make = []() -> Expected<std::unique_ptr<Benchmarker>> {
    return device_error("cudnnCreate failed: CUDNN_STATUS_NOT_INITIALIZED");
  };
  auto pool = BenchmarkPool::start(std::move(specs));
  ASSERT_FALSE(pool.has_value());
  EXPECT_EQ(pool.status().message(), "GPU 1: cudnnCreate failed: CUDNN_STATUS_NOT_INITIALIZED");
  EXPECT_FALSE(BenchmarkPool::start({}).has_value());
}

TEST(BenchmarkPool, RefusesGpusOfDifferentModels) {
  FakeLab lab;
  const auto make = [&lab](std::string name, int sm) {
    return [&lab, name, sm]() -> Expected<std::unique_ptr<Benchmarker>> {
      return std::unique_ptr<Benchmarker>(new FakeGpuBenchmarker(lab, name, sm));
    };
  };
  {
    std::vector<BenchmarkWorkerSpec> specs = {{"GPU 0", make("NVIDIA H200", 132)},
                                              {"GPU 1", make("NVIDIA H200", 132)},
                                              {"GPU 2", make("NVIDIA A100-SXM4-80GB", 108)}};
    auto pool = BenchmarkPool::start(std::move(specs));
    ASSERT_FALSE(pool.has_value());
    EXPECT_EQ(pool.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(pool.status().message().find("GPU 0 is 'NVIDIA H200' (132 SMs), GPU 2 is 'NVIDIA A100-SXM4-80GB' "
                                           "(108 SMs); benchmark on GPUs of one model"),
              std::string::npos)
        << pool.status().to_string();
  }
  {  // one name, fewer SMs (a partitioned GPU): another key, refused too
    std::vector<BenchmarkWorkerSpec> specs = {{"GPU 0", make("NVIDIA H200", 132)},
                                              {"GPU 1", make("NVIDIA H200", 66)}};
    auto pool = BenchmarkPool::start(std::move(specs));
    ASSERT_FALSE(pool.has_value());
    EXPECT_NE(pool.status().message().find("GPU 1 is 'NVIDIA H200' (66 SMs)"), std::string::npos)
        << pool.status().to_string();
  }
}

// --- plan_model's checks, and the GPUs when present -------------------------------------------

ir::Graph tiny_inference(const std::string& name, int64_t batch) {
  onnx_import::ImportOptions import;
  import.batch = batch;
  auto graph = onnx_import::load_model(ucudnn_test::source_dir() + "/models/tiny/" + name + "/model.onnx", import);
  EXPECT_TRUE(graph.has_value()) << graph.status().to_string();
  EXPECT_TRUE(run_inference_passes(*graph).has_value());
  return std::move(*graph);
}

TEST(ShardedPlanModel, RefusesBenchmarkDevicesOnTheCpuAndMalformedLists) {
  const ir::Graph graph = tiny_inference("tiny_cnn", 2);
  ucudnn_test::TempDir dir("ucudnn_sharded");
  PlanRequest request;
  request.db_path = dir.file("db.sqlite");
  request.progress = false;
  request.benchmark_devices = "0";
  auto cpu = plan_model(graph, request);
  ASSERT_FALSE(cpu.has_value());
  EXPECT_NE(cpu.status().message().find("--benchmark-devices 0 shards GPU benchmarking; this plan is for device 'cpu'"),
            std::string::npos)
      << cpu.status().to_string();
  request.device = "cuda";
  request.benchmark_devices = "0,x";
  auto malformed = plan_model(graph, request);
  ASSERT_FALSE(malformed.has_value());
  EXPECT_NE(malformed.status().message().find("'x' is not a GPU id"), std::string::npos)
      << malformed.status().to_string();
}

TEST(ShardedPlanModel, WithoutAGpuTheWorkersCannotBeMade) {
  if (can_measure_on("cuda")) GTEST_SKIP() << "a GPU is present";
  auto workers = make_gpu_benchmark_workers("0", "tf32");
  ASSERT_FALSE(workers.has_value());
  EXPECT_NE(workers.status().message().find("no GPU is present"), std::string::npos) << workers.status().to_string();
}

// On the GPU machine: one cold plan sharded over every GPU; then, from that database, the plans
// with "0" and without the option measure nothing and are the same plan; a cold plan on GPU 0
// alone stores the same kernels.
TEST(ShardedPlanModel, OnTheGpusTheShardedPlanIsThePlan) {
  if (!can_measure_on("cuda")) GTEST_SKIP() << "no CUDA device";
  const ir::Graph graph = tiny_inference("tiny_residual", 8);
  ucudnn_test::TempDir dir("ucudnn_sharded");
  PlanRequest request;
  request.device = "cuda";
  request.layouts = {GraphLayout::kNchw, GraphLayout::kNhwc};
  request.db_path = dir.file("all.sqlite");
  request.progress = false;
  request.benchmark_devices = "all";
  auto cold = plan_model(graph, request);
  ASSERT_TRUE(cold.has_value()) << cold.status().to_string();
  EXPECT_GT(cold->result.kernels_benchmarked, 0);
  const std::string plan = runtime::plan_to_json(cold->result.plan, cold->graph);
  for (const char* devices : {"0", "", "all"}) {
    SCOPED_TRACE(std::string("benchmark_devices '") + devices + "'");
    request.benchmark_devices = devices;
    auto warm = plan_model(graph, request);
    ASSERT_TRUE(warm.has_value()) << warm.status().to_string();
    EXPECT_EQ(warm->result.kernels_benchmarked, 0);
    EXPECT_EQ(runtime::plan_to_json(warm->result.plan, warm->graph), plan);
  }
  request.db_path = dir.file("gpu0.sqlite");
  request.benchmark_devices = "0";
  auto one = plan_model(graph, request);
  ASSERT_TRUE(one.has_value()) << one.status().to_string();
  auto all_db = BenchmarkDb::open_read_only(dir.file("all.sqlite"));
  auto one_db = BenchmarkDb::open_read_only(dir.file("gpu0.sqlite"));
  ASSERT_TRUE(all_db.has_value() && one_db.has_value());
  EXPECT_EQ(*all_db->kernel_count(), *one_db->kernel_count());
  const std::vector<std::string> all_rows = database_rows(dir.file("all.sqlite"));
  const std::vector<std::string> one_rows = database_rows(dir.file("gpu0.sqlite"));
  ASSERT_EQ(all_rows.size(), one_rows.size());
  for (int64_t k = 0; k < *all_db->kernel_count(); ++k) EXPECT_EQ(all_rows[size_t(k)], one_rows[size_t(k)]);
}

}  // namespace
}  // namespace ucudnn::optimizer
