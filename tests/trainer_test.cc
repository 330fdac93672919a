// The Trainer (include/ucudnn/ucudnn.h) against PyTorch: the same model, initial weights, batch
// and hyperparameters (scripts/training_reference.py wrote them, and the losses and every
// initializer after the last step, into a directory). Loss per step and every updated
// parameter and running statistic must match within float tolerance.
//
// Directories: the committed tiny_bn_cnn ones (tests/data/training/), and the one named by
// UCUDNN_TRAINING_REFERENCE when set (the `models` label makes ResNet-18's at test time).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "tests/support/backend_runner.h"
#include "tests/support/tensor_checks.h"
#include "tests/test_paths.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn_test {
namespace {

using ucudnn::Tensor;

std::map<std::string, std::string> read_config(const std::string& dir) {
  std::map<std::string, std::string> config;
  std::ifstream in(dir + "/config.txt");
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) config[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return config;
}

Tensor read(const std::string& path) {
  auto t = ucudnn::read_tensor_file(path);
  EXPECT_TRUE(t.has_value()) << t.status().to_string();
  return t ? std::move(*t) : Tensor();
}

void train_like_pytorch(const std::string& dir, ucudnn::Device device, Tolerance tolerance) {
  SCOPED_TRACE("reference " + dir);
  std::map<std::string, std::string> config = read_config(dir);
  ASSERT_FALSE(config.empty()) << "no " << dir << "/config.txt";
  ucudnn::TrainOptions options;
  options.session.device = device;
  options.session.math = ucudnn::Math::kFp32;
  options.session.batch = std::stoll(config["batch"]);
  options.session.progress = false;
  options.optimizer = config["optimizer"] == "adamw" ? ucudnn::Optimizer::kAdamW : ucudnn::Optimizer::kSgd;
  options.learning_rate = std::stod(config["lr"]);
  options.weight_decay = std::stod(config["weight_decay"]);
  if (options.optimizer == ucudnn::Optimizer::kSgd) options.momentum = std::stod(config["momentum"]);
  auto trainer = ucudnn::Trainer::load(dir + "/model.onnx", options);
  ASSERT_TRUE(trainer.has_value()) << trainer.status().to_string();

  const Tensor input = read(dir + "/input.npy");
  const Tensor labels = read(dir + "/labels.npy");
  const Tensor losses = read(dir + "/losses.npy");
  for (int64_t s = 0; s < losses.numel(); ++s) {
    auto step = (*trainer)->step({input}, labels);
    ASSERT_TRUE(step.has_value()) << step.status().to_string();
    const double want = losses.data<float>()[s];
    EXPECT_NEAR(step->loss, want, tolerance.atol + tolerance.rtol * std::abs(want)) << "loss of step " << s + 1;
  }
  EXPECT_EQ((*trainer)->steps_done(), losses.numel());

  auto weights = (*trainer)->weights();
  ASSERT_TRUE(weights.has_value()) << weights.status().to_string();
  int compared = 0;
  for (const auto& [name, got] : *weights) {
    const Tensor want = read(dir + "/after/" + name + ".npy");
    expect_close(got, want, tolerance, "'" + name + "' after " + std::to_string(losses.numel()) + " steps");
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

TEST(TrainerVsPyTorch, TinyBnCnnSgdMomentumWeightDecay) {
  train_like_pytorch(source_dir() + "/tests/data/training/tiny_bn_cnn_sgd", ucudnn::Device::kCpu, {2e-5, 2e-4});
}

TEST(TrainerVsPyTorch, TinyBnCnnAdamW) {
  train_like_pytorch(source_dir() + "/tests/data/training/tiny_bn_cnn_adamw", ucudnn::Device::kCpu, {2e-5, 2e-4});
}

// The GPU trains like PyTorch too (strict FP32: cuDNN's algorithms still reassociate sums).
TEST(TrainerVsPyTorch, TinyBnCnnOnGpu) {
  bool any_gpu = false;
  for (const BackendConfig& config : backend_configs())
    if (config.kind == BackendConfig::Kind::kCuda) {
      const SharedBackend shared = shared_backend(config);
      if (!shared.skip_reason.empty()) GTEST_SKIP() << shared.skip_reason;
      any_gpu = shared.backend != nullptr;
      break;
    }
  if (!any_gpu) GTEST_SKIP() << "this build has no CUDA backend";
  for (const char* dir : {"tiny_bn_cnn_sgd", "tiny_bn_cnn_adamw"})
    train_like_pytorch(source_dir() + "/tests/data/training/" + dir, ucudnn::Device::kCuda, {1e-4, 1e-3});
}

TEST(TrainerVsPyTorch, ReferenceFromEnvironment) {
  const char* dir = std::getenv("UCUDNN_TRAINING_REFERENCE");
  if (dir == nullptr) GTEST_SKIP() << "UCUDNN_TRAINING_REFERENCE not set (the models-labelled test sets it)";
  const char* device = std::getenv("UCUDNN_TRAINING_DEVICE");  // "cuda" on the GPU machine
  train_like_pytorch(dir, device && std::string(device) == "cuda" ? ucudnn::Device::kCuda : ucudnn::Device::kCpu,
                     {1e-4, 1e-3});
}

}  // namespace
}  // namespace ucudnn_test
