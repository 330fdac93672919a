// What oneDNN's convolutions (onednn_conv.cc) and Gemm (onednn_gemm.cc) share: the CPU engine, and
// constant weights reordered into a primitive's layout once per pair of layouts and W values (Note
// [shared converted weights], shared_weights.h). Only in a build with oneDNN.
#pragma once

#ifdef UCUDNN_HAVE_ONEDNN
#include <cstddef>
#include <memory>

#include <dnnl.hpp>

namespace ucudnn::cpu::onednn {

// The CPU engine, made once, with oneDNN's own primitive cache off (Note [oneDNN primitive cache]).
dnnl::engine& engine();

// The `count` floats at `w` (bound to `user`, of the user's layout) reordered by `reorder` into `to`'s
// layout: this caller's copy, or a held one with the same bytes. Out of memory is std::bad_alloc, as the
// executor expects.
std::shared_ptr<dnnl::memory> shared_reordered_weights(const dnnl::reorder& reorder, dnnl::memory user,
                                                       const dnnl::memory::desc& to, const float* w, size_t count);

}  // namespace ucudnn::cpu::onednn
#endif
