// Combining one value per thread over a CUDA block (device code; the .cu units include it): a
// warp-shuffle tree in each warp, then one over the warps, in a fixed order, so a sum repeats bit for
// bit from run to run.
#pragma once

namespace ucudnn::cuda {

struct Sum {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Combines every thread's `v` with `op` (whose neutral value is `identity`); every thread
// gets the result. blockDim.x a multiple of 32, at most 1024; `shared` holds 32 values
// and is free again on return.
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity, T* shared) {
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? shared[lane] : identity;
    for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const T result = shared[0];
  __syncthreads();
  return result;
}

}  // namespace ucudnn::cuda
