// Trainer::load and trainable_tensors (include/ucudnn/ucudnn.h, docs/TRAINING.md): the public
// Trainer wired onto training::TrainerEngine (training/trainer_engine.h), which builds, plans and
// runs the training step, the evaluation and the optimizer update. Here: TrainOptions checked and
// translated (the session's plan request, the optimizer), the backend, the model imported, its
// shared initializers untied — and saving the trained model, which re-splits them.
#include <mutex>
#include <string>

#include "api/device.h"
#include "api/loading.h"
#include "onnx_import/onnx_import.h"
#include "training/distributed/communicator.h"
#include "training/trainer_engine.h"
#include "training/training_graph.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

namespace {

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

training::TrainerConfig trainer_config(const TrainOptions& o) {
  training::TrainerConfig c;
  c.plan = plan_request(o.session);
  // The session's layout: the engine keeps NCHW where the backend trains only that (docs/TRAINING.md).
  c.optimizer = optimizer_config(o);
  c.learning_rate = o.learning_rate;
  c.label_smoothing = o.label_smoothing;
  c.seed = o.seed;
  c.communicator = o.communicator;
  c.bucket_bytes = o.bucket_bytes;
  // Captured steps unless cuda_graph is off (docs/TRAINING.md, "The step a user waits for").
  c.capture = capture_mode(o.session.cuda_graph);
  return c;
}

// Note [one run at a time] (include/ucudnn/ucudnn.h): a Trainer refuses a call while another is running.
// `calls` is held for the duration of the call; a second thread finds it taken.
class OneCall {
 public:
  OneCall(std::mutex& calls, const char* what) : lock_(calls, std::try_to_lock), what_(what) {}
  Status status() const {
    if (lock_.owns_lock()) return Status::ok();
    return invalid_argument(std::string("Trainer::") + what_ + " was called while another call on this trainer is "
                            "running: a Trainer is not thread-safe (use one trainer per thread)");
  }

 private:
  std::unique_lock<std::mutex> lock_;
  const char* what_;
};

class TrainerImpl final : public Trainer {
 public:
  static Expected<std::unique_ptr<Trainer>> create(const std::string& model_path, const TrainOptions& options) {
    UCUDNN_RETURN_IF_ERROR(check_train_options(options));
    UCUDNN_RETURN_IF_ERROR(apply_cpu_thread_options(options.session));
    std::unique_ptr<TrainerImpl> t(new TrainerImpl(model_path));
    UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Backend> backend,
                            make_backend(options.session.device, options.session.math));
    onnx_import::ImportOptions import;
    import.input_shapes = options.session.input_shapes;
    import.constant_inputs = options.session.constant_inputs;
    import.batch = options.session.batch;
    UCUDNN_ASSIGN_OR_RETURN(ir::Graph inference, onnx_import::load_model(model_path, import));
    t->untied_ = training::untie_shared_parameters(inference);
    UCUDNN_ASSIGN_OR_RETURN(t->engine_, training::TrainerEngine::create(std::move(backend), std::move(inference),
                                                                        trainer_config(options)));
    const training::TrainingGraph& layout = t->engine_->training_graph();
    const ir::Graph& g = layout.graph;
    t->inputs_ = describe_values(g, std::vector<ir::ValueId>(g.inputs.begin(), g.inputs.begin() + layout.model_inputs));
    t->outputs_ = describe_values(t->engine_->evaluation_graph(), t->engine_->evaluation_graph().outputs);
    t->parameters_ = describe_values(g, layout.parameters);
    t->running_stats_ = describe_values(g, layout.running_stats);
    return std::unique_ptr<Trainer>(std::move(t));
  }

  const std::vector<TensorInfo>& inputs() const override { return inputs_; }
  const std::vector<TensorInfo>& outputs() const override { return outputs_; }
  const std::vector<TensorInfo>& parameters() const override { return parameters_; }
  const std::vector<TensorInfo>& running_stats() const override { return running_stats_; }
  Expected<TrainStepResult> step(const std::vector<Tensor>& inputs, const Tensor& labels) override {
    const OneCall call(calls_, "step");
    UCUDNN_RETURN_IF_ERROR(call.status());
    UCUDNN_ASSIGN_OR_RETURN(training::StepResult r, engine_->step(inputs, labels, nullptr));
    return TrainStepResult{r.loss, r.correct, r.upload_ms, r.compute_ms, r.all_reduce_ms};
  }
  Status stage(const std::vector<Tensor>& inputs, const Tensor& labels) override {
    const OneCall call(calls_, "stage");
    UCUDNN_RETURN_IF_ERROR(call.status());
    return engine_->stage(inputs, labels);
  }
  Expected<TrainStepResult> step_staged(const std::vector<Tensor>& next_inputs, const Tensor& next_labels) override {
    const OneCall call(calls_, "step_staged");
    UCUDNN_RETURN_IF_ERROR(call.status());
    UCUDNN_ASSIGN_OR_RETURN(training::StepResult r, engine_->step_staged(next_inputs, next_labels));
    return TrainStepResult{r.loss, r.correct, r.upload_ms, r.compute_ms, r.all_reduce_ms};
  }
  Expected<std::vector<StepProfile>> profile_step(const std::vector<Tensor>& inputs, const Tensor& labels) override {
    const OneCall call(calls_, "profile_step");
    UCUDNN_RETURN_IF_ERROR(call.status());
    std::vector<training::NodeTime> times;
    UCUDNN_RETURN_IF_ERROR(engine_->step(inputs, labels, &times).status());
    std::vector<StepProfile> profile;
    for (training::NodeTime& t : times) profile.push_back({std::move(t.node), std::move(t.op), t.ms});
    return profile;
  }
  Expected<std::vector<Tensor>> evaluate(const std::vector<Tensor>& inputs) override {
    const OneCall call(calls_, "evaluate");
    UCUDNN_RETURN_IF_ERROR(call.status());
    return engine_->evaluate(inputs);
  }
  std::string optimizer() const override { return engine_->optimizer(); }
  void set_learning_rate(double lr) override { engine_->set_learning_rate(lr); }
  double learning_rate() const override { return engine_->learning_rate(); }
  int64_t steps_done() const override { return engine_->steps_done(); }
  Expected<std::map<std::string, Tensor>> weights() const override { return engine_->weights(); }
  Expected<std::map<std::string, Tensor>> state() const override { return engine_->state(); }
  Status load_state(const std::map<std::string, Tensor>& state) override {
    const OneCall call(calls_, "load_state");
    UCUDNN_RETURN_IF_ERROR(call.status());
    return engine_->load_state(state);
  }
  Status save(const std::string& onnx_path) const override {
    UCUDNN_ASSIGN_OR_RETURN(auto w, engine_->weights());
    std::vector<onnx_import::InitializerSplit> splits;
    for (const training::UntiedUse& u : untied_) splits.push_back({u.node, u.input, u.initializer, u.untied});
    return onnx_import::save_model_with_initializers(model_path_, onnx_path, w, splits);
  }
  // The training step's plan, with the engine's own buffers as weights.
  MemoryStats memory() const override {
    const runtime::Executor& executor = engine_->train_executor();
    const runtime::Plan& plan = executor.plan();
    return {plan.arena_bytes, plan.unplanned_bytes, executor.weight_bytes() + engine_->own_bytes(),
            plan.workspace_pool_bytes, runtime::largest_step_workspace(plan), executor.kernel_bytes()};
  }
  std::string plan_json() const override { return engine_->plan_json(); }
  double predicted_conv_ms() const override { return engine_->predicted_conv_ms(); }
  int rank() const override { return engine_->rank(); }
  int world_size() const override { return engine_->world_size(); }
  Expected<double> replica_difference() override { return engine_->replica_difference(); }

 private:
  explicit TrainerImpl(std::string model_path) : model_path_(std::move(model_path)) {}

  std::string model_path_;
  std::unique_ptr<training::TrainerEngine> engine_;
  std::vector<TensorInfo> inputs_, outputs_, parameters_, running_stats_;
  std::vector<training::UntiedUse> untied_;  // initializers the exporter merged, trained apart
  std::mutex calls_;  // held by the call running now (OneCall)
};

}  // namespace

Expected<TrainableTensors> trainable_tensors(const std::string& model_path) {
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, onnx_import::load_model(model_path, onnx_import::ImportOptions{}));
  training::untie_shared_parameters(graph);
  const training::TrainableValues trainable = training::find_trainable_values(graph);
  return TrainableTensors{describe_values(graph, trainable.parameters),
                          describe_values(graph, trainable.running_stats)};
}

Expected<std::unique_ptr<Trainer>> Trainer::load(const std::string& model_path, const TrainOptions& options) {
  return TrainerImpl::create(model_path, options);
}

}  // namespace ucudnn
