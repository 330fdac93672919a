// Trainer::load and the one Trainer there is (include/ucudnn/ucudnn.h, docs/TRAINING.md).
//
// Three graphs, each planned by optimizer::plan_model and run by its own runtime::Executor
// over one backend: the training step (training/training_graph.h), the evaluation forward
// and the optimizer update (training/update_graph.h). The trainer owns the memory that
// outlives a step, one allocation each — parameters, gradients, optimizer state, running
// statistics, and the step's inputs and outputs (`io`) — and binds it to the graphs' inputs
// and outputs with Executor::run_bound: a parameter is the same bytes as input of the
// training step, of the evaluation and of the update (input and output: in place).
//
// Data-parallel training (TrainOptions::communicator; Note [data-parallel step]) adds, per step, the
// average of the gradients across ranks in buckets (training/distributed/buckets.h) between the
// training step and the update.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "api/device.h"
#include "api/loading.h"
#include "onnx_import/onnx_import.h"
#include "runtime/core/bytes.h"
#include "runtime/executor/executor.h"
#include "runtime/executor/plan_json.h"
#include "training/distributed/buckets.h"
#include "training/distributed/communicator.h"
#include "training/training_graph.h"
#include "training/update_graph.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

namespace {

constexpr size_t kAlignment = 256;

// Values laid out one after another (aligned) in one buffer.
struct Layout {
  std::vector<size_t> offsets;
  size_t bytes = 0;
  size_t add(size_t nbytes) {
    offsets.push_back(bytes);
    bytes = align_up(bytes + nbytes, kAlignment);
    return offsets.back();
  }
};

size_t value_bytes(const ir::Graph& g, ir::ValueId id) {
  return static_cast<size_t>(shape_numel(g.value(id).shape)) * dtype_size(g.value(id).dtype);
}

std::vector<TensorInfo> describe(const ir::Graph& g, const std::vector<ir::ValueId>& ids) {
  std::vector<TensorInfo> infos;
  for (ir::ValueId id : ids) infos.push_back({g.value(id).name, g.value(id).dtype, g.value(id).shape});
  return infos;
}

std::byte* at(const runtime::Buffer& buffer, size_t offset) { return static_cast<std::byte*>(buffer.data()) + offset; }

training::OptimizerConfig optimizer_config(const TrainOptions& o) {
  training::OptimizerConfig c;
  c.kind = o.optimizer == Optimizer::kSgd ? training::OptimizerConfig::Kind::kSgd
                                          : training::OptimizerConfig::Kind::kAdamW;
  c.momentum = o.momentum;
  c.dampening = o.dampening;
  c.nesterov = o.nesterov;
  c.beta1 = o.beta1;
  c.beta2 = o.beta2;
  c.epsilon = o.epsilon;
  c.weight_decay = o.weight_decay;
  return c;
}

Status check_train_options(const TrainOptions& o) {
  UCUDNN_RETURN_IF_ERROR(check_options(o.session));
  if (!(o.learning_rate >= 0)) return invalid_argument("the learning rate must be >= 0");
  if (!(o.label_smoothing >= 0 && o.label_smoothing < 1))
    return invalid_argument("label smoothing must be in [0, 1)");
  if (!o.session.plan_path.empty())
    return unsupported("training makes its own plan: a saved plan (plan_path) is for inference sessions");
  if (o.session.pin_threads)
    return unsupported("pin_threads is for inference sessions: the trainer's data-loading threads would inherit "
                       "the pinned thread's one CPU (Note [pinned threads])");
  if (o.communicator != nullptr && o.communicator->device_memory() != (o.session.device == Device::kCuda))
    return invalid_argument(std::string("the communicator '") + o.communicator->name() + "' reduces " +
                            (o.communicator->device_memory() ? "GPU" : "host") + " memory, but training runs on the " +
                            device_name(o.session.device) + " (NCCL for the GPU, MPI for the CPU)");
  if (o.bucket_bytes < sizeof(float)) return invalid_argument("the gradient bucket size must be at least 4 bytes");
  return Status::ok();
}

// 64-bit FNV-1a: the plans' fingerprint that ranks compare.
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

// A graph planned and ready to run on the backend.
struct Planned {
  ir::Graph graph;
  std::unique_ptr<runtime::Executor> executor;
  double predicted_conv_ms = 0;
};

Expected<std::unique_ptr<Planned>> plan_and_prepare(runtime::Backend& backend, ir::Graph graph,
                                                    const SessionOptions& options) {
  UCUDNN_RETURN_IF_ERROR(backend.check_support(graph));
  optimizer::PlanRequest request = plan_request(options);
  request.layouts = {optimizer::GraphLayout::kNchw};  // training runs NCHW (docs/TRAINING.md)
  request.planner.io_bound = true;  // parameters, gradients and batches are the trainer's own buffers
  request.planner.residual_in_place = false;  // training graphs have no Conv with a residual input
  UCUDNN_ASSIGN_OR_RETURN(optimizer::PlannedModel planned, optimizer::plan_model(graph, request));
  auto p = std::make_unique<Planned>();
  p->graph = std::move(planned.graph);
  p->predicted_conv_ms = planned.result.plan.predicted_conv_ms;
  // The executor keeps a reference to the graph: it lives in `p`, which the trainer keeps.
  UCUDNN_ASSIGN_OR_RETURN(p->executor, runtime::Executor::create(backend, p->graph, std::move(planned.result.plan)));
  return p;
}

class TrainerImpl final : public Trainer {
 public:
  static Expected<std::unique_ptr<Trainer>> create(const std::string& model_path, const TrainOptions& options);

  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }
  const std::vector<TensorInfo>& parameters() const override { return parameters_; }
  const std::vector<TensorInfo>& running_stats() const override { return running_stats_; }
  Expected<TrainStepResult> step(const std::vector<Tensor>& inputs, const Tensor& labels) override {
    return run_step(inputs, labels, nullptr);
  }
  Expected<std::vector<StepProfile>> profile_step(const std::vector<Tensor>& inputs, const Tensor& labels) override {
    std::vector<StepProfile> profile;
    UCUDNN_RETURN_IF_ERROR(run_step(inputs, labels, &profile).status());
    return profile;
  }
  Expected<std::vector<Tensor>> evaluate(const std::vector<Tensor>& inputs) override;
  std::string optimizer() const override { return optimizer_; }
  void set_learning_rate(double lr) override { learning_rate_ = lr; }
  double learning_rate() const override { return learning_rate_; }
  int64_t steps_done() const override { return steps_; }
  Expected<std::map<std::string, Tensor>> weights() const override;
  Expected<std::map<std::string, Tensor>> state() const override;
  Status load_state(const std::map<std::string, Tensor>& state) override;
  Status save(const std::string& onnx_path) const override;
  MemoryStats memory() const override;
  std::string plan_json() const override {
    return runtime::plan_to_json(train_->executor->plan(), train_->graph);
  }
  double predicted_conv_ms() const override { return train_->predicted_conv_ms; }
  int rank() const override { return comm_ ? comm_->rank() : 0; }
  int world_size() const override { return comm_ ? comm_->size() : 1; }
  Expected<double> replica_difference() override;

 private:
  TrainerImpl(std::string model_path, TrainOptions options)
      : model_path_(std::move(model_path)), options_(std::move(options)), learning_rate_(options_.learning_rate) {}

  Status build(ir::Graph inference);
  // One step; with `profile`, every node of the step and of the update timed into it.
  Expected<TrainStepResult> run_step(const std::vector<Tensor>& inputs, const Tensor& labels,
                                     std::vector<StepProfile>* profile);
  Status upload_initial_values(const ir::Graph& inference);
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
  Status copy_inputs_in(const std::vector<Tensor>& inputs);
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

  std::string model_path_;
  TrainOptions options_;
  double learning_rate_;
  std::string optimizer_;  // OptimizerConfig::describe()
  int64_t steps_ = 0;
  std::shared_ptr<distributed::Communicator> comm_;  // null: one process
  std::vector<distributed::GradientBucket> buckets_;
  std::vector<std::vector<size_t>> buckets_after_step_;  // per step of the training plan
  std::vector<bool> bucket_started_;                     // in the current step

  std::unique_ptr<runtime::Backend> backend_;
  training::TrainingGraph layout_;  // value ids of the training graph (its graph is train_->graph)
  std::unique_ptr<Planned> train_, update_, eval_;
  ir::Graph eval_source_;           // the evaluation graph, planned on first use
  std::vector<TensorInfo> inputs_, outputs_, parameters_, running_stats_;
  std::vector<training::UntiedUse> untied_;  // initializers the exporter merged, trained apart

  // Trainer-owned memory (one allocation each) and where each tensor lies in it.
  std::unique_ptr<runtime::Buffer> params_, grads_, states_, stats_, io_, hyper_, eval_out_;
  Layout param_layout_, stat_layout_, io_layout_, eval_out_layout_;
  int state_count_ = 1;  // optimizer state tensors per parameter
  // What the training step and the update are bound to (run_bound), made once by bind_buffers.
  std::vector<const void*> train_in_, update_in_;
  std::vector<void*> train_out_, update_out_;
  // io_: model inputs [0, n), labels, dropout seed, loss, logits.
  size_t labels_slot_ = 0, seed_slot_ = 0, loss_slot_ = 0, logits_slot_ = 0;
};

Expected<std::unique_ptr<Trainer>> TrainerImpl::create(const std::string& model_path, const TrainOptions& options) {
  UCUDNN_RETURN_IF_ERROR(check_train_options(options));
  UCUDNN_RETURN_IF_ERROR(apply_cpu_thread_options(options.session));
  std::unique_ptr<TrainerImpl> t(new TrainerImpl(model_path, options));
  t->comm_ = options.communicator;
  UCUDNN_ASSIGN_OR_RETURN(t->backend_, make_backend(options.session.device, options.session.math));
  onnx_import::ImportOptions import;
  import.input_shapes = options.session.input_shapes;
  import.constant_inputs = options.session.constant_inputs;
  import.batch = options.session.batch;
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph inference, onnx_import::load_model(model_path, import));
  t->untied_ = training::untie_shared_parameters(inference);
  UCUDNN_RETURN_IF_ERROR(t->build(std::move(inference)));
  return std::unique_ptr<Trainer>(std::move(t));
}

Status TrainerImpl::build(ir::Graph inference) {
  training::TrainingGraphOptions graph_options;
  graph_options.label_smoothing = options_.label_smoothing;
  UCUDNN_ASSIGN_OR_RETURN(layout_, training::build_training_graph(inference, graph_options));
  UCUDNN_ASSIGN_OR_RETURN(eval_source_, training::build_evaluation_graph(inference));
  const ir::Graph& g = layout_.graph;
  inputs_ = describe(g, std::vector<ir::ValueId>(g.inputs.begin(), g.inputs.begin() + layout_.model_inputs));
  outputs_ = describe(eval_source_, eval_source_.outputs);
  parameters_ = describe(g, layout_.parameters);
  running_stats_ = describe(g, layout_.running_stats);

  // Note [data-parallel step]: rank 0 plans first, benchmarking what the database lacks; the
  // others then plan from the same timings (never measuring again) — one writer to the database,
  // and identical plans, which check_plans_agree verifies.
  if (data_parallel() && comm_->rank() != 0) {
    UCUDNN_RETURN_IF_ERROR(comm_->barrier().with_context("waiting for rank 0 to plan"));
    options_.session.rebenchmark = false;
  }
  UCUDNN_ASSIGN_OR_RETURN(train_, plan_and_prepare(*backend_, layout_.graph, options_.session));
  if (data_parallel() && comm_->rank() == 0)
    UCUDNN_RETURN_IF_ERROR(comm_->barrier().with_context("letting the other ranks plan"));
  if (data_parallel()) UCUDNN_RETURN_IF_ERROR(check_plans_agree());

  const training::OptimizerConfig config = optimizer_config(options_);
  optimizer_ = config.describe();
  state_count_ = config.states();
  std::vector<std::string> names;
  std::vector<Shape> shapes;
  for (const TensorInfo& p : parameters_) {
    names.push_back(p.name);
    shapes.push_back(p.shape);
  }
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph update, training::build_update_graph(names, shapes, config));
  UCUDNN_ASSIGN_OR_RETURN(update_, plan_and_prepare(*backend_, std::move(update), options_.session));

  for (ir::ValueId id : layout_.parameters) param_layout_.add(value_bytes(g, id));
  for (ir::ValueId id : layout_.running_stats) stat_layout_.add(value_bytes(g, id));
  for (size_t i = 0; i < layout_.model_inputs; ++i) io_layout_.add(value_bytes(g, g.inputs[i]));
  labels_slot_ = io_layout_.offsets.size();
  io_layout_.add(value_bytes(g, layout_.labels));
  seed_slot_ = io_layout_.offsets.size();
  io_layout_.add(sizeof(int64_t));
  loss_slot_ = io_layout_.offsets.size();
  io_layout_.add(value_bytes(g, g.outputs[layout_.loss_output]));
  logits_slot_ = io_layout_.offsets.size();
  io_layout_.add(value_bytes(g, g.outputs[layout_.logits_output]));

  size_t state_bytes = 0;
  if (!checked_mul(param_layout_.bytes, static_cast<size_t>(state_count_), &state_bytes))
    return invalid_argument("optimizer state size overflows");
  UCUDNN_ASSIGN_OR_RETURN(params_, backend_->allocate(param_layout_.bytes, "parameters"));
  UCUDNN_ASSIGN_OR_RETURN(grads_, backend_->allocate(param_layout_.bytes, "gradients"));
  UCUDNN_ASSIGN_OR_RETURN(states_, backend_->allocate(state_bytes, "optimizer state"));
  UCUDNN_ASSIGN_OR_RETURN(stats_, backend_->allocate(stat_layout_.bytes, "running statistics"));
  UCUDNN_ASSIGN_OR_RETURN(io_, backend_->allocate(io_layout_.bytes, "training inputs and outputs"));
  UCUDNN_ASSIGN_OR_RETURN(hyper_, backend_->allocate(2 * kAlignment, "learning rate and step"));
  UCUDNN_ASSIGN_OR_RETURN(buckets_, distributed::plan_gradient_buckets(param_layout_.offsets, param_layout_.bytes,
                                                                        options_.bucket_bytes));
  bind_buffers();
  if (data_parallel()) plan_overlap();
  UCUDNN_RETURN_IF_ERROR(upload_initial_values(inference));
  return broadcast_state();
}

// Note [data-parallel step]
// Each rank runs the whole step on its own batch (its share of the global batch: the data loader's
// shard_order). The loss is the mean over the rank's batch, so the mean of the ranks' gradients is
// the gradient of the global batch's mean loss: average_gradients replaces every rank's gradients
// by that mean (ReduceOp::kAverage) before the update, and since every rank then applies the same
// update to the same weights, the replicas stay equal (replica_difference checks it). Buckets are
// reduced while the backward pass goes on (Note [overlapped all-reduce]).
// BatchNormalization normalises each rank's batch by its own statistics, as PyTorch's DDP does
// without SyncBatchNorm; its running statistics are then the rank's own.
Status TrainerImpl::check_plans_agree() {
  const uint64_t hash = fnv1a(plan_json());
  const double high = static_cast<double>(hash >> 32), low = static_cast<double>(hash & 0xffffffffu);
  double values[4] = {high, low, -high, -low};  // max, and minus the min, of both halves
  UCUDNN_RETURN_IF_ERROR(comm_->all_reduce_host(values, 4, distributed::ReduceOp::kMax));
  if (values[0] != -values[2] || values[1] != -values[3])
    return invalid_argument("the ranks planned different training steps (rank " + std::to_string(comm_->rank()) +
                            "'s plan fingerprint is " + std::to_string(hash) + "): every rank must plan from the same "
                            "benchmark database — put it where every host reads it (--db) or copy rank 0's "
                            "to every host — with the same options");
  return Status::ok();
}

Status TrainerImpl::broadcast_state() {
  if (!data_parallel()) return Status::ok();
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("before sharing rank 0's weights"));
  for (runtime::Buffer* buffer : {params_.get(), states_.get(), stats_.get()})
    if (buffer->bytes() > 0)
      UCUDNN_RETURN_IF_ERROR(
          comm_->broadcast(buffer->data(), buffer->bytes(), 0).with_context("sharing rank 0's weights"));
  return Status::ok();
}

// Note [overlapped all-reduce]
// As in PyTorch's DDP, a bucket's reduction starts as soon as the backward pass has produced its
// gradients, while the rest of the backward pass runs. The executor calls back after queuing each
// step of stream 0 (Executor::set_step_callback); bucket b starts after the last step that writes
// or reads one of its gradients (plan_overlap), on the communicator's stream ordered after the
// backend's stream 0 (Backend::native_stream; on the CPU the step is done when it is queued, and
// MPI reduces at once). Every rank has the same plan (check_plans_agree), so all start the buckets
// in the same order. A gradient no step writes (copied in at the end of run_bound), a plan with
// side-stream steps, or a profiled step: those buckets start after the run. average_gradients
// then waits for all before the update reads the gradients.
void TrainerImpl::plan_overlap() {
  const runtime::Plan& plan = train_->executor->plan();
  const ir::Graph& g = train_->graph;
  buckets_after_step_.assign(plan.steps.size(), {});
  bucket_started_.assign(buckets_.size(), false);
  constexpr size_t kAfterRun = SIZE_MAX;
  std::vector<size_t> step_of(g.nodes.size(), kAfterRun);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    if (plan.steps[s].stream != 0) return;  // side-stream steps: every bucket after the run
    step_of[static_cast<size_t>(plan.steps[s].node)] = s;
  }
  std::vector<size_t> last_use(g.values.size(), 0);  // the last step reading each value
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (ir::ValueId v : g.nodes[n].inputs)
      if (v != ir::kNoValue) last_use[static_cast<size_t>(v)] = std::max(last_use[static_cast<size_t>(v)], step_of[n]);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    size_t ready = 0;
    for (size_t k = buckets_[b].first_parameter; k < buckets_[b].end_parameter; ++k) {
      const ir::ValueId v = g.outputs[layout_.first_gradient_output + k];
      const ir::NodeId producer = g.value(v).producer;
      ready = std::max({ready, producer < 0 ? kAfterRun : step_of[static_cast<size_t>(producer)],
                        last_use[static_cast<size_t>(v)]});
    }
    if (ready != kAfterRun) buckets_after_step_[ready].push_back(b);
  }
  train_->executor->set_step_callback([this](size_t step) { return start_buckets_after(step); });
}

Status TrainerImpl::start_buckets_after(size_t step) {
  if (step >= buckets_after_step_.size()) return Status::ok();
  for (size_t b : buckets_after_step_[step]) {
    const distributed::GradientBucket& bucket = buckets_[b];
    UCUDNN_RETURN_IF_ERROR(comm_->start_all_reduce(reinterpret_cast<float*>(at(*grads_, bucket.begin)),
                                                   (bucket.end - bucket.begin) / sizeof(float),
                                                   distributed::ReduceOp::kAverage, backend_->native_stream(0))
                               .with_context("averaging the gradients of parameters " +
                                             parameters_[bucket.first_parameter].name + " .. " +
                                             parameters_[bucket.end_parameter - 1].name + " across ranks"));
    bucket_started_[b] = true;
  }
  return Status::ok();
}

Status TrainerImpl::average_gradients() {
  // The step is done (run_bound synchronised): the buckets not started yet go now, then all finish.
  Status status = Status::ok();
  for (size_t b = 0; b < buckets_.size() && status.is_ok(); ++b)
    if (!bucket_started_[b])
      status = comm_->start_all_reduce(reinterpret_cast<float*>(at(*grads_, buckets_[b].begin)),
                                       (buckets_[b].end - buckets_[b].begin) / sizeof(float),
                                       distributed::ReduceOp::kAverage, nullptr);
  bucket_started_.assign(buckets_.size(), false);
  UCUDNN_RETURN_IF_ERROR(status.with_context("averaging the gradients across ranks"));
  return comm_->wait_reductions().with_context("averaging the gradients across ranks");
}

Expected<double> TrainerImpl::replica_difference() {
  if (!data_parallel() || comm_->size() == 1) return 0.0;
  // Rank 0's parameters into every rank's gradient buffer, then both to the host.
  UCUDNN_RETURN_IF_ERROR(backend_->copy_on_device(grads_->data(), params_->data(), params_->bytes(), "parameters"));
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the parameters"));
  UCUDNN_RETURN_IF_ERROR(comm_->broadcast(grads_->data(), grads_->bytes(), 0).with_context("comparing the replicas"));
  double largest = 0;
  for (size_t k = 0; k < parameters_.size(); ++k) {
    UCUDNN_ASSIGN_OR_RETURN(Tensor mine, queue_download(*params_, param_layout_.offsets[k], DType::kFloat32,
                                                        parameters_[k].shape, "parameter"));
    UCUDNN_ASSIGN_OR_RETURN(Tensor first, queue_download(*grads_, param_layout_.offsets[k], DType::kFloat32,
                                                         parameters_[k].shape, "rank 0's parameter"));
    UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the parameters to the host"));
    for (int64_t i = 0; i < mine.numel(); ++i) {
      const double d = std::fabs(double(mine.data<float>()[i]) - double(first.data<float>()[i]));
      if (!(d <= largest)) largest = std::isnan(d) ? HUGE_VAL : d;  // NaN counts as the largest difference
    }
  }
  UCUDNN_RETURN_IF_ERROR(comm_->all_reduce_host(&largest, 1, distributed::ReduceOp::kMax));
  return largest;
}

Status TrainerImpl::upload(runtime::Buffer& buffer, size_t offset, const Tensor& t, const std::string& what) {
  return backend_->copy_to_device(at(buffer, offset), t.raw(), t.nbytes(), what);
}

Status TrainerImpl::upload_initial_values(const ir::Graph& inference) {
  // The training graph is a copy of `inference`: its parameters' value ids are the initializers'.
  for (size_t k = 0; k < layout_.parameters.size(); ++k)
    UCUDNN_RETURN_IF_ERROR(upload(*params_, param_layout_.offsets[k], *inference.value(layout_.parameters[k]).constant,
                                  "parameter '" + parameters_[k].name + "'"));
  for (size_t k = 0; k < layout_.running_stats.size(); ++k)
    UCUDNN_RETURN_IF_ERROR(upload(*stats_, stat_layout_.offsets[k], *inference.value(layout_.running_stats[k]).constant,
                                  "running statistic '" + running_stats_[k].name + "'"));
  // Optimizer state starts at zero.
  const size_t bytes = states_->bytes();
  if (bytes > 0) {
    UCUDNN_ASSIGN_OR_RETURN(Tensor zeros, Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(bytes)}));
    UCUDNN_RETURN_IF_ERROR(backend_->copy_to_device(states_->data(), zeros.raw(), bytes, "optimizer state"));
  }
  return backend_->synchronize("uploading the initial weights");
}

void TrainerImpl::add_weight_pointers(std::vector<const void*>* in) const {
  for (size_t k = 0; k < layout_.parameters.size(); ++k) in->push_back(at(*params_, param_layout_.offsets[k]));
  for (size_t k = 0; k < layout_.running_stats.size(); ++k) in->push_back(at(*stats_, stat_layout_.offsets[k]));
}

std::vector<const void*> TrainerImpl::train_inputs() const {
  std::vector<const void*> in;
  for (size_t i = 0; i < layout_.model_inputs; ++i) in.push_back(at(*io_, io_layout_.offsets[i]));
  in.push_back(at(*io_, io_layout_.offsets[labels_slot_]));
  if (layout_.dropout_seed != ir::kNoValue) in.push_back(at(*io_, io_layout_.offsets[seed_slot_]));
  add_weight_pointers(&in);
  return in;
}

void TrainerImpl::bind_buffers() {
  train_in_ = train_inputs();
  train_out_ = train_outputs();
  update_in_ = {at(*hyper_, 0), at(*hyper_, kAlignment)};
  update_out_.clear();
  for (size_t k = 0; k < layout_.parameters.size(); ++k) {
    const size_t offset = param_layout_.offsets[k];
    update_in_.push_back(at(*params_, offset));
    update_in_.push_back(at(*grads_, offset));
    update_out_.push_back(at(*params_, offset));  // in place
    for (int s = 0; s < state_count_; ++s) {
      std::byte* state = at(*states_, static_cast<size_t>(s) * param_layout_.bytes + offset);
      update_in_.push_back(state);
      update_out_.push_back(state);
    }
  }
}

std::vector<void*> TrainerImpl::train_outputs() const {
  std::vector<void*> out;
  out.push_back(at(*io_, io_layout_.offsets[loss_slot_]));
  out.push_back(at(*io_, io_layout_.offsets[logits_slot_]));
  for (size_t k = 0; k < layout_.parameters.size(); ++k) out.push_back(at(*grads_, param_layout_.offsets[k]));
  for (size_t k = 0; k < layout_.running_stats.size(); ++k) out.push_back(at(*stats_, stat_layout_.offsets[k]));
  return out;
}

Status TrainerImpl::copy_inputs_in(const std::vector<Tensor>& inputs) {
  if (inputs.size() != inputs_.size())
    return invalid_argument("the model takes " + std::to_string(inputs_.size()) + " inputs, got " +
                            std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype() != inputs_[i].dtype || inputs[i].shape() != inputs_[i].shape)
      return invalid_argument("input '" + inputs_[i].name + "' must be " + dtype_name(inputs_[i].dtype) +
                              shape_to_string(inputs_[i].shape) + " (the training batch), got " +
                              inputs[i].describe());
    UCUDNN_RETURN_IF_ERROR(upload(*io_, io_layout_.offsets[i], inputs[i], "input '" + inputs_[i].name + "'"));
  }
  return Status::ok();
}

// Runs `executor` on bound buffers, or profiles it into `profile` (names prefixed by `prefix`).
Status run_or_profile(runtime::Executor& executor, const std::vector<const void*>& in, const std::vector<void*>& out,
                      std::vector<StepProfile>* profile, const std::string& prefix) {
  if (profile == nullptr) return executor.run_bound(in, out);
  UCUDNN_ASSIGN_OR_RETURN(std::vector<runtime::StepTiming> timings, executor.profile_bound(in, out));
  for (const runtime::StepTiming& t : timings)
    if (t.node >= 0) profile->push_back({prefix + t.name, runtime::step_op_name(t), t.ms});
  return Status::ok();
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

Expected<TrainStepResult> TrainerImpl::run_step(const std::vector<Tensor>& inputs, const Tensor& labels,
                                                std::vector<StepProfile>* profile) {
  const ir::Graph& g = layout_.graph;
  const Shape& label_shape = g.value(layout_.labels).shape;
  if (labels.dtype() != DType::kInt64 || labels.shape() != label_shape)
    return invalid_argument("labels must be int64" + shape_to_string(label_shape) + ", got " + labels.describe());
  const int64_t classes = g.value(g.outputs[layout_.logits_output]).shape[1];
  for (int64_t i = 0; i < labels.numel(); ++i)
    if (labels.data<int64_t>()[i] < 0 || labels.data<int64_t>()[i] >= classes)
      return invalid_argument("label " + std::to_string(labels.data<int64_t>()[i]) + " of sample " +
                              std::to_string(i) + " is outside the model's " + std::to_string(classes) + " classes");
  TrainStepResult result;
  if (data_parallel()) bucket_started_.assign(buckets_.size(), false);  // after a failed step too
  const auto upload_start = std::chrono::steady_clock::now();
  UCUDNN_RETURN_IF_ERROR(copy_inputs_in(inputs));
  UCUDNN_RETURN_IF_ERROR(upload(*io_, io_layout_.offsets[labels_slot_], labels, "labels"));
  const uint64_t rank_offset = static_cast<uint64_t>(rank()) << 32;  // each rank its own dropout masks
  const int64_t seed = static_cast<int64_t>(options_.seed + static_cast<uint64_t>(steps_) + rank_offset);
  UCUDNN_RETURN_IF_ERROR(backend_->copy_to_device(at(*io_, io_layout_.offsets[seed_slot_]), &seed, sizeof(seed),
                                                  "dropout seed"));
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the batch to the device"));
  result.upload_ms = ms_since(upload_start);
  const auto compute_start = std::chrono::steady_clock::now();
  UCUDNN_RETURN_IF_ERROR(run_or_profile(*train_->executor, train_in_, train_out_, profile, ""));
  if (data_parallel()) {  // Note [data-parallel step]; run_bound has synchronised: the gradients are written
    const auto reduce_start = std::chrono::steady_clock::now();
    UCUDNN_RETURN_IF_ERROR(average_gradients());
    result.all_reduce_ms = ms_since(reduce_start);
    if (profile != nullptr) profile->push_back({"all-reduce/gradients", "AllReduce", result.all_reduce_ms});
  }

  // The update: lr and step, then every parameter and state in place.
  const float lr = static_cast<float>(learning_rate_);
  const int64_t step = steps_ + 1;
  UCUDNN_RETURN_IF_ERROR(backend_->copy_to_device(at(*hyper_, 0), &lr, sizeof(lr), "learning rate"));
  UCUDNN_RETURN_IF_ERROR(backend_->copy_to_device(at(*hyper_, kAlignment), &step, sizeof(step), "step"));
  UCUDNN_RETURN_IF_ERROR(run_or_profile(*update_->executor, update_in_, update_out_, profile, "update/"));
  result.compute_ms = ms_since(compute_start);

  UCUDNN_ASSIGN_OR_RETURN(Tensor loss,
                          queue_download(*io_, io_layout_.offsets[loss_slot_], DType::kFloat32, {}, "loss"));
  const Shape& logits_shape = g.value(g.outputs[layout_.logits_output]).shape;
  UCUDNN_ASSIGN_OR_RETURN(Tensor logits,
                          queue_download(*io_, io_layout_.offsets[logits_slot_], DType::kFloat32, logits_shape,
                                         "logits"));
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the loss and logits to the host"));
  result.loss = loss.data<float>()[0];
  for (int64_t i = 0; i < logits_shape[0]; ++i) {
    const float* row = logits.data<float>() + i * classes;
    if (std::max_element(row, row + classes) - row == labels.data<int64_t>()[i]) ++result.correct;
  }
  if (data_parallel()) {  // the global batch's: mean of the ranks' means (equal batches), all hits
    double totals[2] = {result.loss, static_cast<double>(result.correct)};
    UCUDNN_RETURN_IF_ERROR(comm_->all_reduce_host(totals, 2, distributed::ReduceOp::kSum));
    result.loss = static_cast<float>(totals[0] / comm_->size());
    result.correct = static_cast<int64_t>(totals[1]);
  }
  ++steps_;
  return result;
}

Expected<std::vector<Tensor>> TrainerImpl::evaluate(const std::vector<Tensor>& inputs) {
  if (eval_ == nullptr) {
    UCUDNN_ASSIGN_OR_RETURN(eval_, plan_and_prepare(*backend_, eval_source_, options_.session));
    for (ir::ValueId id : eval_->graph.outputs) eval_out_layout_.add(value_bytes(eval_->graph, id));
    UCUDNN_ASSIGN_OR_RETURN(eval_out_, backend_->allocate(eval_out_layout_.bytes, "evaluation outputs"));
  }
  UCUDNN_RETURN_IF_ERROR(copy_inputs_in(inputs));
  std::vector<const void*> in;
  for (size_t i = 0; i < layout_.model_inputs; ++i) in.push_back(at(*io_, io_layout_.offsets[i]));
  add_weight_pointers(&in);
  std::vector<void*> out;
  for (size_t j = 0; j < eval_->graph.outputs.size(); ++j) out.push_back(at(*eval_out_, eval_out_layout_.offsets[j]));
  UCUDNN_RETURN_IF_ERROR(eval_->executor->run_bound(in, out));
  std::vector<Tensor> outputs;
  for (size_t j = 0; j < eval_->graph.outputs.size(); ++j) {
    const ir::Value& v = eval_->graph.value(eval_->graph.outputs[j]);
    UCUDNN_ASSIGN_OR_RETURN(Tensor t, queue_download(*eval_out_, eval_out_layout_.offsets[j], v.dtype, v.shape,
                                                     "output '" + v.name + "'"));
    outputs.push_back(std::move(t));
  }
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the evaluation's outputs to the host"));
  return outputs;
}

Expected<Tensor> TrainerImpl::queue_download(const runtime::Buffer& buffer, size_t offset, DType dtype,
                                             const Shape& shape, const std::string& what) const {
  UCUDNN_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate_uninitialized(dtype, shape));
  UCUDNN_RETURN_IF_ERROR(backend_->copy_to_host(t.raw(), at(buffer, offset), t.nbytes(), what));
  return t;
}

Expected<std::map<std::string, Tensor>> TrainerImpl::weights() const {
  std::map<std::string, Tensor> w;
  for (size_t k = 0; k < parameters_.size(); ++k) {
    UCUDNN_ASSIGN_OR_RETURN(w[parameters_[k].name], queue_download(*params_, param_layout_.offsets[k],
                                                                   DType::kFloat32, parameters_[k].shape, "parameter"));
  }
  for (size_t k = 0; k < running_stats_.size(); ++k) {
    UCUDNN_ASSIGN_OR_RETURN(w[running_stats_[k].name],
                            queue_download(*stats_, stat_layout_.offsets[k], DType::kFloat32, running_stats_[k].shape,
                                           "running statistic"));
  }
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the weights to the host"));
  return w;
}

// State names beyond the weights: "optimizer/<state>/<parameter>", "trainer/step".
std::string state_name(int s, int count, const std::string& parameter) {
  const char* name = count == 1 ? "momentum_buffer" : (s == 0 ? "m" : "v");
  return std::string("optimizer/") + name + "/" + parameter;
}

Expected<std::map<std::string, Tensor>> TrainerImpl::state() const {
  UCUDNN_ASSIGN_OR_RETURN(auto all, weights());
  for (int s = 0; s < state_count_; ++s)
    for (size_t k = 0; k < parameters_.size(); ++k) {
      UCUDNN_ASSIGN_OR_RETURN(
          all[state_name(s, state_count_, parameters_[k].name)],
          queue_download(*states_, static_cast<size_t>(s) * param_layout_.bytes + param_layout_.offsets[k],
                         DType::kFloat32, parameters_[k].shape, "optimizer state"));
    }
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the optimizer state to the host"));
  const int64_t step = steps_;
  all["trainer/step"] = Tensor::from_int64s({1}, std::span<const int64_t>(&step, 1));
  return all;
}

Status TrainerImpl::load_state(const std::map<std::string, Tensor>& state) {
  auto take = [&](const std::string& name, const TensorInfo& info, runtime::Buffer& buffer, size_t offset) -> Status {
    auto it = state.find(name);
    if (it == state.end()) return invalid_argument("the training state has no '" + name + "'");
    if (it->second.dtype() != info.dtype || it->second.shape() != info.shape)
      return invalid_argument("the training state's '" + name + "' is " + it->second.describe() + "; the model's is " +
                              dtype_name(info.dtype) + shape_to_string(info.shape));
    return upload(buffer, offset, it->second, "'" + name + "'");
  };
  // Check everything before changing anything.
  auto step = state.find("trainer/step");
  if (step == state.end() || step->second.dtype() != DType::kInt64 || step->second.numel() != 1 ||
      step->second.data<int64_t>()[0] < 0)
    return invalid_argument("the training state has no valid 'trainer/step' (int64[1], >= 0)");
  for (size_t k = 0; k < parameters_.size(); ++k) {
    for (int s = -1; s < state_count_; ++s) {
      const std::string name = s < 0 ? parameters_[k].name : state_name(s, state_count_, parameters_[k].name);
      auto it = state.find(name);
      if (it == state.end() || it->second.dtype() != DType::kFloat32 || it->second.shape() != parameters_[k].shape)
        return invalid_argument("the training state's '" + name + "' is missing or not float32" +
                                shape_to_string(parameters_[k].shape) + " (saved with another model or optimizer?)");
    }
  }
  for (size_t k = 0; k < parameters_.size(); ++k) {
    UCUDNN_RETURN_IF_ERROR(take(parameters_[k].name, parameters_[k], *params_, param_layout_.offsets[k]));
    for (int s = 0; s < state_count_; ++s)
      UCUDNN_RETURN_IF_ERROR(take(state_name(s, state_count_, parameters_[k].name), parameters_[k], *states_,
                                  static_cast<size_t>(s) * param_layout_.bytes + param_layout_.offsets[k]));
  }
  for (size_t k = 0; k < running_stats_.size(); ++k)
    UCUDNN_RETURN_IF_ERROR(take(running_stats_[k].name, running_stats_[k], *stats_, stat_layout_.offsets[k]));
  steps_ = step->second.data<int64_t>()[0];
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("loading the training state"));
  return broadcast_state();
}

Status TrainerImpl::save(const std::string& onnx_path) const {
  UCUDNN_ASSIGN_OR_RETURN(auto w, weights());
  std::vector<onnx_import::InitializerSplit> splits;
  for (const training::UntiedUse& u : untied_) splits.push_back({u.node, u.input, u.initializer, u.untied});
  return onnx_import::save_model_with_initializers(model_path_, onnx_path, w, splits);
}

MemoryStats TrainerImpl::memory() const {
  const runtime::Plan& plan = train_->executor->plan();
  const size_t own = params_->bytes() + grads_->bytes() + states_->bytes() + stats_->bytes() + io_->bytes();
  return {plan.arena_bytes, plan.unplanned_bytes, train_->executor->weight_bytes() + own,
          plan.workspace_pool_bytes, runtime::largest_step_workspace(plan), train_->executor->kernel_bytes()};
}

}  // namespace

Expected<TrainableTensors> trainable_tensors(const std::string& model_path) {
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, onnx_import::load_model(model_path, onnx_import::ImportOptions{}));
  training::untie_shared_parameters(graph);
  const training::TrainableValues trainable = training::find_trainable_values(graph);
  return TrainableTensors{describe(graph, trainable.parameters), describe(graph, trainable.running_stats)};
}

Expected<std::unique_ptr<Trainer>> Trainer::load(const std::string& model_path, const TrainOptions& options) {
  return TrainerImpl::create(model_path, options);
}

}  // namespace ucudnn
