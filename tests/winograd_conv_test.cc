// The CPU's Winograd F(4×4, 3×3) convolution (runtime/cpu/winograd_conv.h) against oneDNN's direct
// convolution on the same channels-last problem (kOnednnPlain), on what the op table's small cases
// do not reach: channels past one vector run and not a multiple of it, output sizes that cut the last
// 4×4 tiles, unequal pads, several chunks of tiles (Note [Winograd chunks]), every activation, a
// residual z beside Y and in Y itself, tiles in per-thread blocks (Note [Winograd tile blocks]),
// constant weights at a new address (Note [Winograd weights]),
// an empty micro-batch; and where it does not apply. Skipped in a build without oneDNN.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/winograd_conv.h"
#include "tests/support/tensor_checks.h"

namespace {

using ucudnn::DType;
using ucudnn::Tensor;
namespace cpu = ucudnn::cpu;
using Kind = ucudnn::ir::ConvActivationKind;

constexpr int kWinograd = static_cast<int>(cpu::CpuConvAlgorithm::kWinograd4x3);
constexpr int kDirect = static_cast<int>(cpu::CpuConvAlgorithm::kOnednnPlain);

// A channels-last 3×3 stride-1 problem; the bottom and right pads follow from the output size.
cpu::ConvProblem problem(int64_t n, int64_t c, int64_t h, int64_t w, int64_t m, int64_t pad_top, int64_t pad_left,
                         int64_t out_h, int64_t out_w) {
  cpu::ConvProblem p;
  p.batch = n;
  p.in_channels = c;
  p.in_h = h;
  p.in_w = w;
  p.out_channels = m;
  p.kernel_h = p.kernel_w = 3;
  p.pad_top = pad_top;
  p.pad_left = pad_left;
  p.out_h = out_h;
  p.out_w = out_w;
  p.channels_last = true;
  return p;
}

struct Tensors {
  Tensor x, w, bias, z;
};

Tensors random_tensors(const cpu::ConvProblem& p, uint32_t seed) {
  std::mt19937 random(seed);
  auto make = [&](ucudnn::Shape shape) { return ucudnn_test::make_random_tensor(DType::kFloat32, shape, random); };
  return {make({p.batch, p.in_h, p.in_w, p.in_channels}), make({p.out_channels, 3, 3, p.in_channels}),
          make({p.out_channels}), make({p.batch, p.out_h, p.out_w, p.out_channels})};
}

// Y of `algorithm` with the epilogue; with `z_in_y` Y holds z first and the call adds to it.
Tensor run(const cpu::ConvProblem& p, int algorithm, const cpu::ConvEpilogue& epilogue, const Tensors& t,
           bool weights_constant = false, bool z_in_y = false) {
  std::unique_ptr<cpu::PreparedConv> conv = cpu::prepare_conv(p, algorithm, epilogue, weights_constant);
  EXPECT_NE(conv, nullptr) << cpu::cpu_conv_algorithm_name(algorithm);
  Tensor y = t.z.clone().value();
  if (conv == nullptr) return y;
  EXPECT_LE(conv->workspace_bytes(), cpu::conv_workspace_bytes(p, algorithm));
  std::vector<std::byte> workspace(conv->workspace_bytes());
  const float* z = z_in_y ? y.data<float>() : t.z.data<float>();
  conv->run(t.x.data<float>(), t.w.data<float>(), t.bias.data<float>(), z, y.data<float>(), workspace.data());
  return y;
}

// Winograd's rounding error scales with the magnitudes in the sums, not with each output: within
// 1e-4 of Y's largest magnitude (about 3e-5 of it measured on 256 channels), or 1e-4 relative.
void expect_close_to_scale(const Tensor& got, const Tensor& want, const std::string& what) {
  float scale = 0;
  for (int64_t i = 0; i < want.numel(); ++i) scale = std::max(scale, std::abs(want.data<float>()[i]));
  ucudnn_test::expect_close(got, want, {1e-4 * scale, 1e-4}, what);
}

void expect_matches_direct(const cpu::ConvProblem& p, const cpu::ConvEpilogue& epilogue, const std::string& what,
                           bool z_in_y = false) {
  ASSERT_TRUE(cpu::conv_algorithm_applies(p, kWinograd)) << what;
  const Tensors t = random_tensors(p, 7);
  const Tensor want = run(p, kDirect, epilogue, t, false, z_in_y);
  const Tensor got = run(p, kWinograd, epilogue, t, false, z_in_y);
  expect_close_to_scale(got, want, what);
}

// Sets OpenMP's thread count for a scope, as a session's --threads would.
class ScopedThreads {
 public:
  explicit ScopedThreads(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~ScopedThreads() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

class WinogradConv : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu::cpu_conv_algorithm_available(kWinograd)) GTEST_SKIP() << "built without oneDNN (UCUDNN_ONEDNN=OFF)";
  }
};

TEST_F(WinogradConv, ChannelsNotAMultipleOfTheRunAndCutTiles) {
  // C 20 and M 24 (one run and a part), 7×9 in, 7×8 out: the last tiles hang over both edges.
  const cpu::ConvProblem p = problem(3, 20, 7, 9, 24, 1, 0, 7, 8);
  expect_matches_direct(p, {.bias = true, .residual = true, .activation = {Kind::kRelu}}, "C 20, M 24, cut tiles");
}

TEST_F(WinogradConv, SeveralChunksOfTiles) {
  // 256 + 256 channels make a chunk of about 113 tiles; 48×48 out has 144.
  const cpu::ConvProblem p = problem(1, 256, 48, 48, 256, 1, 1, 48, 48);
  expect_matches_direct(p, {.bias = true, .activation = {Kind::kRelu}}, "two chunks");
}

TEST_F(WinogradConv, ChunksAcrossSamplesAndSeveralGemmBlocks) {
  // 5 samples of 9×9 tiles in 3 chunks of 135 (each crosses a sample), each GEMM in 2 row blocks
  // (128 + 7 tiles) and 2 column blocks (256 + 16 filters). Filters of 2.8 MB keep it in chunks at
  // any thread count (Note [Winograd tile blocks]).
  const cpu::ConvProblem p = problem(5, 72, 34, 34, 272, 1, 1, 34, 34);
  ASSERT_EQ(cpu::winograd::tiles_per_block(p, 8), 0);
  expect_matches_direct(p, {.bias = true, .residual = true, .activation = {Kind::kRelu}}, "GEMM blocks");
}

TEST_F(WinogradConv, TileBlocksPerThread) {
  // Note [Winograd tile blocks]: C 60 + M 68 make blocks of 56 tiles (1 MiB); 2 samples of 15×15 tiles
  // (59×58 out, the last ones cut) are 450: at 4 threads 8 whole blocks and one of 2 tiles.
  const ScopedThreads threads(4);
  const cpu::ConvProblem p = problem(2, 60, 59, 58, 68, 1, 1, 59, 58);
  ASSERT_EQ(cpu::winograd::tiles_per_block(p, 4), 56);
  expect_matches_direct(p, {.bias = true, .residual = true, .activation = {Kind::kRelu}}, "tile blocks");
  expect_matches_direct(p, {.bias = true, .residual = true, .activation = {Kind::kSiLU}}, "tile blocks, z in Y", true);
  // Called from inside a parallel region its own region has one thread, which takes every block.
  const Tensors t = random_tensors(p, 7);
  const cpu::ConvEpilogue epilogue{.bias = true, .activation = {Kind::kRelu}};
  const Tensor want = run(p, kDirect, epilogue, t);
  Tensor got;
#pragma omp parallel num_threads(2)
#pragma omp single
  got = run(p, kWinograd, epilogue, t);
  expect_close_to_scale(got, want, "tile blocks in a nested region");
}

TEST_F(WinogradConv, TilesPerBlockChoice) {
  // Filters over 2.5 MiB (C·M = 512·512) stream through every block.
  EXPECT_EQ(cpu::winograd::tiles_per_block(problem(16, 512, 7, 7, 512, 1, 1, 7, 7), 8), 0);
  // 196 tiles are fewer than two blocks of 24 for each of 8 threads.
  EXPECT_EQ(cpu::winograd::tiles_per_block(problem(1, 64, 56, 56, 64, 1, 1, 56, 56), 8), 0);
  // Blocks of fewer than 16 tiles make thin GEMMs: 1 MiB holds 7 tiles of 16 + 1024 channels.
  EXPECT_EQ(cpu::winograd::tiles_per_block(problem(16, 16, 56, 56, 1024, 1, 1, 56, 56), 8), 0);
  // One thread moves nothing between cores.
  EXPECT_EQ(cpu::winograd::tiles_per_block(problem(16, 64, 56, 56, 64, 1, 1, 56, 56), 1), 0);
  EXPECT_EQ(cpu::winograd::tiles_per_block(problem(16, 64, 56, 56, 64, 1, 1, 56, 56), 8), 56);
}

TEST_F(WinogradConv, EveryActivation) {
  const cpu::ConvProblem p = problem(2, 16, 10, 6, 32, 1, 1, 10, 6);
  for (Kind kind : {Kind::kIdentity, Kind::kRelu, Kind::kSiLU, Kind::kHardSwish, Kind::kSigmoid, Kind::kClip}) {
    const ucudnn::ir::ConvActivation activation{kind, -0.5f, 0.75f};
    expect_matches_direct(p, {.bias = true, .residual = true, .activation = activation},
                          "activation " + std::to_string(static_cast<int>(kind)));
  }
}

TEST_F(WinogradConv, ResidualAlreadyInY) {
  const cpu::ConvProblem p = problem(2, 32, 9, 9, 32, 1, 1, 9, 9);
  expect_matches_direct(p, {.bias = true, .residual = true, .activation = {Kind::kRelu}}, "z in Y", true);
}

TEST_F(WinogradConv, NoPaddingShrinksTheOutput) {
  const cpu::ConvProblem p = problem(1, 8, 11, 13, 8, 0, 0, 9, 11);
  expect_matches_direct(p, {}, "no padding");
}

TEST_F(WinogradConv, ConstantWeightsAtAnotherAddressAreSeen) {
  const cpu::ConvProblem p = problem(1, 16, 8, 8, 16, 1, 1, 8, 8);
  const Tensors first = random_tensors(p, 1), second = random_tensors(p, 2);
  std::unique_ptr<cpu::PreparedConv> conv = cpu::prepare_conv(p, kWinograd, {}, /*weights_constant=*/true);
  ASSERT_NE(conv, nullptr);
  std::vector<std::byte> workspace(conv->workspace_bytes());
  Tensor y = first.z.clone().value();
  Tensors mixed{first.x.clone().value(), second.w.clone().value(), first.bias.clone().value(), first.z.clone().value()};
  conv->run(first.x.data<float>(), first.w.data<float>(), nullptr, nullptr, y.data<float>(), workspace.data());
  expect_close_to_scale(y, run(p, kDirect, {}, first), "first weights");
  conv->run(first.x.data<float>(), mixed.w.data<float>(), nullptr, nullptr, y.data<float>(), workspace.data());
  expect_close_to_scale(y, run(p, kDirect, {}, mixed), "weights at another address");
  // The object holds the transformed weights (36 points × C × M floats, reported as kept): less
  // workspace than the query, which covers W changing; a convolution whose W changes keeps none.
  EXPECT_EQ(conv->kept().bytes, size_t{36} * 16 * 16 * sizeof(float));
  EXPECT_LT(conv->workspace_bytes(), cpu::conv_workspace_bytes(p, kWinograd));
  EXPECT_EQ(cpu::prepare_conv(p, kWinograd, {}, /*weights_constant=*/false)->kept().id, nullptr);
}

// Two micro-batches of one convolution (two prepared objects, as the executor makes them) hold one copy
// of the transformed filters between them, which outlives the call that made it; W values that differ
// only in two signs (a pair an FNV hash of whole words could not tell apart) get their own.
TEST_F(WinogradConv, MicroBatchesShareTheTransformedFilters) {
  const cpu::ConvProblem p = problem(1, 16, 8, 8, 32, 1, 1, 8, 8);
  const Tensors t = random_tensors(p, 3);
  Tensors flipped{t.x.clone().value(), t.w.clone().value(), t.bias.clone().value(), t.z.clone().value()};
  flipped.w.data<float>()[1] = -flipped.w.data<float>()[1];
  flipped.w.data<float>()[3] = -flipped.w.data<float>()[3];
  std::vector<std::unique_ptr<cpu::PreparedConv>> calls;
  for (int i = 0; i < 3; ++i) calls.push_back(cpu::prepare_conv(p, kWinograd, {}, /*weights_constant=*/true));
  std::vector<std::byte> workspace(calls[0]->workspace_bytes());
  auto run_call = [&](cpu::PreparedConv& call, const Tensors& with) {
    Tensor y = with.z.clone().value();
    call.run(with.x.data<float>(), with.w.data<float>(), nullptr, nullptr, y.data<float>(), workspace.data());
    return y;
  };
  run_call(*calls[0], t);
  run_call(*calls[2], flipped);
  const Tensor direct = run(p, kDirect, {}, t), direct_flipped = run(p, kDirect, {}, flipped);
  expect_close_to_scale(run_call(*calls[1], t), direct, "the call that found the copy");
  EXPECT_EQ(calls[0]->kept().id, calls[1]->kept().id);
  EXPECT_EQ(calls[1]->kept().bytes, size_t{36} * 16 * 32 * sizeof(float));
  EXPECT_NE(calls[2]->kept().id, calls[0]->kept().id);
  expect_close_to_scale(run_call(*calls[2], flipped), direct_flipped, "W with two signs flipped");
  calls[0].reset();  // the maker goes; the copy stays with the other holder
  expect_close_to_scale(run_call(*calls[1], t), direct, "after the call that made the copy is gone");
}

TEST_F(WinogradConv, EmptyMicroBatchRunsNothing) {
  const cpu::ConvProblem p = problem(0, 16, 8, 8, 16, 1, 1, 8, 8);
  EXPECT_TRUE(cpu::conv_algorithm_applies(p, kWinograd));
  EXPECT_EQ(cpu::conv_workspace_bytes(p, kWinograd), 0u);
  for (const bool constant : {false, true}) {
    std::unique_ptr<cpu::PreparedConv> conv = cpu::prepare_conv(p, kWinograd, {}, constant);
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->workspace_bytes(), 0u) << "weights constant: " << constant;
    EXPECT_EQ(conv->kept().bytes, 0u);
    conv->run(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);  // nothing to read or write
  }
}

TEST_F(WinogradConv, AppliesOnlyTo3x3Stride1UngroupedChannelsLast) {
  const cpu::ConvProblem base = problem(1, 16, 8, 8, 16, 1, 1, 8, 8);
  ASSERT_TRUE(cpu::conv_algorithm_applies(base, kWinograd));
  cpu::ConvProblem nchw = base, strided = base, grouped = base, dilated = base, five = base;
  nchw.channels_last = false;
  strided.stride_h = 2;
  strided.out_h = 4;
  grouped.group = 2;
  dilated.dilation_w = 2;
  dilated.out_w = 6;
  five.kernel_h = five.kernel_w = 5;
  five.out_h = five.out_w = 6;
  for (const cpu::ConvProblem& p : {nchw, strided, grouped, dilated, five}) {
    EXPECT_FALSE(cpu::conv_algorithm_applies(p, kWinograd));
    EXPECT_EQ(cpu::conv_workspace_bytes(p, kWinograd), SIZE_MAX);
    EXPECT_EQ(cpu::prepare_conv(p, kWinograd, {}, true), nullptr);
  }
}

}  // namespace
