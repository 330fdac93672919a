// TrainerEngine (trainer_engine.h): building and planning the three graphs, the training step
// and the evaluation. The buffers and their binding are in trainer_binding.cc, the training
// state in trainer_state.cc, the work of several ranks in trainer_data_parallel.cc.
#include "training/trainer_engine.h"

#include <algorithm>
#include <chrono>

#include "runtime/plan/plan_json.h"

namespace ucudnn::training {

namespace {

// Runs `executor` on bound buffers, or profiles it into `profile` (names prefixed by `prefix`).
Status run_or_profile(runtime::Executor& executor, const std::vector<const void*>& in, const std::vector<void*>& out,
                      std::vector<NodeTime>* profile, const std::string& prefix) {
  if (profile == nullptr) return executor.run_bound(in, out);
  UCUDNN_ASSIGN_OR_RETURN(std::vector<runtime::StepTiming> timings, executor.profile_bound(in, out));
  for (const runtime::StepTiming& t : timings)
    if (t.node >= 0) profile->push_back({prefix + t.name, runtime::step_op_name(t), t.ms});
  return Status::ok();
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Expected<std::unique_ptr<TrainerEngine>> TrainerEngine::create(std::unique_ptr<runtime::Backend> backend,
                                                               ir::Graph inference, TrainerConfig config) {
  std::unique_ptr<TrainerEngine> t(new TrainerEngine(std::move(backend), std::move(config)));
  UCUDNN_RETURN_IF_ERROR(t->build(std::move(inference)));
  return t;
}

Expected<std::unique_ptr<TrainerEngine::Planned>> TrainerEngine::plan_and_prepare(ir::Graph graph) const {
  UCUDNN_RETURN_IF_ERROR(backend_->check_support(graph));
  optimizer::PlanRequest request = config_.plan;
  // The session's layouts where the backend trains channels-last (docs/TRAINING.md), else NCHW.
  if (!backend_->capabilities().trains_channels_last()) {
    if (request.layouts == std::vector<optimizer::GraphLayout>{optimizer::GraphLayout::kNhwc})
      return unsupported(std::string("layout nhwc: the ") + backend_->name() +
                         " trains NCHW only (its batch-norm and pooling gradients run NCHW); use layout nchw or auto");
    request.layouts = {optimizer::GraphLayout::kNchw};
  }
  request.training_step = true;     // NHWC rewrites the training ops too
  request.planner.io_bound = true;  // parameters, gradients and batches are the trainer's own buffers
  request.planner.residual_in_place = false;  // training graphs have no Conv with a residual input
  UCUDNN_ASSIGN_OR_RETURN(optimizer::PlannedModel planned, optimizer::plan_model(graph, request));
  auto p = std::make_unique<Planned>();
  p->graph = std::move(planned.graph);
  p->predicted_conv_ms = planned.result.plan.predicted_conv_ms;
  // The executor keeps a reference to the graph: it lives in `p`, which the engine keeps.
  // Note [data-parallel step]: a data-parallel step starts all-reduces between its kernels, eagerly.
  const runtime::CaptureMode capture = data_parallel() ? runtime::CaptureMode::kOff : config_.capture;
  UCUDNN_ASSIGN_OR_RETURN(p->executor,
                          runtime::Executor::create(*backend_, p->graph, std::move(planned.result.plan), capture));
  return p;
}

Status TrainerEngine::build(ir::Graph inference) {
  TrainingGraphOptions graph_options;
  graph_options.label_smoothing = config_.label_smoothing;
  graph_options.fuse_batch_norm = backend_->capabilities().trains_fused_batch_norm();
  UCUDNN_ASSIGN_OR_RETURN(layout_, build_training_graph(inference, graph_options));
  UCUDNN_ASSIGN_OR_RETURN(eval_source_, build_evaluation_graph(inference));

  // Note [data-parallel step]: rank 0 plans first, benchmarking what the database lacks; the
  // others then plan from the same timings (never measuring again) — one writer to the database,
  // and identical plans, which check_plans_agree verifies.
  if (data_parallel() && comm_->rank() != 0) {
    UCUDNN_RETURN_IF_ERROR(comm_->barrier().with_context("waiting for rank 0 to plan"));
    config_.plan.rebenchmark = false;
  }
  UCUDNN_ASSIGN_OR_RETURN(train_, plan_and_prepare(layout_.graph));
  if (data_parallel() && comm_->rank() == 0)
    UCUDNN_RETURN_IF_ERROR(comm_->barrier().with_context("letting the other ranks plan"));
  if (data_parallel()) UCUDNN_RETURN_IF_ERROR(check_plans_agree());

  optimizer_ = config_.optimizer.describe();
  state_count_ = config_.optimizer.states();
  UCUDNN_RETURN_IF_ERROR(allocate_buffers());
  // Note [one update for all parameters] (update_graph.h): one node over the parameter buffer.
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph update, build_update_graph(static_cast<int64_t>(param_layout_.bytes / sizeof(float)),
                                                               config_.optimizer));
  UCUDNN_ASSIGN_OR_RETURN(update_, plan_and_prepare(std::move(update)));
  UCUDNN_ASSIGN_OR_RETURN(buckets_, distributed::plan_gradient_buckets(param_layout_.offsets, param_layout_.bytes,
                                                                        config_.bucket_bytes));
  bind_buffers();
  if (data_parallel()) plan_overlap();
  UCUDNN_RETURN_IF_ERROR(upload_initial_values(inference));
  return broadcast_state();
}

std::string TrainerEngine::plan_json() const { return runtime::plan_to_json(train_->executor->plan(), train_->graph); }

Expected<StepResult> TrainerEngine::step(const std::vector<Tensor>& inputs, const Tensor& labels,
                                         std::vector<NodeTime>* profile) {
  UCUDNN_RETURN_IF_ERROR(check_batch(inputs, labels));
  const auto started = std::chrono::steady_clock::now();
  UCUDNN_RETURN_IF_ERROR(copy_inputs_in(inputs));
  UCUDNN_RETURN_IF_ERROR(upload(*io_, io_layout_.offsets[labels_slot_], labels, "labels"));
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the batch to the device"));
  return run_step(labels, nullptr, nullptr, profile, started);
}

Status TrainerEngine::stage(const std::vector<Tensor>& inputs, const Tensor& labels) {
  UCUDNN_RETURN_IF_ERROR(check_batch(inputs, labels));
  UCUDNN_RETURN_IF_ERROR(queue_staging(inputs, labels));
  return backend_->synchronize("copying the batch to the device");
}

Expected<StepResult> TrainerEngine::step_staged(const std::vector<Tensor>& next_inputs, const Tensor& next_labels) {
  if (!has_staged_)
    return invalid_argument("no batch is staged for this step: call stage() first (and again after a failed step)");
  const bool has_next = !next_inputs.empty();
  if (has_next) UCUDNN_RETURN_IF_ERROR(check_batch(next_inputs, next_labels).with_context("the next batch"));
  const auto started = std::chrono::steady_clock::now();
  has_staged_ = false;
  const Tensor labels = std::move(staged_labels_);
  UCUDNN_RETURN_IF_ERROR(backend_->wait(0, *staged_));
  UCUDNN_RETURN_IF_ERROR(
      backend_->copy_on_device(io_->data(), staging_->data(), staging_->bytes(), "the staged batch"));
  UCUDNN_RETURN_IF_ERROR(backend_->record(*consumed_, 0));
  return run_step(labels, has_next ? &next_inputs : nullptr, has_next ? &next_labels : nullptr, nullptr, started);
}

Expected<StepResult> TrainerEngine::run_step(const Tensor& labels, const std::vector<Tensor>* next_inputs,
                                             const Tensor* next_labels, std::vector<NodeTime>* profile,
                                             std::chrono::steady_clock::time_point started) {
  const ir::Graph& g = layout_.graph;
  const int64_t classes = g.value(g.outputs[layout_.logits_output]).shape[1];
  StepResult result;
  if (data_parallel()) bucket_started_.assign(buckets_.size(), false);  // after a failed step too
  const uint64_t rank_offset = static_cast<uint64_t>(rank()) << 32;  // each rank its own dropout masks
  const int64_t seed = static_cast<int64_t>(config_.seed + static_cast<uint64_t>(steps_) + rank_offset);
  UCUDNN_RETURN_IF_ERROR(backend_->copy_to_device(at(*io_, io_layout_.offsets[seed_slot_]), &seed, sizeof(seed),
                                                  "dropout seed"));
  result.upload_ms = ms_since(started);
  const auto compute_start = std::chrono::steady_clock::now();
  if (profile != nullptr) {
    UCUDNN_RETURN_IF_ERROR(run_or_profile(*train_->executor, train_in_, train_out_, profile, ""));
  } else if (data_parallel()) {  // Note [data-parallel step]: the gradients must be written before averaging
    UCUDNN_RETURN_IF_ERROR(train_->executor->run_bound(train_in_, train_out_));
  } else {
    UCUDNN_RETURN_IF_ERROR(train_->executor->queue_bound(train_in_, train_out_));
  }
  if (data_parallel()) {
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
  if (profile != nullptr)
    UCUDNN_RETURN_IF_ERROR(run_or_profile(*update_->executor, update_in_, update_out_, profile, "update/"));
  else
    UCUDNN_RETURN_IF_ERROR(update_->executor->queue_bound(update_in_, update_out_));
  if (next_inputs != nullptr) UCUDNN_RETURN_IF_ERROR(queue_staging(*next_inputs, *next_labels));

  UCUDNN_ASSIGN_OR_RETURN(Tensor loss,
                          queue_download(*io_, io_layout_.offsets[loss_slot_], DType::kFloat32, {}, "loss"));
  const Shape& logits_shape = g.value(g.outputs[layout_.logits_output]).shape;
  UCUDNN_ASSIGN_OR_RETURN(Tensor logits,
                          queue_download(*io_, io_layout_.offsets[logits_slot_], DType::kFloat32, logits_shape,
                                         "logits"));
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("running the training step"));
  result.compute_ms = ms_since(compute_start);
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

Expected<std::vector<Tensor>> TrainerEngine::evaluate(const std::vector<Tensor>& inputs) {
  if (eval_ == nullptr) {
    UCUDNN_ASSIGN_OR_RETURN(eval_, plan_and_prepare(eval_source_));
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

}  // namespace ucudnn::training
