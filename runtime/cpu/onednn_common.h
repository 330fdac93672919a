// What oneDNN's convolutions (onednn_conv.cc, onednn_conv_grad.cc) and Gemm (onednn_gemm.cc) share:
// the CPU engine; constant weights reordered into a primitive's layout once per pair of layouts and W
// values (Note [shared converted weights], shared_weights.h); a convolution problem as oneDNN's dims,
// pads and user layouts; memory objects bound to a run's buffers. Only in a build with oneDNN.
#pragma once

#ifdef UCUDNN_HAVE_ONEDNN
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <dnnl.hpp>

#include "runtime/ops/conv_problem.h"

namespace ucudnn::cpu::onednn {

inline constexpr size_t kAlign = 64;  // oneDNN's own alignment for its buffers

// The CPU engine, made once, with oneDNN's own primitive cache off (Note [oneDNN primitive cache]).
dnnl::engine& engine();

// The `count` floats at `w` (bound to `user`, of the user's layout) reordered by `reorder` into `to`'s
// layout: this caller's copy, or a held one with the same bytes. Out of memory is std::bad_alloc, as the
// executor expects.
std::shared_ptr<dnnl::memory> shared_reordered_weights(const dnnl::reorder& reorder, dnnl::memory user,
                                                       const dnnl::memory::desc& to, const float* w, size_t count);

// A convolution problem as every oneDNN convolution primitive (forward, backward data, backward
// weights) takes it: X, W and Y's dims (N, C, H, W order whatever the layout; W grouped
// [G, M/G, C/G, R, S] when group > 1), their descriptors in the user's layout (NCHW and OIHW, or
// NHWC and OHWI for a channels-last problem), strides, dilations counted from 0 as oneDNN does,
// and the begin and end pads (the end pads make oneDNN's output size ONNX's floor one; negative
// where the last rows or columns are read by no window).
struct ConvGeometry {
  dnnl::memory::dims src_dims, wei_dims, dst_dims, strides, dilates, pad_l, pad_r;
  dnnl::memory::desc user_src, user_wei, user_dst;
};
ConvGeometry conv_geometry(const ConvProblem& problem);

// Whether X, W and Y each fit kMaxTensorBytes with N > 0: the kernels index them with int64.
bool fits(const ConvProblem& problem);

// The problem's fields in a fixed order, for keys of primitive caches.
std::vector<int64_t> problem_fields(const ConvProblem& problem);

// The reorder from `from` to `to`; none where the layouts are the same.
std::optional<dnnl::reorder> make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to);

// A memory object without a buffer yet: a run points it at its buffer (bind).
dnnl::memory unbound(const dnnl::memory::desc& desc);

// Points `memory` at caller memory (inputs are only read: oneDNN takes non-const handles).
void bind(const dnnl::memory& memory, const void* data);

}  // namespace ucudnn::cpu::onednn
#endif
