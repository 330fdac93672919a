// Note [generated pointwise kernels]
// The interpreter (device::Interpreted, runtime/cuda/fused_pointwise_device.cuh) runs any pointwise
// program but pays for it: every instruction dispatches on its opcode and every register is a slot of
// a local array in memory. On the H200 EfficientNet-B1's SiLU nodes took 5.9 ms interpreted and 2.3 ms
// generated (--profile, batch 128; about 1.5 TB/s against the tensor sizes the layer shapes give).
//
// So for each distinct program FusedPointwise's prepare writes a small struct whose run() is the
// program as straight-line code — eval_pointwise with constant opcodes, which the compiler folds to the
// one operation — and whose leaf count is fixed, and NVRTC compiles it with the kernel bodies of
// fused_pointwise_device.cuh for the GPU at hand (cubin for its sm_XY). Only the kernels the node can
// launch are written (concat; or general, and vector when its shapes allow). The immediates (Clip's
// bounds, ...) stay parameters, so every node with the same instructions shares one compile: a
// process-wide cache keyed by the source, the built-in headers, the architecture and NVRTC's version
// holds the loaded kernels, and the cubins are kept on disk under the same key (user_cache_dir()/kernels/, beside the
// benchmark database) for the next process — a compile takes ~0.2 s.
//
// NVRTC is loaded at run time (dlopen of libnvrtc.so.13, .so): the binary does not need it. When it is
// missing, a compile or a load fails, or UCUDNN_POINTWISE_JIT=0 (for A/B runs), the interpreter runs
// the node, slower, and the first such reason is printed once on stderr. The two agree up to rounding:
// in straight-line code the compiler contracts a Mul and the Add after it (BN's x·s + t) into one FMA.
#pragma once

#include <string>
#include <vector>

#include "runtime/cuda/fused_pointwise_kernels.h"
#include "runtime/core/status.h"

namespace ucudnn::cuda {

// Which kernels of one program to write.
struct PointwiseKernelSet {
  bool general = false, vector = false, concat = false;
  bool index32 = true;  // general and vector index in 32 bits (pointwise_index32 of the output's size)
};

// The CUDA source of `set`'s kernels for params' program (leaves, instructions and their registers;
// not the immediates, shapes or pointers), entry points "ucudnn_pointwise_general", "_vector", "_concat".
std::string generated_pointwise_source(const PointwiseParams& params, const PointwiseKernelSet& set);

// Compiles `source` with NVRTC for `arch` (e.g. "sm_90") and returns the cubin, or an error with
// NVRTC's log. Needs no GPU.
Expected<std::vector<char>> compile_pointwise_source(const std::string& source, const std::string& arch);

// The kernels of `set` for params' program on the current device (compiled once per process), or all
// null when generation is off or failed (the interpreter runs; see the Note).
GeneratedPointwiseKernels generated_pointwise_kernels(const PointwiseParams& params, const PointwiseKernelSet& set);

}  // namespace ucudnn::cuda
