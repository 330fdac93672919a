// Note [one run at a time] (include/ucudnn/ucudnn.h): several threads running one session each get
// their own outputs, bit for bit a serial run's; a Trainer refuses a call while another one runs.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/backend_runner.h"
#include "tests/support/tensor_checks.h"
#include "tests/test_paths.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn_test {
namespace {

using ucudnn::Tensor;

constexpr int kThreads = 4;
constexpr int kRunsPerThread = 40;

std::string tiny_cnn() { return source_dir() + "/models/tiny/tiny_cnn/model.onnx"; }

// The devices present: the CPU, and the GPU when this build and machine have one.
std::vector<ucudnn::Device> devices() {
  std::vector<ucudnn::Device> found = {ucudnn::Device::kCpu};
  for (const BackendConfig& config : backend_configs())
    if (config.kind == BackendConfig::Kind::kCuda && shared_backend(config).backend != nullptr) {
      found.push_back(ucudnn::Device::kCuda);
      break;
    }
  return found;
}

// Thread t's inputs: its own random values, so an answer computed from another thread's inputs shows.
std::vector<Tensor> inputs_of(const ucudnn::Session& session, int t) {
  std::mt19937 rng(1000 + t);
  std::vector<Tensor> inputs;
  for (const ucudnn::TensorInfo& info : session.inputs())
    inputs.push_back(make_random_tensor(info.dtype, info.shape, rng));
  return inputs;
}

// Runs kThreads threads × kRunsPerThread runs at once; returns the runs whose outputs differ from their
// thread's serial run (or failed).
int wrong_concurrent_runs(ucudnn::Session& session) {
  std::vector<std::vector<Tensor>> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(inputs_of(session, t));
    auto serial = session.run(inputs.back());
    EXPECT_TRUE(serial.has_value()) << serial.status().to_string();
    if (!serial) return kThreads * kRunsPerThread;
    expected.push_back(std::move(*serial));
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRunsPerThread; ++r) {
        auto got = session.run(inputs[t]);
        bool same = got.has_value() && got->size() == expected[t].size();
        for (size_t o = 0; same && o < got->size(); ++o)
          same = (*got)[o].nbytes() == expected[t][o].nbytes() &&
                 std::memcmp((*got)[o].raw(), expected[t][o].raw(), expected[t][o].nbytes()) == 0;
        if (!same) ++wrong;
      }
    });
  for (std::thread& thread : threads) thread.join();
  return wrong.load();
}

TEST(ConcurrentRuns, EveryCallerGetsItsOwnOutputs) {
  for (ucudnn::Device device : devices()) {
    // The whole batch; on the CPU also the batch in groups (Note [batch groups]): each has its own arena.
    for (int groups : device == ucudnn::Device::kCpu ? std::vector<int>{1, 2} : std::vector<int>{1}) {
      SCOPED_TRACE(std::string(ucudnn::device_name(device)) + ", batch groups " + std::to_string(groups));
      ucudnn::SessionOptions options;
      options.device = device;
      options.batch = 4;
      options.threads = 2;
      options.batch_groups = groups;
      options.progress = false;
      options.benchmark_db = ::testing::TempDir() + "ucudnn_concurrency_test.sqlite";
      auto session = ucudnn::Session::load(tiny_cnn(), options);
      ASSERT_TRUE(session.has_value()) << session.status().to_string();
      EXPECT_EQ(wrong_concurrent_runs(**session), 0);
    }
  }
}

// Two threads stepping one trainer: every call either trains or is refused as concurrent, and the
// trainer counts exactly the steps that trained.
TEST(ConcurrentRuns, ATrainerRefusesACallWhileAnotherRuns) {
  const std::string dir = source_dir() + "/tests/data/training/tiny_bn_cnn_sgd";
  ucudnn::TrainOptions options;
  options.session.batch = 4;
  options.session.progress = false;
  options.session.benchmark_db = ::testing::TempDir() + "ucudnn_concurrency_test.sqlite";
  auto trainer = ucudnn::Trainer::load(dir + "/model.onnx", options);
  ASSERT_TRUE(trainer.has_value()) << trainer.status().to_string();
  auto input = ucudnn::read_tensor_file(dir + "/input.npy");
  auto labels = ucudnn::read_tensor_file(dir + "/labels.npy");
  ASSERT_TRUE(input.has_value() && labels.has_value());
  std::atomic<int> trained{0}, refused{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      for (int s = 0; s < 20; ++s) {
        auto step = (*trainer)->step({*input}, *labels);
        if (step.has_value()) {
          ++trained;
        } else if (step.status().code() == ucudnn::StatusCode::kInvalidArgument &&
                   step.status().message().find("not thread-safe") != std::string::npos) {
          ++refused;
        } else {
          ++other;
        }
      }
    });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(trained.load() + refused.load(), 40);
  EXPECT_EQ((*trainer)->steps_done(), trained.load());
  EXPECT_GE(trained.load(), 1);
}

}  // namespace
}  // namespace ucudnn_test
