// CpuExecutor: runs a Plan over a graph on the CPU backend.
//
// At creation it checks the plan against the graph, allocates the activation
// arena and the workspace pool once, and builds every tensor view (including
// the per-micro-batch slices of divided convolutions). `run` then only copies
// the inputs in, calls kernels in order and copies the outputs out; `profile`
// does the same once, timing each part (runtime/executor/profile.h).
#pragma once

#include <memory>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/executor/plan.h"
#include "runtime/executor/profile.h"
#include "runtime/ir/graph.h"

namespace ucudnn::runtime {

// The default CPU plan: every step undivided with the default algorithm, the
// workspace pool sized to the largest step, activations laid out by liveness.
Expected<Plan> make_cpu_plan(const ir::Graph& graph);

// Workspace the CPU kernel of `node` needs for one call with a batch of
// `micro_batch` (input 0's leading dim replaced) and `algorithm`.
size_t cpu_step_workspace(const ir::Graph& graph, const ir::Node& node, int64_t micro_batch, int algorithm);

class CpuExecutor {
 public:
  // `graph` must outlive the executor.
  static Expected<std::unique_ptr<CpuExecutor>> create(const ir::Graph& graph, Plan plan);

  // Inputs in the order of graph.inputs, with exactly their dtype and shape.
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);
  // Runs once like `run`, returning the wall time of each step plus the input
  // and output copies (steady_clock); the outputs are dropped.
  Expected<std::vector<StepTiming>> profile(const std::vector<Tensor>& inputs);

  const Plan& plan() const { return plan_; }
  // Bytes of the graph's constants (initializers and folded values) it reads.
  size_t weight_bytes() const;

 private:
  struct Call {  // one kernel invocation: a whole step, or one micro-batch of it
    std::vector<const Tensor*> src;
    std::vector<Tensor*> dst;
    int algorithm = -1;
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
  };
  struct Step {
    const ir::Node* node = nullptr;
    std::vector<Call> calls;
  };

  CpuExecutor(const ir::Graph& graph, Plan plan) : graph_(graph), plan_(std::move(plan)) {}
  Status build();
  // The three parts of a run; `run` and `profile` call them in this order.
  Status copy_inputs_in(const std::vector<Tensor>& inputs);
  Status run_step(const Step& step);
  Expected<std::vector<Tensor>> copy_outputs_out();

  const ir::Graph& graph_;
  Plan plan_;
  Tensor arena_;
  Tensor workspace_;
  std::vector<Tensor> views_;             // per value: arena view or the constant
  std::vector<std::unique_ptr<Tensor>> slice_views_;  // micro-batch slices (stable addresses)
  std::vector<Step> steps_;
};

}  // namespace ucudnn::runtime
