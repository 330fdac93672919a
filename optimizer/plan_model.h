// plan_model: where every plan comes from — for any device and policy, a
// session's default plan included. Two parts:
//
//   gather_timings: each convolution kernel's timings, from the benchmark
//     database or, when missing there, measured by the benchmarker and stored
//     back — the only I/O of planning (the benchmarker and one SQLite file).
//     The database is opened read-only and for writing only when something
//     must be stored; a reference database (models/h200_benchmarks.sqlite) or a
//     read-only file keeps nothing, and stderr says so once. stderr also says
//     when the database holds timings of other devices only. A progress bar on
//     stderr shows what a cold start costs.
//   plan_from_timings (planner.h): the pure rest, timings → runtime::Plan.
//
// Which benchmarker: the CPU's on "cpu"; on "cuda" cuDNN's on GPU 0 when one is
// present (bench/device_benchmarker.h), or one per GPU that benchmark_devices names,
// each on its own thread (bench/sharded_benchmarking.h), else the database's rows for the one
// GPU recorded there (bench/stored_benchmarker.h: plans for a GPU made on a
// machine without one; a kernel missing from the database is an error naming
// it). A graph without convolutions needs no timings: no database is opened.
// With several candidate layouts (--layout auto) each is planned, then the graph
// with layout regions (Note [layout regions], layout_regions.h) from the same
// timings, and the one predicted faster (convolutions + layout transposes) is kept
// (the CPU runs them instead: Note [the CPU's layout is measured], plan_model.cc).
#pragma once

#include <string>
#include <vector>

#include "optimizer/bench/benchmark_db.h"
#include "optimizer/bench/benchmarker.h"
#include "optimizer/bench/sharded_benchmarking.h"
#include "optimizer/planner.h"
#include "runtime/ir/graph.h"

namespace ucudnn::optimizer {

// How a graph's 4-D activations are stored (Note [channels-last], runtime/ir/layout.h).
enum class GraphLayout { kNchw, kNhwc };
const char* graph_layout_name(GraphLayout layout);  // "nchw", "nhwc"

struct PlanRequest {
  std::string device = "cpu";   // "cpu" or "cuda": the Plan's device
  PlannerOptions planner;       // policy, workspace, micro-batch sizes, streams
  std::string math_type = "tf32";  // "cuda": "tf32" (TF32 allowed) or "fp32" (strict); the CPU measures fp32
  std::vector<GraphLayout> layouts = {GraphLayout::kNchw};  // to plan; several: the faster-predicted is kept
  // The graph is a training step (training/training_graph.h): NHWC rewrites its training ops too
  // (convert_training_step_to_channels_last), and no layout regions are tried.
  bool training_step = false;
  std::string db_path;          // "" = default_db_path()
  bool rebenchmark = false;     // measure again instead of reusing stored timings
  // "cuda": the GPUs that measure what the database lacks, one thread each — "all" or ids
  // "0,1" (bench/sharded_benchmarking.h); "" = GPU 0 on the calling thread. Not for "cpu".
  std::string benchmark_devices;
  bool progress = true;         // progress bar on stderr while measuring (terminals only)
};

// A plan with the graph it was made for.
struct PlannedModel {
  ir::Graph graph;          // in the plan's layout
  PlanResult result;        // optimize_seconds covers every layout planned
  // several layouts: "predicted time (convolutions + layout transposes): nchw 1.200 ms, nhwc 0.900 ms
  // (0.010 ms of transposes), regions (2 of 9 Convs nchw) 0.850 ms (0.020 ms of transposes)"; on the CPU first
  // "measured run: nchw 30.1 ms, nhwc 19.2 ms; " (Note [the CPU's layout is measured], plan_model.cc)
  std::string layout_note;
};

// Plans `graph` — after the inference passes, NCHW — as `request` says. With
// several layouts, one that cannot be planned (not in the database of a machine
// without a GPU, a convolution cuDNN rejects in it) is passed over; the first
// error is returned when none can.
Expected<PlannedModel> plan_model(const ir::Graph& graph, const PlanRequest& request);

// The timings of every convolution kernel of `graph` at every micro-batch size
// `batch_sizes` allows: stored ones from `db` (may be null) unless
// `rebenchmark`, the rest measured by `benchmarker` and stored in `db` when it
// may be written (BenchmarkDb::can_store; else a note on stderr, once per db).
Expected<GraphTimings> gather_timings(const ir::Graph& graph, BatchSizePolicy batch_sizes, Benchmarker& benchmarker,
                                      BenchmarkDb* db, bool rebenchmark, bool progress);
// The same with the kernels missing from `db` measured by `pool`'s workers; `db` is
// touched by the calling thread only, and the result and what is stored are the same
// whatever the number of workers.
Expected<GraphTimings> gather_timings(const ir::Graph& graph, BatchSizePolicy batch_sizes, BenchmarkPool& pool,
                                      BenchmarkDb* db, bool rebenchmark, bool progress);

}  // namespace ucudnn::optimizer
