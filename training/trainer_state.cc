// TrainerEngine's state (trainer_engine.h): the trained weights, and everything a run needs to
// continue exactly — the weights, the optimizer state and the step — as host tensors by name,
// and loading them back.
//
// Names beyond the weights' ONNX names: "optimizer/<state>/<parameter>" (SGD: momentum_buffer;
// AdamW: m, v) and "trainer/step" (int64[1]).
#include <span>

#include "training/trainer_engine.h"

namespace ucudnn::training {

namespace {

std::string state_name(int s, int count, const std::string& parameter) {
  const char* name = count == 1 ? "momentum_buffer" : (s == 0 ? "m" : "v");
  return std::string("optimizer/") + name + "/" + parameter;
}

}  // namespace

Expected<std::map<std::string, Tensor>> TrainerEngine::weights() const {
  std::map<std::string, Tensor> w;
  for (size_t k = 0; k < layout_.parameters.size(); ++k) {
    UCUDNN_ASSIGN_OR_RETURN(w[parameter(k).name], queue_download(*params_, param_layout_.offsets[k],
                                                                 DType::kFloat32, parameter(k).shape, "parameter"));
  }
  for (size_t k = 0; k < layout_.running_stats.size(); ++k) {
    UCUDNN_ASSIGN_OR_RETURN(w[running_stat(k).name],
                            queue_download(*stats_, stat_layout_.offsets[k], DType::kFloat32, running_stat(k).shape,
                                           "running statistic"));
  }
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the weights to the host"));
  return w;
}

Expected<std::map<std::string, Tensor>> TrainerEngine::state() const {
  UCUDNN_ASSIGN_OR_RETURN(auto all, weights());
  for (int s = 0; s < state_count_; ++s)
    for (size_t k = 0; k < layout_.parameters.size(); ++k) {
      UCUDNN_ASSIGN_OR_RETURN(
          all[state_name(s, state_count_, parameter(k).name)],
          queue_download(*states_, static_cast<size_t>(s) * param_layout_.bytes + param_layout_.offsets[k],
                         DType::kFloat32, parameter(k).shape, "optimizer state"));
    }
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("copying the optimizer state to the host"));
  const int64_t step = steps_;
  all["trainer/step"] = Tensor::from_int64s({1}, std::span<const int64_t>(&step, 1));
  return all;
}

Status TrainerEngine::load_state(const std::map<std::string, Tensor>& state) {
  auto take = [&](const std::string& name, const ir::Value& info, runtime::Buffer& buffer, size_t offset) -> Status {
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
  for (size_t k = 0; k < layout_.parameters.size(); ++k) {
    for (int s = -1; s < state_count_; ++s) {
      const std::string name = s < 0 ? parameter(k).name : state_name(s, state_count_, parameter(k).name);
      auto it = state.find(name);
      if (it == state.end() || it->second.dtype() != DType::kFloat32 || it->second.shape() != parameter(k).shape)
        return invalid_argument("the training state's '" + name + "' is missing or not float32" +
                                shape_to_string(parameter(k).shape) + " (saved with another model or optimizer?)");
    }
  }
  for (size_t k = 0; k < layout_.parameters.size(); ++k) {
    UCUDNN_RETURN_IF_ERROR(take(parameter(k).name, parameter(k), *params_, param_layout_.offsets[k]));
    for (int s = 0; s < state_count_; ++s)
      UCUDNN_RETURN_IF_ERROR(take(state_name(s, state_count_, parameter(k).name), parameter(k), *states_,
                                  static_cast<size_t>(s) * param_layout_.bytes + param_layout_.offsets[k]));
  }
  for (size_t k = 0; k < layout_.running_stats.size(); ++k)
    UCUDNN_RETURN_IF_ERROR(take(running_stat(k).name, running_stat(k), *stats_, stat_layout_.offsets[k]));
  steps_ = step->second.data<int64_t>()[0];
  UCUDNN_RETURN_IF_ERROR(backend_->synchronize("loading the training state"));
  return broadcast_state();
}

}  // namespace ucudnn::training
