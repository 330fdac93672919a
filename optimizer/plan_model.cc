// plan_model and gather_timings (see plan_model.h).
#include "optimizer/plan_model.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <random>

#include "optimizer/bench/device_benchmarker.h"
#include "optimizer/bench/stored_benchmarker.h"
#include "optimizer/layout_regions.h"
#include "optimizer/passes/passes.h"
#include "runtime/executor/executor.h"
#include "runtime/ir/fusion.h"

namespace ucudnn::optimizer {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "[#####.....] 12/40 measurements  3.2 s elapsed  ETA 7.5 s" on one stderr line: one
// measurement is one kernel at one micro-batch size.
class ProgressBar {
 public:
  ProgressBar(int total, bool enabled) : total_(total), enabled_(enabled && total > 0 && isatty(STDERR_FILENO)) {}
  void update(int done) {
    if (!enabled_) return;
    const double elapsed = seconds_since(start_);
    const double eta = done > 0 ? elapsed / done * (total_ - done) : 0.0;
    const int width = 30, filled = total_ ? width * done / total_ : width;
    std::fprintf(stderr, "\rbenchmarking [%s%s] %d/%d measurements  %.1f s elapsed  ETA %.1f s ",
                 std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), done, total_, elapsed,
                 eta);
    if (done == total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  int total_;
  bool enabled_;
  Clock::time_point start_ = Clock::now();
};

bool has_all_sizes(const KernelTimings& timings, const std::vector<int64_t>& sizes) {
  for (int64_t s : sizes)
    if (!timings.by_batch.count(s)) return false;
  return true;
}

// "conv1 [8, 3, 32, 32]*[16, 3, 3, 3]": the representative node and the forward X and W; a
// backward kernel adds its direction ("conv1_grad_filter [8, 3, 32, 32]*[16, 3, 3, 3] bwd_filter").
std::string kernel_name(const ir::Graph& graph, const ConvKernel& kernel) {
  std::string name = graph.nodes[kernel.nodes.front()].name + " " + shape_to_string(kernel.x_shape) + "*" +
                     shape_to_string(kernel.w_shape);
  if (kernel.direction() != ConvDirection::kForward) name += std::string(" ") + conv_direction_name(kernel.direction());
  return name;
}

bool has_convolutions(const ir::Graph& graph) {
  for (const ir::Node& node : graph.nodes)
    if (ir::is_convolution(node)) return true;
  return false;
}

// How a device is named in notes: "cuda 'NVIDIA H200' (sm 132, CUDA 13000,
// cuDNN 91900, math tf32)" or "cpu 'cpu:<model> x2 threads'".
std::string describe_device(const ConvKernelKey& key) {
  if (key.sm_count == 0) return "cpu '" + key.device_name + "'";
  return "cuda '" + key.device_name + "' (sm " + std::to_string(key.sm_count) + ", CUDA " +
         std::to_string(key.cuda_version) + ", cuDNN " + std::to_string(key.cudnn_version) + ", math " +
         key.math_type + ")";
}

bool same_device(const ConvKernelKey& a, const ConvKernelKey& b) {  // the layout aside: kernels carry their own
  return a.device_name == b.device_name && a.sm_count == b.sm_count && a.cuda_version == b.cuda_version &&
         a.cudnn_version == b.cudnn_version && a.driver_version == b.driver_version && a.dtype == b.dtype &&
         a.math_type == b.math_type;
}

// Says on stderr when `db` holds timings, but none of `device`: every kernel
// will be measured here, which a user who pointed --db at another machine's
// recording (models/h200_benchmarks.sqlite on the CPU) should hear about.
Status note_other_devices(BenchmarkDb& db, const ConvKernelKey& device) {
  UCUDNN_ASSIGN_OR_RETURN(std::vector<ConvKernelKey> stored, db.device_keys());
  std::vector<std::string> others;
  for (const ConvKernelKey& key : stored) {
    if (same_device(key, device)) return Status::ok();
    const std::string name = describe_device(key);
    if (std::find(others.begin(), others.end(), name) == others.end()) others.push_back(name);
  }
  if (others.empty()) return Status::ok();  // an empty database: nothing to say
  std::string list;
  for (size_t i = 0; i < others.size(); ++i) list += (i ? ", " : "") + others[i];
  std::fprintf(stderr, "note: %s holds timings for %s only, none for %s; benchmarking on this machine\n",
               db.path().c_str(), list.c_str(), describe_device(device).c_str());
  return Status::ok();
}

// Stores measured timings when the database may be written; otherwise they
// serve this run only, and stderr says so once (a reference database such as
// models/h200_benchmarks.sqlite, a read-only file or directory).
Status store(BenchmarkDb& db, const std::string& key, const KernelTimings& timings) {
  UCUDNN_ASSIGN_OR_RETURN(const bool storable, db.can_store());
  if (storable) return db.store(key, timings);
  if (db.first_unstored_notice())
    std::fprintf(stderr,
                 "note: the timings measured now are not stored in %s: %s; they serve this run only — to keep "
                 "them, use a database of your own (--db FILE)\n",
                 db.path().c_str(), db.cannot_store_reason().c_str());
  return Status::ok();
}

// Note [graph engines and epilogues]: the benchmark times a forward convolution bare (X, W → Y).
// A Conv with a bias and a fused Relu (Note [fused nodes]; a residual input too) runs its legacy
// algorithms as one cudnnConvolutionBiasActivationForward call, the epilogue inside the kernel, but
// a cuDNN graph-API engine (kGraphEngineBase and up) as the bare convolution followed by the
// epilogue's own passes over Y — on ResNet-50's layer-1 1×1 convolutions 0.15 ms of convolution
// then 1.1 ms of epilogue (H200, batch 128). The bare timing would hide that, so such kernels plan
// without the graph engines. Every other epilogue (a bias alone, a residual without a Relu, SiLU and
// the other activations of fuse_depthwise_activation) runs as the same passes after either kind of
// algorithm (runtime/cuda/conv.cc), so those kernels, like bare ones, keep the graph engines.
bool legacy_call_fuses_epilogue(const ir::Graph& graph, const ConvKernel& kernel) {
  if (kernel.direction() != ConvDirection::kForward) return false;
  for (ir::NodeId id : kernel.nodes) {
    const ir::Node& node = graph.nodes[id];
    const bool bias = node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue;
    if (bias && ir::fused_activation(node) == "Relu") return true;
  }
  return false;
}

void drop_unfused_engines(KernelTimings& timings) {
  for (auto& [batch, measurements] : timings.by_batch)
    for (AlgoMeasurement& m : measurements)
      if (m.algorithm >= kGraphEngineBase) m.available = false;
}

// The kernels missing from the database measured, each job's table handed to `store_job`
// in the jobs' order on the calling thread, `bar(done, total)` counting measurements.
using StoreJob = std::function<Status(size_t job, KernelTimings timings)>;
using MeasureJobs = std::function<Status(const std::vector<BenchmarkJob>& jobs, const StoreJob& store_job,
                                         const std::function<void(int, int)>& bar)>;

// gather_timings with either measurer: the stored kernels first, then the missing ones
// measured and stored in the kernels' order.
Expected<GraphTimings> gather(const ir::Graph& graph, BatchSizePolicy batch_sizes, const ConvKernelKey& device_key,
                              const MeasureJobs& measure_jobs, BenchmarkDb* db, bool rebenchmark, bool progress) {
  GraphTimings result;
  result.device_name = device_key.device_name;
  UCUDNN_ASSIGN_OR_RETURN(result.kernels, collect_conv_kernels(graph, device_key));
  std::vector<std::optional<KernelTimings>> tables(result.kernels.size());
  std::vector<BenchmarkJob> jobs;
  std::vector<size_t> job_kernel;  // jobs[j] is result.kernels[job_kernel[j]]
  int measurements = 0;
  for (size_t i = 0; i < result.kernels.size(); ++i) {
    const ConvKernel& kernel = result.kernels[i];
    // Timings at every size any policy may use, so a stored kernel serves all policies.
    std::vector<int64_t> sizes = micro_batch_sizes(batch_sizes, kernel.batch());
    if (db && !rebenchmark) {
      UCUDNN_ASSIGN_OR_RETURN(tables[i], db->lookup(kernel.key.to_string()));
      if (tables[i] && !has_all_sizes(*tables[i], sizes)) tables[i].reset();
    }
    if (tables[i]) {
      ++result.kernels_reused;
      continue;
    }
    measurements += static_cast<int>(sizes.size());
    jobs.push_back({&kernel, std::move(sizes)});
    job_kernel.push_back(i);
  }
  ProgressBar progress_bar(measurements, progress);
  const StoreJob store_job = [&](size_t j, KernelTimings timings) -> Status {
    const size_t i = job_kernel[j];
    if (db) UCUDNN_RETURN_IF_ERROR(store(*db, result.kernels[i].key.to_string(), timings));
    tables[i] = std::move(timings);
    ++result.kernels_benchmarked;
    return Status::ok();
  };
  UCUDNN_RETURN_IF_ERROR(measure_jobs(jobs, store_job, [&](int done, int) { progress_bar.update(done); }));
  for (size_t i = 0; i < result.kernels.size(); ++i) {
    if (legacy_call_fuses_epilogue(graph, result.kernels[i])) drop_unfused_engines(*tables[i]);
    result.timings.push_back({kernel_name(graph, result.kernels[i]), std::move(*tables[i]),
                              static_cast<int>(result.kernels[i].nodes.size())});
  }
  return result;
}

// The database and the benchmarker of one plan_model call, opened on first need
// (a graph without convolutions needs neither) and shared by every layout.
class TimingSource {
 public:
  explicit TimingSource(const PlanRequest& request) : request_(request) {}

  Expected<GraphTimings> timings_of(const ir::Graph& graph) {
    if (!has_convolutions(graph)) {
      // Nothing to time; the processor's name still goes into the plan when it is
      // here to ask (planning for an absent GPU leaves it empty).
      GraphTimings none;
      none.device_name = measured_device_name(request_.device);
      return none;
    }
    UCUDNN_RETURN_IF_ERROR(open());
    if (pool_)
      return gather_timings(graph, request_.planner.batch_sizes, *pool_, &*db_, request_.rebenchmark,
                            request_.progress);
    return gather_timings(graph, request_.planner.batch_sizes, *benchmarker_, &*db_, request_.rebenchmark,
                          request_.progress);
  }

 private:
  Status open() {
    if (benchmarker_ || pool_) return Status::ok();
    const std::string path = request_.db_path.empty() ? default_db_path() : request_.db_path;
    UCUDNN_ASSIGN_OR_RETURN(BenchmarkDb db, open_database(path));
    db_.emplace(std::move(db));
    if (can_measure_on(request_.device) && !request_.benchmark_devices.empty()) {
      // One worker thread per GPU named (every one of one model), started once for every layout.
      const std::string flag = "--benchmark-devices " + request_.benchmark_devices;
      auto workers = make_gpu_benchmark_workers(request_.benchmark_devices, request_.math_type);
      if (!workers) return workers.status();
      auto pool = BenchmarkPool::start(std::move(*workers));
      if (!pool) return pool.status().with_context(flag);
      pool_ = std::move(*pool);
      if (!request_.rebenchmark) UCUDNN_RETURN_IF_ERROR(note_other_devices(*db_, pool_->device_key()));
      return Status::ok();
    }
    if (can_measure_on(request_.device)) {
      UCUDNN_ASSIGN_OR_RETURN(benchmarker_, make_device_benchmarker(request_.device, request_.math_type));
      if (!request_.rebenchmark) UCUDNN_RETURN_IF_ERROR(note_other_devices(*db_, benchmarker_->device_key()));
      return Status::ok();
    }
    // No GPU here: the device identity and every timing come from the database.
    UCUDNN_ASSIGN_OR_RETURN(ConvKernelKey device_key, stored_gpu_device_key(*db_, request_.math_type));
    benchmarker_ = make_stored_benchmarker(device_key, path);
    return Status::ok();
  }

  // Read-only unless something must be stored (Note [reading never writes],
  // bench/benchmark_db.cc): a missing file is created only where a benchmarker
  // will measure into it; a healthy database is kept (rebenchmark re-measures and
  // overwrites this model's kernels only); a corrupt or foreign one is rebuilt
  // only when asked.
  Expected<BenchmarkDb> open_database(const std::string& path) {
    Expected<BenchmarkDb> opened = BenchmarkDb::open_read_only(path);
    if (opened) return opened;
    if (opened.status().code() == StatusCode::kNotFound) {
      if (can_measure_on(request_.device)) return BenchmarkDb::open(path);
      return opened.status().with_context("no CUDA device is present, and there are no recorded timings to plan from");
    }
    if (request_.rebenchmark && opened.status().code() == StatusCode::kInvalidArgument)
      return BenchmarkDb::open(path, /*rebuild=*/true);
    return opened.status();
  }

  const PlanRequest& request_;
  std::optional<BenchmarkDb> db_;
  std::unique_ptr<Benchmarker> benchmarker_;
  std::unique_ptr<BenchmarkPool> pool_;  // benchmark_devices given: instead of benchmarker_
};

Status check_request(const PlanRequest& request) {
  const runtime::BackendCapabilities* backend = device_capabilities(request.device);
  if (backend == nullptr)
    return invalid_argument("cannot plan for device '" + request.device + "': expected cpu or cuda");
  if (request.math_type != "tf32" && request.math_type != "fp32")
    return invalid_argument("math type must be tf32 or fp32, got '" + request.math_type + "'");
  if (request.layouts.empty()) return invalid_argument("plan_model: no layout to plan");
  if (request.layouts != std::vector<GraphLayout>{GraphLayout::kNchw} && !backend->runs_channels_last())
    return invalid_argument("layout nhwc on the CPU runs its convolutions through oneDNN, which this build lacks "
                            "(install libdnnl-dev and rebuild, or use layout nchw)");
  if (request.planner.streams != 1 && request.planner.streams != 2)
    return invalid_argument("streams must be 1 or 2, got " + std::to_string(request.planner.streams));
  if (!request.benchmark_devices.empty()) {
    if (request.device != "cuda")
      return invalid_argument("--benchmark-devices " + request.benchmark_devices +
                              " shards GPU benchmarking; this plan is for device '" + request.device + "'");
    UCUDNN_RETURN_IF_ERROR(parse_benchmark_devices(request.benchmark_devices).status());
  }
  if (request.rebenchmark && !can_measure_on(request.device))
    return invalid_argument("--rebenchmark for device '" + request.device + "' needs a GPU, and none is present; " +
                            "without one, plans come from the recorded database '" +
                            (request.db_path.empty() ? default_db_path() : request.db_path) + "' as it is");
  return Status::ok();
}

// `graph` in `layout`: itself, or a channels-last copy (of a training step: PlanRequest::training_step).
Expected<ir::Graph> in_layout(const ir::Graph& graph, GraphLayout layout, bool training_step) {
  ir::Graph copy = graph;
  if (layout == GraphLayout::kNhwc) {
    PassStats stats;
    UCUDNN_RETURN_IF_ERROR(training_step ? convert_training_step_to_channels_last(copy, &stats)
                                         : convert_to_channels_last(copy, &stats));
  }
  return copy;
}

// Note [the CPU's layout is measured]: on the CPU the layout (--layout auto) is chosen by running each
// layout's whole plan, not by the predicted convolution times. Those are the sum of convolutions timed
// one at a time on data that stays in cache, and they miss what differs between the layouts besides the
// convolutions: NCHW's oneDNN convolutions reorder X and Y into blocked copies (timed, but hot), NHWC's
// graph has Transposes at its edges. ResNet-50 at batch 16 on 8 Xeon threads: predicted 157.2 ms (NCHW)
// against 152.6 ms (NHWC) of convolutions, measured 532.9 against 224.1 ms per run; in another run the
// prediction chose NCHW. A run is cheap on the CPU (the GPU keeps the prediction): one warm-up and three
// timed runs per layout on random inputs. Nothing is run when the layouts planned gave the same graph (a
// model without convolutions or pools), and a graph with an input that is not float32 (a shape,
// indices) is not run: the prediction decides.
Expected<double> measure_run_ms(const ir::Graph& graph, const runtime::Plan& plan, const PlanRequest& request) {
  std::vector<Tensor> inputs;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (ir::ValueId id : graph.inputs) {
    const ir::Value& v = graph.value(id);
    if (v.dtype != DType::kFloat32) return unsupported("input '" + v.name + "' is not float32");
    UCUDNN_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(v.dtype, v.shape));
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    inputs.push_back(std::move(t));
  }
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Backend> backend,
                          make_measuring_backend(request.device, request.math_type));
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executor> executor,
                          runtime::Executor::create(*backend, graph, plan, runtime::CaptureMode::kOff));
  std::vector<double> times;
  for (int r = 0; r < 4; ++r) {
    const auto start = Clock::now();
    UCUDNN_RETURN_IF_ERROR(executor->run(inputs).status());
    if (r > 0) times.push_back(seconds_since(start) * 1e3);  // the first is the warm-up
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// One graph planned for --layout auto: NCHW, NHWC, or NHWC with regions kept NCHW.
struct Candidate {
  std::string label;          // "nchw", "nhwc", "regions (3 of 52 Convs nchw)"
  PlannedModel model;
  bool regions = false;       // NHWC with some Convs kept NCHW (Note [layout regions])
  double transposes_ms = 0;   // layout_transposes_ms of its graph
  double predicted_ms = 0;    // its convolutions' predicted time + transposes_ms
};

std::string format_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", ms);
  return text;
}

// Per Conv node of a planned graph: its kernel's predicted time per call.
ConvTimes conv_times(const PlannedModel& model) {
  ConvTimes times;
  const PlanResult& r = model.result;
  for (size_t k = 0; k < r.kernels.size() && k < r.policy.kernels.size(); ++k)
    for (ir::NodeId id : r.kernels[k].nodes) {
      const ir::Node& node = model.graph.nodes[id];
      if (node.op == OpKind::kConv) times[node.name] = r.policy.kernels[k].config.time_ms;
    }
  return times;
}

// The timings of `graph`'s convolution kernels taken from the candidates that planned them
// (every kernel of a mixed graph is one of theirs, key for key): nothing is measured again.
Expected<GraphTimings> timings_from(const ir::Graph& graph, const std::vector<Candidate>& planned) {
  const PlanResult& first = planned.front().model.result;
  GraphTimings timings;
  timings.device_name = first.plan.device_name;
  UCUDNN_ASSIGN_OR_RETURN(timings.kernels, collect_conv_kernels(graph, first.kernels.front().key));
  for (const ConvKernel& kernel : timings.kernels) {
    const std::string key = kernel.key.to_string();
    const NamedKernel* found = nullptr;
    for (const Candidate& c : planned)
      for (size_t k = 0; k < c.model.result.kernels.size() && !found; ++k)
        if (c.model.result.kernels[k].key.to_string() == key) found = &c.model.result.timings[k];
    if (!found) return not_found("no layout planned has the kernel " + kernel_name(graph, kernel));
    timings.timings.push_back({kernel_name(graph, kernel), found->timings, static_cast<int>(kernel.nodes.size())});
    ++timings.kernels_reused;
  }
  return timings;
}

// Note [layout regions] (layout_regions.h): from the NCHW and NHWC candidates (in that
// order), the graph with the Convs that are faster in NCHW — transposes counted — kept
// there, planned from the same timings; nullopt when every Conv takes one layout.
Expected<std::optional<Candidate>> plan_regions(const ir::Graph& graph, const std::vector<Candidate>& planned,
                                                const std::string& device, const PlannerOptions& options,
                                                const TransposeCost& transpose) {
  const LayoutRegions regions =
      choose_layout_regions(graph, conv_times(planned[0].model), conv_times(planned[1].model), transpose);
  if (!regions.mixed) return std::optional<Candidate>();
  ir::Graph mixed = graph;
  PassStats stats;
  UCUDNN_RETURN_IF_ERROR(convert_to_channels_last_except(mixed, &stats, regions.nchw_convs));
  UCUDNN_ASSIGN_OR_RETURN(GraphTimings timings, timings_from(mixed, planned));
  UCUDNN_ASSIGN_OR_RETURN(PlanResult result, plan_from_timings(mixed, device, options, std::move(timings)));
  const std::string label = "regions (" + std::to_string(regions.nchw_convs.size()) + " of " +
                            std::to_string(regions.convs) + " Convs nchw)";
  return std::optional<Candidate>(Candidate{label, PlannedModel{std::move(mixed), std::move(result), ""}, true});
}

}  // namespace

const char* graph_layout_name(GraphLayout layout) { return layout == GraphLayout::kNhwc ? "nhwc" : "nchw"; }

Expected<GraphTimings> gather_timings(const ir::Graph& graph, BatchSizePolicy batch_sizes, Benchmarker& benchmarker,
                                      BenchmarkDb* db, bool rebenchmark, bool progress) {
  // One benchmarker on this thread: kernel after kernel, all its sizes in one call.
  const MeasureJobs in_order = [&](const std::vector<BenchmarkJob>& jobs, const StoreJob& store_job,
                                   const std::function<void(int, int)>& bar) -> Status {
    int done = 0, total = 0;
    for (const BenchmarkJob& job : jobs) total += static_cast<int>(job.sizes.size());
    for (size_t j = 0; j < jobs.size(); ++j) {
      const ConvKernel& kernel = *jobs[j].kernel;
      auto measured = benchmarker.measure(graph, kernel, jobs[j].sizes);
      if (!measured) return measured.status().with_context(graph.nodes[kernel.nodes.front()].describe());
      UCUDNN_RETURN_IF_ERROR(store_job(j, std::move(*measured)));
      bar(done += static_cast<int>(jobs[j].sizes.size()), total);
    }
    return Status::ok();
  };
  return gather(graph, batch_sizes, benchmarker.device_key(), in_order, db, rebenchmark, progress);
}

Expected<GraphTimings> gather_timings(const ir::Graph& graph, BatchSizePolicy batch_sizes, BenchmarkPool& pool,
                                      BenchmarkDb* db, bool rebenchmark, bool progress) {
  const MeasureJobs sharded = [&](const std::vector<BenchmarkJob>& jobs, const StoreJob& store_job,
                                  const std::function<void(int, int)>& bar) {
    return pool.measure(graph, jobs, store_job, bar);
  };
  return gather(graph, batch_sizes, pool.device_key(), sharded, db, rebenchmark, progress);
}

Expected<PlannedModel> plan_model(const ir::Graph& graph, const PlanRequest& request) {
  UCUDNN_RETURN_IF_ERROR(check_request(request));
  TimingSource source(request);
  PlannerOptions options = request.planner;
  if (options.backend == nullptr) options.backend = device_capabilities(request.device);  // check_request: known
  const TransposeCost transpose = options.backend->layout_transpose_cost();
  std::vector<Candidate> planned;  // one per layout that could be planned, then the regions
  Status first_error;
  std::string not_planned;
  double seconds = 0;  // planning every layout tried: the optimisation time of this call
  for (GraphLayout layout : request.layouts) {
    const auto start = Clock::now();
    UCUDNN_ASSIGN_OR_RETURN(ir::Graph laid_out, in_layout(graph, layout, request.training_step));
    Expected<PlanResult> result = [&]() -> Expected<PlanResult> {
      UCUDNN_ASSIGN_OR_RETURN(GraphTimings timings, source.timings_of(laid_out));
      return plan_from_timings(laid_out, request.device, options, std::move(timings));
    }();
    seconds += seconds_since(start);
    if (!result) {
      if (request.layouts.size() == 1) return result.status();
      if (first_error.is_ok()) first_error = result.status();
      not_planned += std::string(", ") + graph_layout_name(layout) +
                     (result.status().code() == StatusCode::kNotFound ? " not in the database" : " not plannable");
      continue;
    }
    planned.push_back(Candidate{graph_layout_name(layout), PlannedModel{std::move(laid_out), std::move(*result), ""}});
  }
  if (planned.empty()) return first_error;
  if (planned.size() == 2 && planned[0].label == "nchw" && planned[1].label == "nhwc" && !request.training_step &&
      !planned[0].model.result.kernels.empty()) {  // Note [layout regions]
    const auto start = Clock::now();
    Expected<std::optional<Candidate>> regions = plan_regions(graph, planned, request.device, options, transpose);
    seconds += seconds_since(start);
    if (!regions) {
      not_planned += ", regions not plannable (" + regions.status().message() + ")";
    } else if (*regions) {
      planned.push_back(std::move(**regions));
    }
  }
  for (Candidate& c : planned) {
    c.transposes_ms = layout_transposes_ms(c.model.graph, transpose);
    c.predicted_ms = c.model.result.policy.total_time_ms + c.transposes_ms;
  }
  // The regions must be predicted kRegionsMargin faster than the faster single layout (layout_regions.h).
  auto ranked = [](const Candidate& c) { return c.predicted_ms * (c.regions ? 1.0 / (1.0 - kRegionsMargin) : 1.0); };
  size_t best = 0;
  for (size_t i = 1; i < planned.size(); ++i)
    if (ranked(planned[i]) < ranked(planned[best])) best = i;
  std::string measured_note;
  const bool layouts_differ = std::any_of(planned.begin(), planned.end(), [&](const Candidate& c) {
    return c.model.result.plan.layout != planned.front().model.result.plan.layout;
  });
  if (options.backend->chooses_layout_by_running() && layouts_differ) {  // Note [the CPU's layout is measured]
    const auto start = Clock::now();
    std::vector<double> ms(planned.size(), 0);
    bool all_measured = true;
    for (size_t i = 0; i < planned.size() && all_measured; ++i) {
      Expected<double> run_ms = measure_run_ms(planned[i].model.graph, planned[i].model.result.plan, request);
      all_measured = run_ms.has_value();
      if (run_ms) ms[i] = *run_ms;
    }
    seconds += seconds_since(start);
    if (all_measured) {
      best = static_cast<size_t>(std::min_element(ms.begin(), ms.end()) - ms.begin());
      for (size_t i = 0; i < planned.size(); ++i)
        measured_note += (i ? ", " : "") + planned[i].label + " " + format_ms(ms[i]);
    }
  }
  std::string predicted_note;
  for (size_t i = 0; i < planned.size(); ++i) {
    predicted_note += (i ? ", " : "") + planned[i].label + " " + format_ms(planned[i].predicted_ms);
    if (planned[i].transposes_ms >= 0.001)
      predicted_note += " (" + format_ms(planned[i].transposes_ms) + " of transposes)";
  }
  PlannedModel chosen = std::move(planned[best].model);
  chosen.result.optimize_seconds = seconds;
  if (request.layouts.size() > 1) {
    chosen.layout_note = "predicted time (convolutions + layout transposes): " + predicted_note + not_planned;
    if (!measured_note.empty()) chosen.layout_note = "measured run: " + measured_note + "; " + chosen.layout_note;
  }
  return chosen;
}

}  // namespace ucudnn::optimizer
