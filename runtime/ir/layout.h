// Note [channels-last]: how a graph says that some of its 4-D activations are
// stored NHWC (channels last) instead of ONNX's NCHW.
//
// optimizer/passes/channels_last.cc rewrites a graph for the GPU's channels-last
// layout: values between convolutions get NHWC *logical* shapes ([N, H, W, C]),
// explicit Transpose nodes convert at the boundaries (graph inputs and outputs,
// ops that only run NCHW), and the layout-sensitive nodes (Conv, MaxPool,
// AveragePool, GlobalAveragePool, GlobalMaxPool) carry the attribute
// `channels_last` = 1: their X and Y are [N, H, W, C], and a Conv's weight is
// [K, R, S, C/group]. Every other op sees ordinary row-major tensors, so
// elementwise ops, Concat (its axis remapped) and the rest need nothing special.
// Only 4-D (2-D spatial) nodes are converted.
#pragma once

#include "runtime/core/shape.h"
#include "runtime/ir/graph.h"

namespace ucudnn::ir {

inline constexpr const char* kChannelsLastAttr = "channels_last";

// Whether `node` reads and writes its activations channels-last (Note [channels-last]).
inline bool is_channels_last(const Node& node) {
  return node.attrs.has(kChannelsLastAttr) && node.attrs.get_int(kChannelsLastAttr) != 0;
}

// "nhwc" when a node of `graph` runs channels-last, else "nchw" (a Plan's layout).
inline const char* graph_layout_name(const Graph& graph) {
  for (const Node& node : graph.nodes)
    if (is_channels_last(node)) return "nhwc";
  return "nchw";
}

// [N, C, H, W] → [N, H, W, C]; also [K, C, R, S] → [K, R, S, C] for weights.
inline Shape nchw_to_nhwc(const Shape& s) { return {s[0], s[2], s[3], s[1]}; }
// [N, H, W, C] → [N, C, H, W].
inline Shape nhwc_to_nchw(const Shape& s) { return {s[0], s[3], s[1], s[2]}; }

// The Transpose permutations between the two (ONNX `perm`: output dim d = input dim perm[d]).
inline const std::vector<int64_t> kNchwToNhwcPerm = {0, 2, 3, 1};
inline const std::vector<int64_t> kNhwcToNchwPerm = {0, 3, 1, 2};

}  // namespace ucudnn::ir
