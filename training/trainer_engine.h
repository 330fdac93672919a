// The trainer's engine: what the public Trainer (include/ucudnn/ucudnn.h, api/trainer.cc) runs
// (docs/TRAINING.md).
//
// Three graphs, each planned by optimizer::plan_model and run by its own runtime::Executor over
// one backend: the training step (training_graph.h), the evaluation forward and the optimizer
// update (update_graph.h). The engine owns the memory that outlives a step, one allocation each —
// parameters, gradients, optimizer state, running statistics, and the step's inputs and outputs
// (`io`) — and binds it to the graphs' inputs and outputs with Executor::run_bound: a parameter is
// the same bytes as input of the training step, of the evaluation and of the update (input and
// output: in place). The code is split by seam:
//   trainer_engine.cc         create, the step, the evaluation
//   trainer_binding.cc        the buffers' layout, the binding lists, copies in and out
//   trainer_state.cc          weights, the training state (optimizer state, step) and loading it
//   trainer_data_parallel.cc  several ranks: equal plans, rank 0's weights, gradient buckets
//
// Data-parallel training (TrainerConfig::communicator; Note [data-parallel step]) adds, per step,
// the average of the gradients across ranks in buckets (distributed/buckets.h) between the
// training step and the update.
//
// Note [overlapped batch copies]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A step trains on a batch in device memory. step() copies it there first, so the device waits for
// the host (upload_ms: 31.7 ms of a 188 ms ResNet-50 step at batch 256, pageable memory, on an H200).
// stage() and step_staged() hide that copy behind the previous step: stage() copies a batch into
// `staging_` (a device buffer laid out as io_'s inputs and labels); step_staged(next) starts by
// copying staging_ into io_ on the device (stream 0; a memory pass, a fraction of a millisecond) and
// recording `consumed_`, queues the step and the update, then queues the copy of `next` into staging_
// on the backend's transfer stream after `consumed_` (Backend::copy_to_device_beside): it runs while
// the step computes. The step returns once both are done, so `next`'s host memory is free again when
// it returns, as after step(). Labels are checked when staged and kept on the host (the step counts
// hits against them). The step's queued work — the step, the update, the copies — is synchronised
// once (Executor::queue_bound), and with CUDA graphs the step and the update are one launch each.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "optimizer/plan_model.h"
#include "runtime/backend/backend.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/executor/executor.h"
#include "runtime/ir/graph.h"
#include "training/distributed/buckets.h"
#include "training/distributed/communicator.h"
#include "training/training_graph.h"
#include "training/update_graph.h"

namespace ucudnn::training {

// What the engine trains with; the public TrainOptions, checked and translated by api/trainer.cc.
struct TrainerConfig {
  // The session's plan request (api's plan_request); each graph's plan runs in its layouts where the
  // backend trains channels-last (else NCHW), io-bound,
  // without residual-in-place (the engine sets those).
  optimizer::PlanRequest plan;
  OptimizerConfig optimizer;
  double learning_rate = 0.01;  // the starting rate
  float label_smoothing = 0.0f;
  uint64_t seed = 0;  // Dropout masks: step k draws from seed + k (+ rank · 2^32 with several ranks)
  std::shared_ptr<distributed::Communicator> communicator;  // null: one process
  size_t bucket_bytes = size_t{25} << 20;  // gradients averaged across ranks in buckets of about this size
  // The step, the update and the evaluation captured once and replayed (Note [captured runs]); one
  // process only: a data-parallel step starts its all-reduces between the step's kernels.
  runtime::CaptureMode capture = runtime::CaptureMode::kOff;
};

// One step's numbers (the public TrainStepResult's).
struct StepResult {
  float loss = 0;
  int64_t correct = 0;
  double upload_ms = 0;
  double compute_ms = 0;
  double all_reduce_ms = 0;
};

// One timed node of a profiled step (the public StepProfile's).
struct NodeTime {
  std::string node;
  std::string op;
  double ms = 0;
};

class TrainerEngine {
 public:
  // Builds the training step, the evaluation forward (planned on first use) and the optimizer
  // update of `inference` (the imported model, no inference passes), plans them on `backend`,
  // allocates the trainer's buffers and uploads the initial weights (with several ranks: rank 0's).
  static Expected<std::unique_ptr<TrainerEngine>> create(std::unique_ptr<runtime::Backend> backend,
                                                         ir::Graph inference, TrainerConfig config);

  // The training graph and its value ids (model inputs, parameters, running statistics), and the
  // evaluation graph (its outputs are the model's).
  const TrainingGraph& training_graph() const { return layout_; }
  const ir::Graph& evaluation_graph() const { return eval_source_; }

  // One step on host inputs and int64 labels [N]; with `profile`, every node of the step and of
  // the update timed into it.
  Expected<StepResult> step(const std::vector<Tensor>& inputs, const Tensor& labels, std::vector<NodeTime>* profile);
  // Note [overlapped batch copies]: stage copies a batch to the device for the next step_staged, which
  // trains on it while copying `next_inputs` and `next_labels` (none when next_inputs is empty) for the
  // step after. InvalidArgument when nothing is staged (also after a failed step).
  Status stage(const std::vector<Tensor>& inputs, const Tensor& labels);
  Expected<StepResult> step_staged(const std::vector<Tensor>& next_inputs, const Tensor& next_labels);
  // The model's outputs in inference mode with the current weights.
  Expected<std::vector<Tensor>> evaluate(const std::vector<Tensor>& inputs);

  const std::string& optimizer() const { return optimizer_; }
  void set_learning_rate(double lr) { learning_rate_ = lr; }
  double learning_rate() const { return learning_rate_; }
  int64_t steps_done() const { return steps_; }

  // Parameters and running statistics by ONNX name, host copies; state() adds
  // "optimizer/<state>/<parameter>" and "trainer/step"; load_state checks all before changing any.
  Expected<std::map<std::string, Tensor>> weights() const;
  Expected<std::map<std::string, Tensor>> state() const;
  Status load_state(const std::map<std::string, Tensor>& state);

  // The training step's executor (its plan, weight and kernel bytes) and the bytes of the
  // engine's own buffers (parameters, gradients, optimizer state, running statistics, io).
  const runtime::Executor& train_executor() const { return *train_->executor; }
  size_t own_bytes() const;
  std::string plan_json() const;
  double predicted_conv_ms() const { return train_->predicted_conv_ms; }

  int rank() const { return comm_ ? comm_->rank() : 0; }
  int world_size() const { return comm_ ? comm_->size() : 1; }
  // The largest |difference| between a parameter on any rank and on rank 0; overwrites the gradients.
  Expected<double> replica_difference();

 private:
  static constexpr size_t kAlignment = 256;

  // Values laid out one after another (aligned) in one buffer.
  struct BufferLayout {
    std::vector<size_t> offsets;
    size_t bytes = 0;
    size_t add(size_t nbytes);
  };

  // A graph planned and ready to run on the backend.
  struct Planned {
    ir::Graph graph;
    std::unique_ptr<runtime::Executor> executor;
    double predicted_conv_ms = 0;
  };

  TrainerEngine(std::unique_ptr<runtime::Backend> backend, TrainerConfig config)
      : config_(std::move(config)),
        learning_rate_(config_.learning_rate),
        backend_(std::move(backend)),
        comm_(config_.communicator) {}

  static std::byte* at(const runtime::Buffer& buffer, size_t offset) {
    return static_cast<std::byte*>(buffer.data()) + offset;
  }
  // Plans `graph` (NCHW, docs/TRAINING.md) and prepares its executor.
  Expected<std::unique_ptr<Planned>> plan_and_prepare(ir::Graph graph) const;
  Status build(ir::Graph inference);
  // The step on the batch in io_ whose labels are `labels`: the training step, the update, `next`'s
  // staging when given, the loss and logits; synchronised once. `started`: when the step began.
  Expected<StepResult> run_step(const Tensor& labels, const std::vector<Tensor>* next_inputs, const Tensor* next_labels,
                                std::vector<NodeTime>* profile, std::chrono::steady_clock::time_point started);
  // The training graph's values of parameter k, running statistic k, model input i.
  const ir::Value& parameter(size_t k) const { return layout_.graph.value(layout_.parameters[k]); }
  const ir::Value& running_stat(size_t k) const { return layout_.graph.value(layout_.running_stats[k]); }
  const ir::Value& model_input(size_t i) const { return layout_.graph.value(layout_.graph.inputs[i]); }

  // trainer_binding.cc
  static size_t value_bytes(const ir::Graph& g, ir::ValueId id);
  // Lays out and allocates the engine's buffers (the graphs planned).
  Status allocate_buffers();
  Status upload_initial_values(const ir::Graph& inference);
  Status copy_inputs_in(const std::vector<Tensor>& inputs);
  // InvalidArgument unless `inputs` are the model's (count, dtype and shape).
  Status check_inputs(const std::vector<Tensor>& inputs) const;
  // InvalidArgument unless `inputs` are the model's (dtype and shape) and `labels` int64 [N] of its classes.
  Status check_batch(const std::vector<Tensor>& inputs, const Tensor& labels) const;
  // Queues the copy of a checked batch into staging_ beside the run (Note [overlapped batch copies]).
  Status queue_staging(const std::vector<Tensor>& inputs, const Tensor& labels);
  // A host copy of dtype[shape] at `offset` of `buffer`, queued: valid after backend_->synchronize.
  Expected<Tensor> queue_download(const runtime::Buffer& buffer, size_t offset, DType dtype, const Shape& shape,
                                  const std::string& what) const;
  Status upload(runtime::Buffer& buffer, size_t offset, const Tensor& t, const std::string& what);
  // The pointers of the bound inputs / outputs of the training step; the parameters' and running
  // statistics' (the evaluation's inputs after the model's own), appended to `in`.
  std::vector<const void*> train_inputs() const;
  void add_weight_pointers(std::vector<const void*>* in) const;
  std::vector<void*> train_outputs() const;
  // Fills the four binding lists below (the buffers never move after build).
  void bind_buffers();

  // trainer_data_parallel.cc
  // Data-parallel training: the plans of every rank equal (InvalidArgument otherwise); rank 0's
  // parameters, optimizer state and running statistics copied to every rank; the gradients
  // averaged across ranks, bucket by bucket.
  Status check_plans_agree();
  Status broadcast_state();
  // Note [overlapped all-reduce]: when each bucket's gradients are final, and the training
  // executor's step callback that starts its reduction then; average_gradients starts the rest
  // once the step is done and waits for all.
  void plan_overlap();
  Status start_buckets_after(size_t step);
  Status average_gradients();
  // A communicator was given: the data-parallel path, also for one rank (as DDP does; `--gpus 1`
  // runs NCCL's collectives on one GPU).
  bool data_parallel() const { return comm_ != nullptr; }

  TrainerConfig config_;
  double learning_rate_;
  std::string optimizer_;  // OptimizerConfig::describe()
  int64_t steps_ = 0;
  std::unique_ptr<runtime::Backend> backend_;
  std::shared_ptr<distributed::Communicator> comm_;  // null: one process
  std::vector<distributed::GradientBucket> buckets_;
  std::vector<std::vector<size_t>> buckets_after_step_;  // per step of the training plan
  std::vector<bool> bucket_started_;                     // in the current step

  TrainingGraph layout_;  // value ids of the training graph (its graph is train_->graph)
  std::unique_ptr<Planned> train_, update_, eval_;
  ir::Graph eval_source_;  // the evaluation graph, planned on first use

  // Engine-owned memory (one allocation each) and where each tensor lies in it.
  std::unique_ptr<runtime::Buffer> params_, grads_, states_, stats_, io_, hyper_, eval_out_;
  BufferLayout param_layout_, stat_layout_, io_layout_, eval_out_layout_;
  int state_count_ = 1;  // optimizer state tensors per parameter
  // What the training step and the update are bound to (run_bound), made once by bind_buffers.
  std::vector<const void*> train_in_, update_in_;
  std::vector<void*> train_out_, update_out_;
  // io_: model inputs [0, n), labels, dropout seed, loss, logits.
  size_t labels_slot_ = 0, seed_slot_ = 0, loss_slot_ = 0, logits_slot_ = 0;
  // Note [overlapped batch copies]: io_'s inputs and labels as laid out there (made by the first stage()),
  // the events ordering its copies, the staged batch's labels, and whether a batch is staged.
  std::unique_ptr<runtime::Buffer> staging_;
  std::unique_ptr<runtime::Event> staged_, consumed_;
  Tensor staged_labels_;
  bool has_staged_ = false;
};

}  // namespace ucudnn::training
