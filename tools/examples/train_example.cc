// The smallest application that trains with ucudnn (docs/TRAINING.md): load a model, train it
// for a few SGD steps on one fixed batch (the model must learn to fit it, so the loss falls),
// evaluate it, save it. The batch is made up here: an application feeds its own data.
//
//   train_example MODEL OUT.onnx [STEPS]
#include <cstdio>
#include <cstdlib>

#include "ucudnn/ucudnn.h"

namespace {

ucudnn::Status train(const char* model, const char* out, int steps) {
  ucudnn::TrainOptions options;
  options.session.device = ucudnn::Device::kCpu;  // or kCuda
  options.session.batch = 8;  // binds a symbolic batch dim; a model exported with a fixed batch keeps it
  options.learning_rate = 0.05;
  options.momentum = 0.9;
  UCUDNN_ASSIGN_OR_RETURN(auto trainer, ucudnn::Trainer::load(model, options));

  // A batch: input values from a simple formula, labels 0, 1, 2, ... (mod the classes).
  const ucudnn::TensorInfo& input = trainer->inputs().front();
  const int64_t classes = trainer->outputs().front().shape.back();
  UCUDNN_ASSIGN_OR_RETURN(ucudnn::Tensor x, ucudnn::Tensor::allocate(input.dtype, input.shape));
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 13) / 6.0f - 1.0f;
  UCUDNN_ASSIGN_OR_RETURN(ucudnn::Tensor labels, ucudnn::Tensor::allocate(ucudnn::DType::kInt64, {input.shape[0]}));
  for (int64_t i = 0; i < labels.numel(); ++i) labels.data<int64_t>()[i] = i % classes;

  float first = 0, last = 0;
  for (int s = 0; s < steps; ++s) {
    UCUDNN_ASSIGN_OR_RETURN(ucudnn::TrainStepResult step, trainer->step({x}, labels));
    if (s == 0) first = step.loss;
    last = step.loss;
    std::printf("step %d: loss %.4f, %lld of %lld right\n", s + 1, step.loss, static_cast<long long>(step.correct),
                static_cast<long long>(labels.numel()));
  }
  UCUDNN_ASSIGN_OR_RETURN(std::vector<ucudnn::Tensor> logits, trainer->evaluate({x}));
  std::printf("evaluated: logits %s\n", logits.front().describe().c_str());
  UCUDNN_RETURN_IF_ERROR(trainer->save(out));
  std::printf("saved %s\n", out);
  if (!(last < first)) return ucudnn::internal_error("the loss did not fall on a batch the model can fit");
  return ucudnn::Status::ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: train_example MODEL OUT.onnx [STEPS]\n");
    return 2;
  }
  const ucudnn::Status status = train(argv[1], argv[2], argc > 3 ? std::atoi(argv[3]) : 20);
  if (!status.is_ok()) {
    std::fprintf(stderr, "train_example: %s\n", status.to_string().c_str());
    return 1;
  }
  return 0;
}
