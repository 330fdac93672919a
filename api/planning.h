// Planning with the benchmark database: the one place that pairs a backend's
// benchmarker with the SQLite database and the planner. Used by Session::load
// (--policy) and by the `ucudnn plan` / `ucudnn report` commands.
#pragma once

#include <string>

#include "optimizer/planner.h"
#include "runtime/ir/graph.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

// The planner settings named in `options` (policy, workspace, batch sizes, ...).
Expected<optimizer::PlannerOptions> planner_options(const SessionOptions& options);

// Plans `graph` for `device` ("cpu"; "cuda" once the CUDA benchmarker exists),
// reading and extending the database at `db_path` ("" = the default under the
// user's cache directory).
Expected<optimizer::PlanResult> plan_with_database(const ir::Graph& graph, const std::string& device,
                                                   const optimizer::PlannerOptions& options,
                                                   const std::string& db_path);

}  // namespace ucudnn
