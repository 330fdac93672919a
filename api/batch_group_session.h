// A CPU session whose batch runs as groups of samples, one thread each (Note [batch groups],
// optimizer/batch_groups.h), and what Session::load needs to decide on one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/executor/executor.h"
#include "runtime/ir/graph.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

// How many groups Session::load cuts the batch of `whole` (the graph at the whole batch) into. 1 (none)
// off the CPU, with a saved plan, for batch_groups 1, and under auto for a batch under 2 or inputs
// without one shared first dim; auto: optimizer::default_batch_groups of that batch and the CPU's
// threads; N: N, or InvalidArgument when the batch is not a multiple of it or the threads are fewer.
// The thread count must already be applied (apply_cpu_thread_options).
Expected<int> batch_groups_for(const SessionOptions& options, const ir::Graph& whole);

// The model imported again at the group's batch (whole batch / groups) and checked against `whole`
// (optimizer::check_samples_independent): the graph one group runs, or why the batch cannot be cut.
Expected<ir::Graph> import_group_graph(const std::string& model_path, const SessionOptions& options,
                                       const ir::Graph& whole, int groups);

class BatchGroupSession final : public Session {
 public:
  // Plans `group_graph` for one thread (the benchmarker's timings and oneDNN's scratchpads are a single
  // thread's) and prepares `groups` executors of it. `whole` gives the session's inputs and outputs.
  static Expected<std::unique_ptr<BatchGroupSession>> create(const SessionOptions& options, const ir::Graph& whole,
                                                             ir::Graph group_graph, int groups);
  ~BatchGroupSession() override;

  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) override;
  Expected<std::vector<StepProfile>> profile(const std::vector<Tensor>& inputs) override;
  MemoryStats memory() const override;
  Layout layout() const override;
  std::string plan_json() const override;
  BatchGroups batch_groups() const override { return {groups_, group_batch_, note_}; }
  void set_note(std::string note) { note_ = std::move(note); }

  Status run_on_device(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) override;
  Status set_cuda_graph(CudaGraph mode) override;
  bool cuda_graph_in_use() const override { return false; }

 private:
  BatchGroupSession(ir::Graph group_graph, int groups, int64_t group_batch) : graph_(std::move(group_graph)),
      groups_(groups), group_batch_(group_batch) {}
  // Each group's slice of `inputs` (views, not copies), after checking them against inputs().
  Expected<std::vector<std::vector<Tensor>>> split_inputs(const std::vector<Tensor>& inputs) const;
  // Runs `body(g, group inputs)` for every group at once, one thread each; the first error, naming its group.
  Status for_each_group(const std::vector<Tensor>& inputs,
                        const std::function<Status(int, const std::vector<Tensor>&)>& body);

  ir::Graph graph_;  // one group's, in the plan's layout; the executors keep references to it
  int groups_;
  int64_t group_batch_;
  std::vector<TensorInfo> inputs_, outputs_;  // the whole batch's
  std::vector<std::unique_ptr<runtime::Backend>> backends_;   // one per group
  std::vector<std::unique_ptr<runtime::Executor>> executors_;  // one per group, destroyed before the backends
  std::string note_;
  mutable std::mutex run_mutex_;  // Note [one run at a time] (include/ucudnn/ucudnn.h)
};

// The median of three timed runs after one untimed, on seeded random inputs: how Session::load
// compares the whole batch with its groups. Unsupported for inputs other than float32.
Expected<double> median_run_ms(Session& session);

}  // namespace ucudnn
