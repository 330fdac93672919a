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
// "oneDNN 2.6.3" (the library loaded at run time); "" without oneDNN.
std::string version();
// Whether oneDNN has a primitive of `kind` for the problem (creates and caches it once).
bool applies(const ConvProblem& problem, Kind kind);
// Workspace bytes: scratchpad + reorder buffers + a zero bias; SIZE_MAX when it does not apply.
size_t workspace_bytes(const ConvProblem& problem, Kind kind);
// Y = conv(X, W) + B (bias may be null); `workspace` holds workspace_bytes(problem, kind) bytes.
void run(const ConvProblem& problem, Kind kind, const float* x, const float* w, const float* bias,
         float* y, void* workspace);

}  // namespace ucudnn::cpu::onednn
