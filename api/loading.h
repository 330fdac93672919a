// The road Session::load and plan() share: the model into the graph every plan
// starts from, and SessionOptions into the optimizer's request — one
// translation, so a session's own plan is the plan plan() makes.
#pragma once

#include <string>

#include "optimizer/plan_model.h"
#include "runtime/executor/captured_runs.h"
#include "runtime/plan/plan.h"
#include "runtime/ir/graph.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

// The model imported (options.input_shapes, constant_inputs, batch) and through the
// inference passes: NCHW, what optimizer::plan_model takes.
Expected<ir::Graph> load_inference_graph(const std::string& model_path, const SessionOptions& options);

// What optimizer::plan_model is asked for: the device, the policy with the
// workspace bound it uses (kernel_workspace_limit, or total_workspace_budget
// under wd), micro-batch sizes, streams, math type, the layouts to try (Layout::kAuto
// on the GPU: both), the database. `options` passed check_options.
optimizer::PlanRequest plan_request(const SessionOptions& options);

// How the executors of a session or a trainer capture their runs (SessionOptions::cuda_graph).
runtime::CaptureMode capture_mode(CudaGraph mode);

// Name, dtype and shape of each of `ids` (a session's inputs() or outputs()).
std::vector<TensorInfo> describe_values(const ir::Graph& graph, const std::vector<ir::ValueId>& ids);

// The Layout a plan runs (its "nchw" or "nhwc").
Layout plan_layout(const runtime::Plan& plan);

}  // namespace ucudnn
