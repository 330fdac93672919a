// The CUDA training kernels' host-side sizing (no GPU needed): the blocks a per-channel or reduction sum
// is split across and the workspaces that follow. The planner reserves a step's workspace from shapes
// alone (cuda_step_workspace); a kernel asking for more than that fails the step, so the bounds must
// hold for every shape.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/cuda/batch_norm_train_kernels.h"
#include "runtime/cuda/pooling_grad_kernels.h"
#include "runtime/cuda/reduce_kernels.h"

namespace {

namespace cuda = ucudnn::cuda;
using ucudnn::ReduceKind;

const std::vector<int64_t> kSizes = {1, 2, 3, 7, 31, 32, 33, 64, 127, 128, 129, 1000, 2047, 2048, 2049, 4096, 4097,
                                     65536, int64_t{1} << 20, int64_t{256} * 112 * 112, int64_t{1} << 31};

// Split reductions: outputs · parts stays within the bound the planner reserves, whatever the sizes;
// only the kinds whose contributions add are split, and only long boxes with few outputs.
TEST(CudaKernelSizes, SplitReductionsStayWithinTheReservedWorkspace) {
  for (ReduceKind kind : {ReduceKind::kSum, ReduceKind::kMean, ReduceKind::kMax, ReduceKind::kProd,
                          ReduceKind::kL2, ReduceKind::kLogSumExp}) {
    const bool adds = kind != ReduceKind::kMax && kind != ReduceKind::kProd && kind != ReduceKind::kLogSumExp;
    for (int64_t outputs : kSizes)
      for (int64_t count : kSizes) {
        const int64_t parts = cuda::reduce_parts(kind, outputs, count);
        ASSERT_GE(parts, 1);
        EXPECT_LE(parts == 1 ? 0 : outputs * parts, cuda::kReduceSplitBlocks) << outputs << " × " << count;
        EXPECT_LE(cuda::reduce_workspace_bytes(kind, outputs, count), cuda::kReduceWorkspaceBound);
        if (!adds) {
          EXPECT_EQ(parts, 1) << "kind " << static_cast<int>(kind);
        }
      }
  }
  // A convolution bias's gradient: 64 channels over 256·112·112 values are split; 4096 outputs are not.
  EXPECT_GT(cuda::reduce_parts(ReduceKind::kSum, 64, int64_t{256} * 112 * 112), 1);
  EXPECT_EQ(cuda::reduce_parts(ReduceKind::kSum, 4096, int64_t{256} * 112 * 112), 1);
  EXPECT_EQ(cuda::reduce_parts(ReduceKind::kSum, 1, 100), 1);  // a short box: one thread an output
}

// Batch-norm sums: at least one part, few enough blocks for a grid's y dimension, in both layouts, and a
// workspace with room for every part's two double sums a channel.
TEST(CudaKernelSizes, BatchNormPartsFitTheGrid) {
  for (bool channels_last : {false, true})
    for (int64_t batch : {int64_t{1}, int64_t{2}, int64_t{256}})
      for (int64_t channels : {int64_t{1}, int64_t{3}, int64_t{64}, int64_t{2048}, int64_t{5000}})
        for (int64_t inner : {int64_t{1}, int64_t{49}, int64_t{112} * 112}) {
          const int64_t parts = cuda::batch_norm_parts(batch, channels, inner, channels_last);
          ASSERT_GE(parts, 1);
          EXPECT_LE(parts, 65535);
          cuda::BatchNormShape s{batch, channels, inner, parts, channels_last};
          EXPECT_GE(cuda::batch_norm_workspace_bytes(s), static_cast<size_t>(channels * parts * 2) * sizeof(double));
        }
}

// MaxPoolGrad's window choices: one byte a dY element, and none where the one-pass form does not apply.
TEST(CudaKernelSizes, MaxPoolChoicesAreOneByteAWindow) {
  cuda::PoolGeometry g;
  g.rank = 2;
  g.batch = 256;
  g.channels = 64;
  for (int d = 0; d < 2; ++d) {
    g.input[d] = 112;
    g.output[d] = 56;
    g.kernel[d] = 3;
    g.stride[d] = 2;
    g.dilation[d] = 1;
    g.pad_begin[d] = g.pad_end[d] = 1;
  }
  EXPECT_EQ(cuda::max_pool_choice_bytes(g), size_t{256} * 64 * 56 * 56);
  g.channels_last = true;
  EXPECT_EQ(cuda::max_pool_choice_bytes(g), size_t{256} * 64 * 56 * 56);
  g.dilation[0] = 2;
  EXPECT_EQ(cuda::max_pool_choice_bytes(g), 0u) << "dilation: the recomputing gather";
  g.dilation[0] = 1;
  g.kernel[0] = g.kernel[1] = 16;  // 256 taps: more than a byte can name
  EXPECT_EQ(cuda::max_pool_choice_bytes(g), 0u);
}

}  // namespace
