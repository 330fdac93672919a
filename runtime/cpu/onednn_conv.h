// oneDNN forward convolutions as CPU convolution algorithms (conv_algorithms.h's
// kOnednnDirect): fp32, NCHW user tensors, oneDNN's scratchpad in user mode plus the
// reorder buffers to and from the primitive's preferred (blocked) layouts as the
// workspace. A build without oneDNN (UCUDNN_ONEDNN=OFF) keeps these functions: they
// say the algorithm does not apply.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/cpu/conv_algorithms.h"

namespace ucudnn::cpu::onednn {

// oneDNN's convolution algorithm (dnnl::algorithm::convolution_*).
enum class Kind { kDirect, kWinograd };

// Whether this build has oneDNN.
bool built_in();
// "oneDNN 2.6.3 avx2": the library loaded at run time and the instruction set it dispatches to
// on this CPU (isa_name), part of the CPU's device name in kernel keys (timings measured with
// another ISA are not reused); "" without oneDNN.
std::string version();
// "avx2", "avx512_core", "avx512_core_amx", ...: what oneDNN's kernels use here; "" without oneDNN.
std::string isa_name();
// Whether oneDNN has a primitive of `kind` for the problem (creates and caches it once).
bool applies(const ConvProblem& problem, Kind kind);
// Workspace bytes: scratchpad + reorder buffers + a zero bias; SIZE_MAX when it does not apply.
size_t workspace_bytes(const ConvProblem& problem, Kind kind);
// Y = conv(X, W) + B (bias may be null); `workspace` holds workspace_bytes(problem, kind) bytes.
void run(const ConvProblem& problem, Kind kind, const float* x, const float* w, const float* bias,
         float* y, void* workspace);

}  // namespace ucudnn::cpu::onednn
