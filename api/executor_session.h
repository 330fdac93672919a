// ExecutorSession: what CpuSession and CudaSession share — the graph they run,
// their executor, the input/output descriptions, and the Session calls that
// only forward to the executor. `Executor` needs run(), profile(), plan() and
// weight_bytes().
#pragma once

#include <memory>
#include <vector>

#include "api/planning.h"
#include "runtime/executor/plan.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

template <typename Executor>
class ExecutorSession : public Session {
 public:
  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) override { return executor_->run(inputs); }
  Expected<std::vector<StepProfile>> profile(const std::vector<Tensor>& inputs) override {
    UCUDNN_ASSIGN_OR_RETURN(std::vector<runtime::StepTiming> timings, executor_->profile(inputs));
    return to_step_profiles(timings);
  }
  Layout layout() const override { return plan_layout(executor_->plan()); }
  MemoryStats memory() const override {
    const runtime::Plan& plan = executor_->plan();
    return {plan.arena_bytes, plan.unplanned_bytes, executor_->weight_bytes(), plan.workspace_pool_bytes};
  }

 protected:
  explicit ExecutorSession(ir::Graph graph) : graph_(std::move(graph)) {}

  // Takes the executor made for graph_ and describes the graph's inputs and outputs.
  void attach(std::unique_ptr<Executor> executor) {
    executor_ = std::move(executor);
    inputs_ = describe_values(graph_, graph_.inputs);
    outputs_ = describe_values(graph_, graph_.outputs);
  }

  ir::Graph graph_;
  std::unique_ptr<Executor> executor_;

 private:
  std::vector<TensorInfo> inputs_, outputs_;
};

}  // namespace ucudnn
