// plan_with_database (see planning.h).
#include "api/planning.h"

#include "optimizer/bench/benchmark_db.h"
#include "optimizer/bench/benchmarker.h"
#include "runtime/executor/cpu_executor.h"

namespace ucudnn {

namespace {
size_t cpu_workspace_of(const ir::Graph& graph, const ir::Node& node) {
  return runtime::cpu_step_workspace(graph, node, 0, -1);
}
}  // namespace

Expected<optimizer::PlannerOptions> planner_options(const SessionOptions& options) {
  optimizer::PlannerOptions planner;
  UCUDNN_ASSIGN_OR_RETURN(planner.policy, optimizer::parse_policy(options.policy.empty() ? "undivided" : options.policy));
  UCUDNN_ASSIGN_OR_RETURN(planner.batch_sizes, optimizer::parse_batch_size_policy(options.batch_sizes));
  planner.workspace_bytes = options.workspace_bytes;
  planner.rebenchmark = options.rebenchmark;
  planner.progress = options.progress;
  return planner;
}

Expected<optimizer::PlanResult> plan_with_database(const ir::Graph& graph, const std::string& device,
                                                   const optimizer::PlannerOptions& options,
                                                   const std::string& db_path) {
  if (device != "cpu")
    return unsupported("planning for device '" + device + "' needs the CUDA benchmarker, not in this build");
  const std::string path = db_path.empty() ? optimizer::default_db_path() : db_path;
  // A healthy database is kept (--rebenchmark re-measures and overwrites this
  // model's kernels only); a corrupt or foreign one is rebuilt only when asked.
  auto opened = optimizer::BenchmarkDb::open(path, false);
  if (!opened && options.rebenchmark) opened = optimizer::BenchmarkDb::open(path, true);
  if (!opened) return opened.status();
  optimizer::BenchmarkDb db = std::move(*opened);
  std::unique_ptr<optimizer::Benchmarker> benchmarker = optimizer::make_cpu_benchmarker();
  return optimizer::plan_graph(graph, device, options, *benchmarker, &db, cpu_workspace_of);
}

}  // namespace ucudnn
