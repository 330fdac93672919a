// Trainer::load and the one Trainer there is (include/ucudnn/ucudnn.h, docs/TRAINING.md).
//
// Three graphs, each planned by optimizer::plan_model and run by its own runtime::Executor
// over one backend: the training step (training/training_graph.h), the evaluation forward
// and the optimizer update (training/update_graph.h). The trainer owns the memory that
// outlives a step, one allocation each — parameters, gradients, optimizer state, running
// statistics, and the step's inputs and outputs (`io`) — and binds it to the graphs' inputs
// and outputs with Executor::run_bound: a parameter is the same bytes as input of the
// training step, of the evaluation and of the update (input and output: in place).
#include <algorithm>
#include <chrono>
#include <cstring>

#include "api/device.h"
#include "api/loading.h"
#include "onnx_import/onnx_import.h"
#include "runtime/core/bytes.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/executor/executor.h"
#include "runtime/executor/plan_json.h"
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
  return Status::ok();
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

 private:
  TrainerImpl(std::string model_path, TrainOptions options)
      : model_path_(std::move(model_path)), options_(std::move(options)), learning_rate_(options_.learning_rate) {}

  Status build(ir::Graph inference);
  // One step; with `profile`, every node of the step and of the update timed into it.
  Expected<TrainStepResult> run_step(const std::vector<Tensor>& inputs, const Tensor& labels,
                                     std::vector<StepProfile>* profile);
  Status upload_initial_values(const ir::Graph& inference);
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
  cpu::set_num_threads(options.session.threads);
  std::unique_ptr<TrainerImpl> t(new TrainerImpl(model_path, options));
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

  UCUDNN_ASSIGN_OR_RETURN(train_, plan_and_prepare(*backend_, layout_.graph, options_.session));

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
  bind_buffers();
  return upload_initial_values(inference);
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
  const auto upload_start = std::chrono::steady_clock::now();
  UCUDNN_RETURN_IF_ERROR(copy_inputs_in(inputs));
  UCUDNN_RETURN_IF_ERROR(upload(*io_, io_layout_.offsets[labels_slot_], labels, "labels"));
  const int64_t seed = static_cast<int64_t>(options_.seed + static_cast<uint64_t>(steps_));
  UCUDNN_RETURN_IF_ERROR(backend_->copy_to_device(at(*io_, io_layout_.offsets[seed_slot_]), &seed, sizeof(seed),
                                                  "dropout seed"));
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the batch to the device"));
  result.upload_ms = ms_since(upload_start);
  const auto compute_start = std::chrono::steady_clock::now();
  UCUDNN_RETURN_IF_ERROR(run_or_profile(*train_->executor, train_in_, train_out_, profile, ""));

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
  return backend_->synchronize("loading the training state");
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
          plan.workspace_pool_bytes};
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
