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
#include "tests/support/temp_dir.h"
#include "training/checkpoint.h"
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

// A fresh model's two BatchNorms start equal, and PyTorch's exporter writes the second one's
// parameters as Identities of the first's: they are still trained apart, like PyTorch does.
TEST(TrainerVsPyTorch, TinyTwoBnFreshMergedInitializers) {
  train_like_pytorch(source_dir() + "/tests/data/training/tiny_two_bn_fresh", ucudnn::Device::kCpu, {2e-5, 2e-4});
}

ucudnn::TrainOptions tiny_options() {
  ucudnn::TrainOptions options;
  options.session.device = ucudnn::Device::kCpu;
  options.session.batch = 4;
  options.session.progress = false;
  options.learning_rate = 0.05;
  options.momentum = 0.9;
  options.weight_decay = 1e-3;
  return options;
}

std::unique_ptr<ucudnn::Trainer> load_trainer(const std::string& model) {
  auto trainer = ucudnn::Trainer::load(model, tiny_options());
  EXPECT_TRUE(trainer.has_value()) << trainer.status().to_string();
  return trainer ? std::move(*trainer) : nullptr;
}

std::vector<Tensor> values_of(const std::map<std::string, Tensor>& m) {
  std::vector<Tensor> v;
  for (const auto& [name, t] : m) v.push_back(t);
  return v;
}

// Stopping after one step, writing a checkpoint file, and continuing in a new trainer gives the
// weights and optimizer state of three uninterrupted steps, bit for bit.
TEST(Trainer, ResumeFromACheckpointEqualsAnUninterruptedRun) {
  const std::string dir = source_dir() + "/tests/data/training/tiny_bn_cnn_sgd";
  const Tensor input = read(dir + "/input.npy");
  const Tensor labels = read(dir + "/labels.npy");
  auto straight = load_trainer(dir + "/model.onnx");
  ASSERT_NE(straight, nullptr);
  for (int s = 0; s < 3; ++s) ASSERT_TRUE(straight->step({input}, labels).has_value());

  TempDir tmp("ucudnn-trainer-resume");
  const std::string file = (tmp.path() / "last.ckpt").string();
  {
    auto first = load_trainer(dir + "/model.onnx");
    ASSERT_NE(first, nullptr);
    ASSERT_TRUE(first->step({input}, labels).has_value());
    ucudnn::training::Checkpoint ckpt;
    auto state = first->state();
    ASSERT_TRUE(state.has_value()) << state.status().to_string();
    ckpt.tensors = *state;
    ckpt.step = first->steps_done();
    ASSERT_TRUE(ucudnn::training::save_checkpoint(file, ckpt).is_ok());
  }
  auto resumed = load_trainer(dir + "/model.onnx");
  ASSERT_NE(resumed, nullptr);
  auto ckpt = ucudnn::training::load_checkpoint(file);
  ASSERT_TRUE(ckpt.has_value()) << ckpt.status().to_string();
  ASSERT_TRUE(resumed->load_state(ckpt->tensors).is_ok());
  EXPECT_EQ(resumed->steps_done(), 1);
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(resumed->step({input}, labels).has_value());
  auto want = straight->state();
  auto got = resumed->state();
  ASSERT_TRUE(want.has_value() && got.has_value());
  ASSERT_EQ(want->size(), got->size());
  expect_bitwise_equal(values_of(*got), values_of(*want), "state after 1 + 2 steps vs 3 steps");

  // A state of another model is refused before anything changes.
  auto other = load_trainer(source_dir() + "/tests/data/training/tiny_two_bn_fresh/model.onnx");
  ASSERT_NE(other, nullptr);
  const ucudnn::Status refused = other->load_state(ckpt->tensors);
  EXPECT_EQ(refused.code(), ucudnn::StatusCode::kInvalidArgument) << refused.to_string();
  EXPECT_EQ(other->steps_done(), 0);
}

// The saved ONNX model reloads as an inference session and computes what the trainer's evaluation
// computes with the trained weights (running statistics included); merged initializers come back
// as separate ones.
TEST(Trainer, SavedModelReloadsWithTheTrainedWeights) {
  for (const char* name : {"tiny_bn_cnn_sgd", "tiny_two_bn_fresh"}) {
    SCOPED_TRACE(name);
    const std::string dir = source_dir() + "/tests/data/training/" + name;
    const Tensor input = read(dir + "/input.npy");
    const Tensor labels = read(dir + "/labels.npy");
    auto trainer = load_trainer(dir + "/model.onnx");
    ASSERT_NE(trainer, nullptr);
    for (int s = 0; s < 2; ++s) ASSERT_TRUE(trainer->step({input}, labels).has_value());
    auto evaluated = trainer->evaluate({input});
    ASSERT_TRUE(evaluated.has_value()) << evaluated.status().to_string();

    TempDir tmp("ucudnn-trainer-save");
    const std::string saved = (tmp.path() / "trained.onnx").string();
    const ucudnn::Status status = trainer->save(saved);
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    ucudnn::SessionOptions options;
    options.device = ucudnn::Device::kCpu;
    options.batch = 4;
    options.progress = false;
    auto session = ucudnn::Session::load(saved, options);
    ASSERT_TRUE(session.has_value()) << session.status().to_string();
    auto outputs = (*session)->run({input});
    ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
    expect_close((*outputs)[0], (*evaluated)[0], {1e-5, 1e-4}, "saved model vs the trainer's evaluation");
    auto original = ucudnn::Session::load(dir + "/model.onnx", options);
    ASSERT_TRUE(original.has_value());
    auto before = (*original)->run({input});
    ASSERT_TRUE(before.has_value());
    EXPECT_NE(before->front().data<float>()[0], outputs->front().data<float>()[0]) << "the weights did not change";
  }
}

// Pinned threads are for inference (Note [pinned threads]): the data loaders' threads would inherit
// one CPU.
TEST(Trainer, RefusesPinnedThreads) {
  ucudnn::TrainOptions options = tiny_options();
  options.session.pin_threads = true;
  auto trainer = ucudnn::Trainer::load(source_dir() + "/tests/data/training/tiny_bn_cnn_sgd/model.onnx", options);
  ASSERT_FALSE(trainer.has_value());
  EXPECT_EQ(trainer.status().code(), ucudnn::StatusCode::kUnsupported);
  EXPECT_NE(trainer.status().message().find("pin_threads is for inference sessions"), std::string::npos)
      << trainer.status().to_string();
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
  for (const char* dir : {"tiny_bn_cnn_sgd", "tiny_bn_cnn_adamw", "tiny_two_bn_fresh"})
    train_like_pytorch(source_dir() + "/tests/data/training/" + dir, ucudnn::Device::kCuda, {1e-4, 1e-3});
}

// Batch k of a small run: the reference input scaled and its labels rotated, so that a step that
// trained on another batch than the one it was given would show in the losses.
struct SmallBatch {
  Tensor input, labels;
};
std::vector<SmallBatch> small_batches(const std::string& dir, int count, int64_t classes) {
  const Tensor input = read(dir + "/input.npy"), labels = read(dir + "/labels.npy");
  std::vector<SmallBatch> batches;
  for (int k = 0; k < count; ++k) {
    SmallBatch b{*input.clone(), *labels.clone()};
    for (int64_t i = 0; i < b.input.numel(); ++i) b.input.data<float>()[i] *= 1.0f + 0.25f * static_cast<float>(k);
    for (int64_t i = 0; i < b.labels.numel(); ++i)
      b.labels.data<int64_t>()[i] = (b.labels.data<int64_t>()[i] + k) % classes;
    batches.push_back(std::move(b));
  }
  return batches;
}

// "" when a CUDA backend runs here, else why not.
std::string why_no_gpu() {
  for (const BackendConfig& config : backend_configs())
    if (config.kind == BackendConfig::Kind::kCuda) {
      const SharedBackend shared = shared_backend(config);
      if (!shared.skip_reason.empty()) return shared.skip_reason;
      return shared.backend != nullptr ? "" : "no CUDA backend";
    }
  return "this build has no CUDA backend";
}

void expect_same_weights(ucudnn::Trainer& a, ucudnn::Trainer& b) {
  auto wa = a.weights(), wb = b.weights();
  ASSERT_TRUE(wa.has_value() && wb.has_value());
  ASSERT_EQ(wa->size(), wb->size());
  for (const auto& [name, t] : *wa) expect_close(t, wb->at(name), {0.0, 0.0}, "'" + name + "'");
}

// Note [overlapped batch copies]: stage() and step_staged() train on the same batches as step(),
// bit for bit, on every device present.
TEST(Trainer, StagedStepsEqualPlainSteps) {
  const std::string dir = source_dir() + "/tests/data/training/tiny_bn_cnn_sgd";
  std::vector<ucudnn::Device> devices = {ucudnn::Device::kCpu};
  if (why_no_gpu().empty()) devices.push_back(ucudnn::Device::kCuda);
  for (ucudnn::Device device : devices) {
    SCOPED_TRACE(ucudnn::device_name(device));
    ucudnn::TrainOptions options = tiny_options();
    options.session.device = device;
    auto plain = ucudnn::Trainer::load(dir + "/model.onnx", options);
    auto staged = ucudnn::Trainer::load(dir + "/model.onnx", options);
    ASSERT_TRUE(plain.has_value() && staged.has_value()) << plain.status().to_string();
    const int64_t classes = (*plain)->outputs()[0].shape[1];
    const std::vector<SmallBatch> batches = small_batches(dir, 4, classes);
    ASSERT_TRUE((*staged)->stage({batches[0].input}, batches[0].labels).is_ok());
    for (size_t k = 0; k < batches.size(); ++k) {
      auto want = (*plain)->step({batches[k].input}, batches[k].labels);
      auto got = k + 1 < batches.size() ? (*staged)->step_staged({batches[k + 1].input}, batches[k + 1].labels)
                                        : (*staged)->step_staged({}, {});
      ASSERT_TRUE(want.has_value()) << want.status().to_string();
      ASSERT_TRUE(got.has_value()) << got.status().to_string();
      EXPECT_EQ(got->loss, want->loss) << "step " << k + 1;
      EXPECT_EQ(got->correct, want->correct) << "step " << k + 1;
    }
    expect_same_weights(**plain, **staged);
    // Nothing is staged after the last step.
    auto again = (*staged)->step_staged({}, {});
    ASSERT_FALSE(again.has_value());
    EXPECT_EQ(again.status().code(), ucudnn::StatusCode::kInvalidArgument);
    EXPECT_NE(again.status().message().find("call stage() first"), std::string::npos) << again.status().to_string();
  }
}

// A next batch that fails the checks is refused before the step runs; the staged batch stays.
TEST(Trainer, StepStagedRefusesABadNextBatchBeforeRunning) {
  const std::string dir = source_dir() + "/tests/data/training/tiny_bn_cnn_sgd";
  auto trainer = load_trainer(dir + "/model.onnx");
  ASSERT_NE(trainer, nullptr);
  const std::vector<SmallBatch> batches = small_batches(dir, 1, trainer->outputs()[0].shape[1]);
  ASSERT_TRUE(trainer->stage({batches[0].input}, batches[0].labels).is_ok());
  Tensor bad_labels = *batches[0].labels.clone();
  bad_labels.data<int64_t>()[0] = 1000;
  auto refused = trainer->step_staged({batches[0].input}, bad_labels);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.status().code(), ucudnn::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("the next batch"), std::string::npos) << refused.status().to_string();
  EXPECT_EQ(trainer->steps_done(), 0);
  auto step = trainer->step_staged({}, {});
  ASSERT_TRUE(step.has_value()) << step.status().to_string();
  EXPECT_EQ(trainer->steps_done(), 1);
}

// The GPU's captured steps (SessionOptions::cuda_graph, Note [captured runs]) train exactly as eager ones.
TEST(TrainerOnGpu, CapturedStepsEqualEagerSteps) {
  if (const std::string why = why_no_gpu(); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = source_dir() + "/tests/data/training/tiny_bn_cnn_sgd";
  ucudnn::TrainOptions options = tiny_options();
  options.session.device = ucudnn::Device::kCuda;
  options.session.cuda_graph = ucudnn::CudaGraph::kOff;
  auto eager = ucudnn::Trainer::load(dir + "/model.onnx", options);
  options.session.cuda_graph = ucudnn::CudaGraph::kOn;
  auto captured = ucudnn::Trainer::load(dir + "/model.onnx", options);
  ASSERT_TRUE(eager.has_value() && captured.has_value()) << captured.status().to_string();
  const std::vector<SmallBatch> batches = small_batches(dir, 5, (*eager)->outputs()[0].shape[1]);
  for (size_t k = 0; k < batches.size(); ++k) {
    (*eager)->set_learning_rate(0.05 / static_cast<double>(k + 1));  // a schedule: no capture again
    (*captured)->set_learning_rate(0.05 / static_cast<double>(k + 1));
    auto want = (*eager)->step({batches[k].input}, batches[k].labels);
    auto got = (*captured)->step({batches[k].input}, batches[k].labels);
    ASSERT_TRUE(want.has_value() && got.has_value()) << got.status().to_string();
    EXPECT_EQ(got->loss, want->loss) << "step " << k + 1;
  }
  expect_same_weights(**eager, **captured);
}

// Channels-last training (docs/TRAINING.md): --layout nhwc on the GPU trains as NCHW does, within TF32's
// rounding, and its plan says so; the CPU trains NCHW only and refuses nhwc, saying why.
TEST(TrainerOnGpu, ChannelsLastStepsMatchNchwSteps) {
  const std::string dir = source_dir() + "/tests/data/training/tiny_bn_cnn_sgd";
  ucudnn::TrainOptions options = tiny_options();
  options.session.layout = ucudnn::Layout::kNhwc;
  auto on_cpu = ucudnn::Trainer::load(dir + "/model.onnx", options);
  ASSERT_FALSE(on_cpu.has_value());
  const std::string why_not = on_cpu.status().message();  // (a build without oneDNN refuses nhwc itself)
  EXPECT_TRUE(why_not.find("trains NCHW only") != std::string::npos ||
              why_not.find("which this build lacks") != std::string::npos)
      << on_cpu.status().to_string();

  if (const std::string why = why_no_gpu(); !why.empty()) GTEST_SKIP() << why;
  options.session.device = ucudnn::Device::kCuda;
  auto nhwc = ucudnn::Trainer::load(dir + "/model.onnx", options);
  options.session.layout = ucudnn::Layout::kNchw;
  auto nchw = ucudnn::Trainer::load(dir + "/model.onnx", options);
  ASSERT_TRUE(nhwc.has_value() && nchw.has_value()) << nhwc.status().to_string();
  EXPECT_NE((*nhwc)->plan_json().find("\"nhwc\""), std::string::npos);
  const std::vector<SmallBatch> batches = small_batches(dir, 3, (*nchw)->outputs()[0].shape[1]);
  for (size_t k = 0; k < batches.size(); ++k) {
    auto want = (*nchw)->step({batches[k].input}, batches[k].labels);
    auto got = (*nhwc)->step({batches[k].input}, batches[k].labels);
    ASSERT_TRUE(want.has_value() && got.has_value()) << got.status().to_string();
    EXPECT_NEAR(got->loss, want->loss, 2e-3 * (1 + std::abs(want->loss))) << "step " << k + 1;
  }
  auto wa = (*nchw)->weights(), wb = (*nhwc)->weights();
  ASSERT_TRUE(wa.has_value() && wb.has_value());
  for (const auto& [name, t] : *wa) expect_close(wb->at(name), t, {2e-3, 2e-2}, "'" + name + "'");
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
