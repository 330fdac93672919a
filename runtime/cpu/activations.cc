// CPU kernels of the elementwise activations (see runtime/ops/activations.cc).
// Plain loops over contiguous float32 data, split across OpenMP threads.
#include <algorithm>

#include "runtime/cpu/cpu_kernel.h"

namespace ucudnn::cpu {

namespace {

// Applies f to every element of src[0] into dst[0].
template <typename F>
Status map_elements(const KernelArgs& args, F f) {
  const float* src = args.src[0]->data<float>();
  float* dst = args.dst[0]->data<float>();
  const int64_t n = args.src[0]->numel();
#pragma omp parallel for schedule(static) if (n > 16384)
  for (int64_t i = 0; i < n; ++i) dst[i] = f(src[i]);
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_Relu() {
  static const CpuKernel k{.run = [](const KernelArgs& a) {
    return map_elements(a, [](float x) { return std::max(x, 0.0f); });
  }};
  return k;
}

}  // namespace ucudnn::cpu
