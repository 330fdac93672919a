// UCUDNN_HOST_DEVICE: marks a function that both the host compiler and nvcc compile (the shared
// definitions kernels and CPU code both run: reduce_kind.h, activation_grad.h, running_sum.h).
// runtime/ir/pointwise_program.h keeps its own: NVRTC compiles it alone, without the include path.
#pragma once

#ifdef __CUDACC__
#define UCUDNN_HOST_DEVICE __host__ __device__
#else
#define UCUDNN_HOST_DEVICE
#endif
