// TrainerEngine's buffers (trainer_engine.h): their layout and allocation, the binding lists the
// training step and the update run on (Executor::run_bound), and the copies in and out.
//
// Each buffer holds its tensors one after another, every one at a kAlignment boundary. The
// optimizer state buffer is state_count_ copies of the parameters' layout; `io_` holds the model
// inputs, the labels, the dropout seed, the loss and the logits; `hyper_` the learning rate and
// the step, kAlignment apart.
#include <algorithm>
#include <cstring>

#include "runtime/core/bytes.h"
#include "training/trainer_engine.h"

namespace ucudnn::training {

size_t TrainerEngine::BufferLayout::add(size_t nbytes) {
  offsets.push_back(bytes);
  bytes = align_up(bytes + nbytes, kAlignment);
  return offsets.back();
}

size_t TrainerEngine::value_bytes(const ir::Graph& g, ir::ValueId id) {
  return static_cast<size_t>(shape_numel(g.value(id).shape)) * dtype_size(g.value(id).dtype);
}

Status TrainerEngine::allocate_buffers() {
  const ir::Graph& g = layout_.graph;
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
  return Status::ok();
}

size_t TrainerEngine::own_bytes() const {
  return params_->bytes() + grads_->bytes() + states_->bytes() + stats_->bytes() + io_->bytes();
}

Status TrainerEngine::upload(runtime::Buffer& buffer, size_t offset, const Tensor& t, const std::string& what) {
  return backend_->copy_to_device(at(buffer, offset), t.raw(), t.nbytes(), what);
}

Expected<Tensor> TrainerEngine::queue_download(const runtime::Buffer& buffer, size_t offset, DType dtype,
                                               const Shape& shape, const std::string& what) const {
  UCUDNN_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate_uninitialized(dtype, shape));
  UCUDNN_RETURN_IF_ERROR(backend_->copy_to_host(t.raw(), at(buffer, offset), t.nbytes(), what));
  return t;
}

Status TrainerEngine::upload_initial_values(const ir::Graph& inference) {
  // Optimizer state starts at zero; so do the gaps between parameters in every parameter-sized buffer
  // (Note [one update for all parameters], update_graph.h).
  const size_t largest = std::max({params_->bytes(), grads_->bytes(), states_->bytes()});
  UCUDNN_ASSIGN_OR_RETURN(Tensor zeros, Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(largest)}));
  for (runtime::Buffer* buffer : {params_.get(), grads_.get(), states_.get()})
    if (buffer->bytes() > 0)
      UCUDNN_RETURN_IF_ERROR(backend_->copy_to_device(buffer->data(), zeros.raw(), buffer->bytes(), "zeroing a buffer"));
  // The training graph is a copy of `inference`: its parameters' value ids are the initializers'.
  for (size_t k = 0; k < layout_.parameters.size(); ++k)
    UCUDNN_RETURN_IF_ERROR(upload(*params_, param_layout_.offsets[k], *inference.value(layout_.parameters[k]).constant,
                                  "parameter '" + parameter(k).name + "'"));
  for (size_t k = 0; k < layout_.running_stats.size(); ++k)
    UCUDNN_RETURN_IF_ERROR(upload(*stats_, stat_layout_.offsets[k], *inference.value(layout_.running_stats[k]).constant,
                                  "running statistic '" + running_stat(k).name + "'"));
  return backend_->synchronize("uploading the initial weights");
}

Status TrainerEngine::check_inputs(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != layout_.model_inputs)
    return invalid_argument("the model takes " + std::to_string(layout_.model_inputs) + " inputs, got " +
                            std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& input = model_input(i);
    if (inputs[i].dtype() != input.dtype || inputs[i].shape() != input.shape)
      return invalid_argument("input '" + input.name + "' must be " + dtype_name(input.dtype) +
                              shape_to_string(input.shape) + " (the training batch), got " + inputs[i].describe());
  }
  return Status::ok();
}

Status TrainerEngine::check_batch(const std::vector<Tensor>& inputs, const Tensor& labels) const {
  UCUDNN_RETURN_IF_ERROR(check_inputs(inputs));
  const ir::Graph& g = layout_.graph;
  const Shape& label_shape = g.value(layout_.labels).shape;
  if (labels.dtype() != DType::kInt64 || labels.shape() != label_shape)
    return invalid_argument("labels must be int64" + shape_to_string(label_shape) + ", got " + labels.describe());
  const int64_t classes = g.value(g.outputs[layout_.logits_output]).shape[1];
  for (int64_t i = 0; i < labels.numel(); ++i)
    if (labels.data<int64_t>()[i] < 0 || labels.data<int64_t>()[i] >= classes)
      return invalid_argument("label " + std::to_string(labels.data<int64_t>()[i]) + " of sample " +
                              std::to_string(i) + " is outside the model's " + std::to_string(classes) + " classes");
  return Status::ok();
}

Status TrainerEngine::copy_inputs_in(const std::vector<Tensor>& inputs) {
  UCUDNN_RETURN_IF_ERROR(check_inputs(inputs));
  for (size_t i = 0; i < inputs.size(); ++i)
    UCUDNN_RETURN_IF_ERROR(upload(*io_, io_layout_.offsets[i], inputs[i], "input '" + model_input(i).name + "'"));
  return Status::ok();
}

Status TrainerEngine::queue_staging(const std::vector<Tensor>& inputs, const Tensor& labels) {
  if (staging_ == nullptr) {
    // io_'s layout up to and including the labels, so one device copy moves the batch into place.
    const size_t bytes = io_layout_.offsets[labels_slot_] + labels.nbytes();
    UCUDNN_ASSIGN_OR_RETURN(staging_, backend_->allocate(bytes, "the staged batch"));
    UCUDNN_ASSIGN_OR_RETURN(staged_, backend_->create_event());
    UCUDNN_ASSIGN_OR_RETURN(consumed_, backend_->create_event());
    UCUDNN_RETURN_IF_ERROR(backend_->record(*consumed_, 0));  // staging_ is free from the start
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    UCUDNN_RETURN_IF_ERROR(backend_->copy_to_device_beside(at(*staging_, io_layout_.offsets[i]), inputs[i].raw(),
                                                           inputs[i].nbytes(), *consumed_, *staged_,
                                                           "input '" + model_input(i).name + "'"));
  UCUDNN_RETURN_IF_ERROR(backend_->copy_to_device_beside(at(*staging_, io_layout_.offsets[labels_slot_]), labels.raw(),
                                                         labels.nbytes(), *consumed_, *staged_, "labels"));
  UCUDNN_ASSIGN_OR_RETURN(staged_labels_, Tensor::allocate_uninitialized(DType::kInt64, labels.shape()));
  std::memcpy(staged_labels_.raw(), labels.raw(), labels.nbytes());
  has_staged_ = true;
  return Status::ok();
}

void TrainerEngine::add_weight_pointers(std::vector<const void*>* in) const {
  for (size_t k = 0; k < layout_.parameters.size(); ++k) in->push_back(at(*params_, param_layout_.offsets[k]));
  for (size_t k = 0; k < layout_.running_stats.size(); ++k) in->push_back(at(*stats_, stat_layout_.offsets[k]));
}

std::vector<const void*> TrainerEngine::train_inputs() const {
  std::vector<const void*> in;
  for (size_t i = 0; i < layout_.model_inputs; ++i) in.push_back(at(*io_, io_layout_.offsets[i]));
  in.push_back(at(*io_, io_layout_.offsets[labels_slot_]));
  if (layout_.dropout_seed != ir::kNoValue) in.push_back(at(*io_, io_layout_.offsets[seed_slot_]));
  add_weight_pointers(&in);
  return in;
}

std::vector<void*> TrainerEngine::train_outputs() const {
  std::vector<void*> out;
  out.push_back(at(*io_, io_layout_.offsets[loss_slot_]));
  out.push_back(at(*io_, io_layout_.offsets[logits_slot_]));
  for (size_t k = 0; k < layout_.parameters.size(); ++k) out.push_back(at(*grads_, param_layout_.offsets[k]));
  for (size_t k = 0; k < layout_.running_stats.size(); ++k) out.push_back(at(*stats_, stat_layout_.offsets[k]));
  return out;
}

void TrainerEngine::bind_buffers() {
  train_in_ = train_inputs();
  train_out_ = train_outputs();
  // Note [one update for all parameters] (update_graph.h): the whole buffers, in place.
  update_in_ = {at(*hyper_, 0), at(*hyper_, kAlignment), params_->data(), grads_->data()};
  update_out_ = {params_->data()};
  for (int s = 0; s < state_count_; ++s) {
    std::byte* state = at(*states_, static_cast<size_t>(s) * param_layout_.bytes);
    update_in_.push_back(state);
    update_out_.push_back(state);
  }
}

}  // namespace ucudnn::training
