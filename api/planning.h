// What sessions (CPU and CUDA) and the `plan` / `report` commands share: loading
// a model into the graph that runs (import + inference passes), and planning it
// with the benchmark database — the one place that pairs a backend's
// benchmarker with the SQLite database and the planner.
#pragma once

#include <string>
#include <vector>

#include "optimizer/planner.h"
#include "runtime/executor/profile.h"
#include "runtime/ir/graph.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

// Imports the model and runs the inference graph passes, and for Layout::kNhwc
// the channels-last pass: the graph a Session runs and a plan is made for (so
// plans from `ucudnn plan` fit `ucudnn run`). `layout` is kNchw or kNhwc.
Expected<ir::Graph> load_graph(const std::string& model_path, const SessionOptions& options, Layout layout);

// The layouts a session on `device` ("cpu", "cuda") tries for options.layout:
// one, or for kAuto on the GPU both (NCHW first). NHWC on the CPU is an error.
Expected<std::vector<Layout>> candidate_layouts(const SessionOptions& options, const std::string& device);

// The layout a plan runs (its "layout" field as the public enum).
Layout plan_layout(const runtime::Plan& plan);

// Name, dtype and shape of each value in `ids` (a session's inputs() / outputs()).
std::vector<TensorInfo> describe_values(const ir::Graph& graph, const std::vector<ir::ValueId>& ids);

// An executor's step timings in the public API's form.
std::vector<StepProfile> to_step_profiles(const std::vector<runtime::StepTiming>& timings);

// The saved plan named by options.plan_path, refused (with the path in the
// message) when it was made for another graph, device or GPU.
Expected<runtime::Plan> load_matching_plan(const SessionOptions& options, const ir::Graph& graph,
                                           const std::string& device, const std::string& device_name);

// options.streams is 1 or 2; InvalidArgument naming the value otherwise. Checked
// where options come in: Session::load and planner_options (`ucudnn plan`, `report`).
Status check_streams(const SessionOptions& options);

// The planner settings named in `options` (policy, workspace, batch sizes, ...).
Expected<optimizer::PlannerOptions> planner_options(const SessionOptions& options);

// What a session runs: the graph (after the passes, in its layout) and its plan.
struct GraphAndPlan {
  ir::Graph graph;
  runtime::Plan plan;
};

// A model loaded and planned with the database in the layout options.layout
// names; for Layout::kAuto on "cuda", in both layouts, keeping the one whose
// convolutions are predicted faster (a layout that cannot be planned, e.g. not
// in the database of a machine without a GPU, or a convolution cuDNN rejects
// in that layout, is passed over). The result's
// optimize_seconds covers every layout planned.
struct PlannedModel {
  ir::Graph graph;
  optimizer::PlanResult result;
  Layout layout = Layout::kNchw;
  std::string layout_note;  // for kAuto: what each layout was predicted to take
};
Expected<PlannedModel> plan_model(const std::string& model_path, const std::string& device,
                                  const SessionOptions& options);

// Plans `graph` for `device` ("cpu" or "cuda"), reading and extending the
// database at `db_path` ("" = the default under the user's cache directory).
// "cuda" measures missing kernels with cuDNN on GPU 0 (TF32 allowed unless
// `strict_fp32`); without a GPU (or in a build without CUDA) it plans from the
// database alone, for the one GPU recorded there with that math type, and fails
// naming the first kernel the database lacks.
Expected<optimizer::PlanResult> plan_with_database(const ir::Graph& graph, const std::string& device,
                                                   const optimizer::PlannerOptions& options,
                                                   const std::string& db_path, bool strict_fp32 = false);

}  // namespace ucudnn
