// oneDNN backward convolutions as CPU algorithms of ConvGradData and ConvGradFilter (conv_grad.h's
// kOnednn and kOnednnPlain): fp32, NCHW (the backward kernels refuse channels-last nodes), made as
// the forward's (onednn_conv.h): one primitive per direction, kind and problem, created once and
// cached; a prepared call (PreparedConvGrad) holds the memory objects, so a run only reorders the
// tensors whose layout the primitive wants otherwise and runs it. The workspace is oneDNN's scratchpad
// (scratchpad_mode::user) plus those reorder buffers. ConvGradFilter's accumulate (β = 1) goes through
// a reorder with a sum post-op (Note [oneDNN dW accumulate]). A build without oneDNN keeps these
// functions: they say the algorithms do not apply.
#pragma once

#include <cstddef>
#include <memory>

#include "runtime/cpu/conv_grad.h"
#include "runtime/cpu/onednn_conv.h"

namespace ucudnn::cpu::onednn {

// Kind::kDirect (oneDNN's preferred blocked layouts) and Kind::kDirectPlain (X or dX and dY in the
// user's layout) only; `op` is kConvGradData or kConvGradFilter.

// Whether oneDNN has a backward primitive of `op` and `kind` for the problem (creates and caches it once).
bool grad_applies(OpKind op, const ConvProblem& problem, Kind kind);
// Workspace bytes of a call (either value of accumulate); SIZE_MAX when it does not apply.
size_t grad_workspace_bytes(OpKind op, const ConvProblem& problem, Kind kind);
// The prepared call; nullptr when it does not apply.
std::unique_ptr<PreparedConvGrad> prepare_grad(OpKind op, const ConvProblem& problem, Kind kind);

}  // namespace ucudnn::cpu::onednn
