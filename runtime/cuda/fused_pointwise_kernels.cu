// FusedPointwise's CUDA launchers (see fused_pointwise_kernels.h) and the interpreter's kernels: the
// bodies of fused_pointwise_device.cuh with device::Interpreted, which runs any program. A generated
// kernel (Note [generated pointwise kernels]) takes the same arguments and launch shape and is
// launched through cudaLaunchKernel instead.
#include <algorithm>
#include <cstdint>

#include "runtime/cuda/fused_pointwise_device.cuh"
#include "runtime/cuda/fused_pointwise_kernels.h"
#include "runtime/cuda/grid_loop.cuh"

namespace ucudnn::cuda {

namespace {

static_assert(sizeof(PointwiseParams) <= 4096, "PointwiseParams must fit CUDA's kernel parameter space");

template <typename Index>
__global__ void interpreted_general(const __grid_constant__ PointwiseParams p, float* __restrict__ dst, Index n) {
  device::general_kernel<device::Interpreted>(p, dst, n);
}

template <typename Index>
__global__ void interpreted_vector(const __grid_constant__ PointwiseParams p, float4* __restrict__ dst, Index n4) {
  device::vector_kernel<device::Interpreted>(p, dst, n4);
}

__global__ void interpreted_concat(const __grid_constant__ PointwiseParams p, float* __restrict__ dst) {
  device::concat_kernel<device::Interpreted>(p, dst);
}

// Launches `generated` (params, out, count), count an int32_t when it was written for 32-bit indices.
template <typename Out>
cudaError_t launch_generated(const void* generated, unsigned blocks, const PointwiseParams& params, Out* out,
                             int64_t count, bool index32, cudaStream_t stream) {
  int32_t count32 = static_cast<int32_t>(count);
  void* args[] = {const_cast<PointwiseParams*>(&params), &out,
                  index32 ? static_cast<void*>(&count32) : static_cast<void*>(&count)};
  return cudaLaunchKernel(generated, dim3(blocks), dim3(kThreads), args, 0, stream);
}

}  // namespace

cudaError_t launch_fused_pointwise(const PointwiseParams& params, float* dst, int64_t n, bool vector,
                                   const GeneratedPointwiseKernels& generated, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const bool index32 = pointwise_index32(n);
  if (vector) {
    auto* dst4 = reinterpret_cast<float4*>(dst);
    const int64_t n4 = n / 4;
    if (generated.vector && generated.index32 == index32)
      return launch_generated(generated.vector, blocks_for(n4), params, dst4, n4, index32, stream);
    if (index32) interpreted_vector<int32_t><<<blocks_for(n4), kThreads, 0, stream>>>(params, dst4, int32_t(n4));
    else interpreted_vector<int64_t><<<blocks_for(n4), kThreads, 0, stream>>>(params, dst4, n4);
  } else {
    if (generated.general && generated.index32 == index32)
      return launch_generated(generated.general, blocks_for(n), params, dst, n, index32, stream);
    if (index32) interpreted_general<int32_t><<<blocks_for(n), kThreads, 0, stream>>>(params, dst, int32_t(n));
    else interpreted_general<int64_t><<<blocks_for(n), kThreads, 0, stream>>>(params, dst, n);
  }
  return cudaGetLastError();
}

cudaError_t launch_fused_pointwise_concat(const PointwiseParams& params, float* dst,
                                          const GeneratedPointwiseKernels& generated, cudaStream_t stream) {
  const int tiles = params.tile_begin[params.pieces];
  if (tiles == 0 || params.outer == 0) return cudaSuccess;
  constexpr int kRows = kThreads / kConcatTile;  // a block's rows at a time
  // About 2^13 blocks in all (a few waves on any GPU); each block's rows at least once.
  const int64_t row_blocks = std::min<int64_t>((params.outer + kRows - 1) / kRows, std::max(1, 8192 / tiles));
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(std::min<int64_t>(row_blocks, 65535)));
  const dim3 block(kConcatTile, kRows);
  if (generated.concat) {
    void* args[] = {const_cast<PointwiseParams*>(&params), &dst};
    return cudaLaunchKernel(generated.concat, grid, block, args, 0, stream);
  }
  interpreted_concat<<<grid, block, 0, stream>>>(params, dst);
  return cudaGetLastError();
}

}  // namespace ucudnn::cuda
