// Gemm through oneDNN's matmul primitive, B reordered once into the primitive's layout.
//
// Note [oneDNN Gemm]: a classifier's Gemm at a small batch is a pass over its constant B, and Eigen
// (matmul.cc) packs B again on every call. oneDNN's matmul on B reordered once (shared like the
// convolutions' weights: Note [shared converted weights]) took 0.16 instead of 0.86 ms for
// MobileNetV3's 960 x 1280 at 16 rows (dev VM, 2 threads, caches cold), and the same time at 1 row.
// The reordered B is made at the first run and reported as kept (Kernel::kept).
#pragma once

#include <memory>

#include "runtime/backend/backend.h"

namespace ucudnn::cpu::onednn {

// The prepared Gemm of a call, or nullptr where matmul.cc's Eigen kernel runs it instead: a build
// without oneDNN; B not a constant of the graph; transA; alpha other than 1; a C other than one row
// of N added with beta 1 (no C, or beta 0, is fine); a dim of 0; anything not float.
std::unique_ptr<runtime::Kernel> prepare_gemm(const runtime::KernelRequest& request);

}  // namespace ucudnn::cpu::onednn
