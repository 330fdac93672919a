// global_pool_from_reduce_mean: ReduceMean over axes 2 and 3 of a 4-D float32 X with keepdims
// becomes GlobalAveragePool. It is the same mean, Y [N, C, 1, 1], but the global pool runs
// channels-last (convert_to_channels_last) and has tuned kernels on both backends; a squeeze-
// excitation block written as `x.mean((2, 3), keepdim=True)` (timm's EfficientNets, among others)
// exports as the ReduceMean and would otherwise leave the NHWC region, at the cost of two transposes
// of the whole activation.
#include <algorithm>

#include "optimizer/passes/passes.h"

namespace ucudnn::optimizer {

namespace {

// Whether `node` is a ReduceMean this pass rewrites.
bool is_spatial_mean(const ir::Graph& graph, const ir::Node& node) {
  if (node.op != OpKind::kReduceMean || node.inputs.size() < 2 || node.inputs[1] == ir::kNoValue) return false;
  const ir::Value& x = graph.value(node.inputs[0]);
  // An empty H or W: ReduceMean gives NaN, the global pool refuses it.
  if (x.dtype != DType::kFloat32 || x.shape.size() != 4 || x.shape[2] == 0 || x.shape[3] == 0) return false;
  if (node.attrs.has("keepdims") && node.attrs.get_int("keepdims") == 0) return false;
  const auto& axes_tensor = graph.value(node.inputs[1]).constant;
  if (!axes_tensor) return false;
  auto axes = axes_tensor->to_int64_vector();
  if (!axes || axes->size() != 2) return false;
  for (int64_t& a : *axes)
    if (a < 0) a += 4;
  std::sort(axes->begin(), axes->end());
  return (*axes)[0] == 2 && (*axes)[1] == 3;
}

}  // namespace

Status global_pool_from_reduce_mean(ir::Graph& graph, PassStats* stats) {
  bool rewritten = false;
  for (ir::Node& node : graph.nodes) {
    if (!is_spatial_mean(graph, node)) continue;
    node.op = OpKind::kGlobalAveragePool;
    node.inputs.resize(1);  // the axes constant is dropped when the graph is pruned
    node.attrs = {};
    ++stats->reduce_means_made_global_pools;
    rewritten = true;
  }
  if (rewritten) graph.prune();
  return Status::ok();
}

}  // namespace ucudnn::optimizer
