// The headers NVRTC compiles generated pointwise kernels with (Note [generated pointwise kernels]):
// their text, as the build read it (runtime/cuda/CMakeLists.txt writes pointwise_jit_headers.cc), and
// the include names the generated source uses.
#pragma once

namespace ucudnn::cuda {

extern const int kPointwiseJitHeaderCount;
extern const char* const kPointwiseJitHeaders[];
extern const char* const kPointwiseJitHeaderNames[];

}  // namespace ucudnn::cuda
