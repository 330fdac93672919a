// oneDNN forward convolutions as CPU convolution algorithms (conv_algorithms.h's
// kOnednn*): fp32, user tensors in NCHW or, for a channels-last problem, X and Y NHWC and
// W [M, R, S, C/group]. Each primitive is created once per problem (and
// epilogue) and cached; a prepared convolution (PreparedConv) also keeps the weights
// reordered into the primitive's layout when they are constant, so a run only reorders
// X in and Y out where the primitive's layouts differ from the user's (Note [oneDNN weights]).
// The workspace is oneDNN's scratchpad (scratchpad_mode::user, so one primitive may run
// on several threads at once) plus those reorder buffers. A build without oneDNN
// (UCUDNN_ONEDNN=OFF) keeps these functions: they say the algorithms do not apply.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/cpu/conv_algorithms.h"

namespace ucudnn::cpu::onednn {

// kDirect: dnnl::algorithm::convolution_direct in oneDNN's preferred (blocked) layouts;
// kWinograd: convolution_winograd (oneDNN has it for AVX-512 CPUs only); kAuto:
// convolution_auto, oneDNN's own choice, offered only where Winograd exists (elsewhere it
// is kDirect); kDirectPlain: convolution_direct on X and Y in the user's layout itself (no
// reorders; in NCHW mostly oneDNN's GEMM-based implementation, in NHWC its JIT kernels).
enum class Kind { kDirect, kWinograd, kAuto, kDirectPlain };

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
// Workspace bytes of a call whose weights are not known constant (the most any prepared call
// needs): scratchpad + reorder buffers; SIZE_MAX when it does not apply.
size_t workspace_bytes(const ConvProblem& problem, Kind kind);
// The prepared convolution (see conv_algorithms.h's prepare_conv); nullptr when it does not apply.
std::unique_ptr<PreparedConv> prepare(const ConvProblem& problem, Kind kind, const ConvEpilogue& epilogue,
                                      bool weights_constant);

}  // namespace ucudnn::cpu::onednn
