// The reduction a scatter applies where it writes (ScatterElements, ScatterND: runtime/ops/indexing.h); its
// own header so the CUDA kernels can include it without the runtime's.
#pragma once

namespace ucudnn {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

}  // namespace ucudnn
