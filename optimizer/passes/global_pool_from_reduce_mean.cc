// global_pool_from_reduce_mean: ReduceMean over axes 2 and 3 of a 4-D float32 X becomes
// GlobalAveragePool (Y [N, C, 1, 1]), followed by Flatten when keepdims is 0 (Y [N, C]). It is the
// same mean, but the global pool runs channels-last (convert_to_channels_last) and has tuned kernels
// on both backends. A squeeze-excitation block written as `x.mean((2, 3), keepdim=True)` (timm's
// EfficientNets, among others) exports as the ReduceMean and would otherwise leave the NHWC region,
// at the cost of two transposes of the whole activation; a classifier head written as
// `x.mean([2, 3])` (torchvision's MNASNet) transposes the last activation back to NCHW.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "optimizer/passes/passes.h"

namespace ucudnn::optimizer {

namespace {

// Whether `node` is a ReduceMean this pass rewrites.
bool is_spatial_mean(const ir::Graph& graph, const ir::Node& node) {
  if (node.op != OpKind::kReduceMean || node.inputs.size() < 2 || node.inputs[1] == ir::kNoValue) return false;
  const ir::Value& x = graph.value(node.inputs[0]);
  // An empty H or W: ReduceMean gives NaN, the global pool refuses it.
  if (x.dtype != DType::kFloat32 || x.shape.size() != 4 || x.shape[2] == 0 || x.shape[3] == 0) return false;
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
  std::vector<ir::Node> old_nodes = std::move(graph.nodes);
  graph.nodes.clear();
  bool rewritten = false;
  for (ir::Node& node : old_nodes) {
    if (!is_spatial_mean(graph, node)) {
      graph.nodes.push_back(std::move(node));
      continue;
    }
    const bool keepdims = !node.attrs.has("keepdims") || node.attrs.get_int("keepdims") != 0;
    ir::Node pool = node;
    pool.op = OpKind::kGlobalAveragePool;
    pool.inputs.resize(1);  // the axes constant is dropped when the graph is pruned
    pool.attrs = {};
    if (!keepdims) {  // the pool into a value of its own, then Flatten into the mean's Y [N, C]
      const Shape& x = graph.value(node.inputs[0]).shape;
      const Shape pooled_shape = {x[0], x[1], 1, 1};
      pool.name += ".pool";
      pool.outputs = {graph.add_value({node.name + ".pooled", DType::kFloat32, pooled_shape, std::nullopt, -1})};
      ir::Node flatten;
      flatten.name = node.name;
      flatten.op = OpKind::kFlatten;
      flatten.opset = node.opset;
      flatten.inputs = pool.outputs;
      flatten.outputs = node.outputs;
      flatten.attrs.set("axis", int64_t{1});
      graph.nodes.push_back(std::move(pool));
      graph.nodes.push_back(std::move(flatten));
    } else {
      graph.nodes.push_back(std::move(pool));
    }
    ++stats->reduce_means_made_global_pools;
    rewritten = true;
  }
  if (rewritten) graph.prune();  // also renumbers the producers of the nodes after an inserted Flatten
  return Status::ok();
}

}  // namespace ucudnn::optimizer
