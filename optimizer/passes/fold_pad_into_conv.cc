// fold_pad_into_conv / fold_any_pad_into_conv: a Pad with value 0 on the spatial axes whose output
// only Convs read, as X, becomes those Convs' own padding; the Convs read the Pad's input. A model
// written with "same" padding (TensorFlow's, exported by tf2onnx; timm's Conv2dSame) puts such a Pad
// before its strided convolutions: one copy of the activation each, and a node that would leave the
// NHWC region.
//
// Folded: mode "constant" with value 0 (or none), pads a constant with no `axes` input, 0 on the
// batch and channel axes, no negative pad; each reader a Conv with auto_pad NOTSET that reads the Pad
// only as X. fold_pad_into_conv (the GPU's) folds only where every Conv's padding comes out the same at
// both ends of each axis: cuDNN takes one pad per axis, and the CUDA backend pads unequal ends by
// copying X into the workspace (runtime/cuda/conv.cc), which would count the whole padded X against
// the workspace limit. fold_any_pad_into_conv (the CPU's: oneDNN and the Eigen algorithms take both
// ends) folds any.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"

namespace ucudnn::optimizer {

namespace {

// The Pad's pads (begin of each axis, then the end) when it is a Pad this pass may fold.
std::optional<std::vector<int64_t>> zero_spatial_pads(const ir::Graph& graph, const ir::Node& node) {
  if (node.op != OpKind::kPad || node.inputs.size() < 2 || node.inputs[1] == ir::kNoValue) return std::nullopt;
  if (node.attrs.has("mode") && node.attrs.get_string("mode") != "constant") return std::nullopt;
  if (node.inputs.size() > 3 && node.inputs[3] != ir::kNoValue) return std::nullopt;  // axes
  if (node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue) {  // the padding value
    const auto& value = graph.value(node.inputs[2]).constant;
    if (!value || value->dtype() != DType::kFloat32 || value->numel() != 1 || value->data<float>()[0] != 0.0f)
      return std::nullopt;
  }
  const auto& constant = graph.value(node.inputs[1]).constant;
  if (!constant) return std::nullopt;
  auto pads = constant->to_int64_vector();
  const size_t rank = graph.value(node.inputs[0]).shape.size();
  if (!pads || rank < 3 || pads->size() != 2 * rank) return std::nullopt;
  if ((*pads)[0] != 0 || (*pads)[1] != 0 || (*pads)[rank] != 0 || (*pads)[rank + 1] != 0) return std::nullopt;
  if (std::any_of(pads->begin(), pads->end(), [](int64_t p) { return p < 0; })) return std::nullopt;
  return std::move(*pads);
}

// A Conv over `spatial` axes that reads `id` as X only, with explicit pads (or none).
bool conv_reads_as_x(const ir::Node& node, ir::ValueId id, size_t spatial) {
  if (node.op != OpKind::kConv || node.inputs.empty() || node.inputs[0] != id) return false;
  if (node.attrs.has("auto_pad") && node.attrs.get_string("auto_pad") != "NOTSET") return false;
  if (node.attrs.has("pads") && node.attrs.get_ints("pads").size() != 2 * spatial) return false;
  return std::count(node.inputs.begin(), node.inputs.end(), id) == 1;
}

// `conv`'s pads with the Pad's spatial ones (`pads`, of a rank-`rank` X) added.
std::vector<int64_t> folded_pads(const ir::Node& conv, const std::vector<int64_t>& pads, size_t rank) {
  const size_t spatial = rank - 2;
  std::vector<int64_t> sum(2 * spatial, 0);
  if (conv.attrs.has("pads")) sum = conv.attrs.get_ints("pads");
  for (size_t d = 0; d < spatial; ++d) {
    sum[d] += pads[2 + d];
    sum[spatial + d] += pads[rank + 2 + d];
  }
  return sum;
}

bool same_at_both_ends(const std::vector<int64_t>& pads) {
  const size_t spatial = pads.size() / 2;
  for (size_t d = 0; d < spatial; ++d)
    if (pads[d] != pads[spatial + d]) return false;
  return true;
}

Status fold_pads(ir::Graph& graph, PassStats* stats, bool unequal_ends) {
  const std::vector<int> uses = count_uses(graph);
  std::vector<bool> remove(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const auto pads = zero_spatial_pads(graph, graph.nodes[n]);
    if (!pads) continue;
    const ir::ValueId padded = graph.nodes[n].outputs[0], x = graph.nodes[n].inputs[0];
    if (is_graph_output(graph, padded)) continue;
    std::vector<size_t> readers;
    for (size_t r = n + 1; r < graph.nodes.size(); ++r)
      if (std::count(graph.nodes[r].inputs.begin(), graph.nodes[r].inputs.end(), padded) > 0) readers.push_back(r);
    const size_t rank = pads->size() / 2;
    const auto folds = [&](size_t r) {
      return conv_reads_as_x(graph.nodes[r], padded, rank - 2) &&
             (unequal_ends || same_at_both_ends(folded_pads(graph.nodes[r], *pads, rank)));
    };
    if (readers.empty() || static_cast<int>(readers.size()) != uses[padded] ||
        !std::all_of(readers.begin(), readers.end(), folds))
      continue;
    for (size_t r : readers) {
      ir::Node& conv = graph.nodes[r];
      conv.attrs.set("pads", folded_pads(conv, *pads, rank));
      conv.inputs[0] = x;
    }
    remove[n] = true;
    ++stats->pads_folded;
  }
  remove_nodes(graph, remove);
  return Status::ok();
}

}  // namespace

Status fold_pad_into_conv(ir::Graph& graph, PassStats* stats) { return fold_pads(graph, stats, false); }

Status fold_any_pad_into_conv(ir::Graph& graph, PassStats* stats) { return fold_pads(graph, stats, true); }

}  // namespace ucudnn::optimizer
