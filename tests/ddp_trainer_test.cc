// The Trainer on the data-parallel path with one rank (TrainOptions::communicator): on the CPU with
// SingleRankCommunicator, and on the GPU with NCCL (a world of one; skipped without a GPU or NCCL),
// it must train exactly as without a communicator — same losses, same weights, against PyTorch's
// (tests/data/training) — and NCCL's collectives must work on device memory. Several ranks are
// tests/ddp/ddp_cpu_test.py's (mpirun) and the GPU commands in docs/TRAINING.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/test_paths.h"
#include "training/distributed/communicator.h"
#include "training/distributed/connect.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {
namespace {

std::string reference_dir() { return ucudnn_test::source_dir() + "/tests/data/training/tiny_bn_cnn_sgd"; }

Tensor read(const std::string& path) {
  auto t = read_tensor_file(path);
  EXPECT_TRUE(t.has_value()) << t.status().to_string();
  return t ? std::move(*t) : Tensor();
}

TrainOptions sgd_options(Device device) {  // tests/data/training/tiny_bn_cnn_sgd/config.txt
  TrainOptions options;
  options.session.device = device;
  options.session.math = Math::kFp32;
  options.session.batch = 4;
  options.session.progress = false;
  options.learning_rate = 0.1;
  options.momentum = 0.9;
  options.weight_decay = 0.001;
  return options;
}

// Three steps with and without `communicator`: the same losses and weights (to `tolerance`, relative:
// cuDNN's backward algorithms may sum in a different order from run to run), and PyTorch's losses.
void expect_same_training(Device device, std::shared_ptr<distributed::Communicator> communicator, double tolerance) {
  const std::string dir = reference_dir();
  TrainOptions plain = sgd_options(device), parallel = sgd_options(device);
  parallel.communicator = communicator;
  parallel.bucket_bytes = 256;  // several buckets even for this small model
  auto a = Trainer::load(dir + "/model.onnx", plain);
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  auto b = Trainer::load(dir + "/model.onnx", parallel);
  ASSERT_TRUE(b.has_value()) << b.status().to_string();
  EXPECT_EQ((*b)->world_size(), 1);
  EXPECT_EQ((*b)->rank(), 0);
  const Tensor input = read(dir + "/input.npy"), labels = read(dir + "/labels.npy"), losses = read(dir + "/losses.npy");
  for (int64_t s = 0; s < losses.numel(); ++s) {
    auto x = (*a)->step({input}, labels);
    auto y = (*b)->step({input}, labels);
    ASSERT_TRUE(x.has_value()) << x.status().to_string();
    ASSERT_TRUE(y.has_value()) << y.status().to_string();
    EXPECT_NEAR(y->loss, x->loss, tolerance * std::abs(x->loss)) << "step " << s + 1;
    EXPECT_EQ(y->correct, x->correct);
    EXPECT_NEAR(y->loss, losses.data<float>()[s], 1e-4 + 1e-4 * std::abs(losses.data<float>()[s]));
  }
  auto wa = (*a)->weights();
  auto wb = (*b)->weights();
  ASSERT_TRUE(wa.has_value() && wb.has_value());
  ASSERT_EQ(wa->size(), wb->size());
  for (const auto& [name, t] : *wa) {
    const Tensor& u = wb->at(name);
    ASSERT_EQ(t.numel(), u.numel());
    for (int64_t i = 0; i < t.numel(); ++i) {
      const float want = t.data<float>()[i];
      ASSERT_NEAR(u.data<float>()[i], want, tolerance * (1 + std::abs(want))) << name << "[" << i << "]";
    }
  }
  auto difference = (*b)->replica_difference();
  ASSERT_TRUE(difference.has_value()) << difference.status().to_string();
  EXPECT_EQ(*difference, 0.0);
}

TEST(DataParallelTrainer, OneCpuRankTrainsAsOneProcess) {
  expect_same_training(Device::kCpu, std::make_shared<distributed::SingleRankCommunicator>(), 1e-6);
}

TEST(DataParallelTrainer, RefusesACommunicatorOfTheWrongMemory) {
  TrainOptions options = sgd_options(Device::kCpu);
  options.communicator = std::make_shared<distributed::SingleRankCommunicator>(/*device_memory=*/true);
  auto trainer = Trainer::load(reference_dir() + "/model.onnx", options);
  ASSERT_FALSE(trainer.has_value());
  EXPECT_NE(trainer.status().message().find("reduces GPU memory, but training runs on the cpu"), std::string::npos)
      << trainer.status().message();
}

// NCCL with one rank on GPU 0 (what `ucudnn train --gpus 1` runs); skipped without a GPU or NCCL.
std::shared_ptr<distributed::Communicator> nccl_or_skip() {
  if (!distributed::have_nccl() || distributed::gpu_count() == 0) return nullptr;
  auto comm = distributed::connect_world(distributed::World{}, /*gpu=*/true);
  EXPECT_TRUE(comm.has_value()) << comm.status().to_string();
  return comm ? *comm : nullptr;
}

TEST(NcclOneRank, CollectivesOnDeviceMemory) {
  auto comm = nccl_or_skip();
  if (comm == nullptr) GTEST_SKIP() << "no GPU or no NCCL in this build";
  EXPECT_STREQ(comm->name(), "nccl");
  EXPECT_TRUE(comm->device_memory());
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "0");
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f};
  auto host = Tensor::from_floats({5}, values);
  auto gpu = GpuTensor::upload(host);
  ASSERT_TRUE(gpu.has_value()) << gpu.status().to_string();
  for (auto op : {distributed::ReduceOp::kAverage, distributed::ReduceOp::kSum, distributed::ReduceOp::kMax})
    ASSERT_TRUE(comm->all_reduce(static_cast<float*>(gpu->data()), 5, op).is_ok());
  ASSERT_TRUE(comm->broadcast(gpu->data(), gpu->nbytes(), 0).is_ok());
  auto back = gpu->download();
  ASSERT_TRUE(back.has_value());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(back->data<float>()[i], values[i]);
  double sums[2] = {2.5, -1};
  ASSERT_TRUE(comm->all_reduce_host(sums, 2, distributed::ReduceOp::kSum).is_ok());
  EXPECT_EQ(sums[0], 2.5);
  EXPECT_EQ(sums[1], -1.0);
  EXPECT_TRUE(comm->barrier().is_ok());
  EXPECT_FALSE(comm->broadcast(gpu->data(), 4, 1).is_ok());  // no rank 1
}

TEST(NcclOneRank, TrainsAsOneProcessOnTheGpu) {
  auto comm = nccl_or_skip();
  if (comm == nullptr) GTEST_SKIP() << "no GPU or no NCCL in this build";
  expect_same_training(Device::kCuda, comm, 1e-5);
}

}  // namespace
}  // namespace ucudnn
