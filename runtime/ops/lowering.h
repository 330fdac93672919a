// Ops the importer rewrites into others before anything else sees the graph (Note [lowered ops]).
#pragma once

#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Note [lowered ops]
// Some ONNX ops are compositions of ops ucudnn already plans, runs and differentiates: ConvTranspose is a
// Conv's data gradient (Note [ConvTranspose as ConvGradData], conv_transpose.h), LayerNormalization,
// InstanceNormalization and GroupNormalization a few reductions and elementwise ops (layer_norm.h,
// instance_norm.h, group_norm.h, normalization_lowering.h), DepthToSpace and SpaceToDepth a Reshape, a
// Transpose and a Reshape (depth_to_space.h), Tile a Reshape, an Expand and a Reshape (tile.h), Sum and
// Mean Adds and a Mul (sum_mean.h), Upsample a Resize (upsample.h), a ConstantOfShape too large to fold an
// Expand (constant_of_shape.h), CastLike a Cast (cast_like.h), Einsum a MatMul between Transposes and
// Reshapes (einsum.h), NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss a GatherElements, a Gather of
// the weights and reductions (nll_loss.h), Hardmax an ArgMax compared with the positions (hardmax.h),
// GatherND Gathers of a stride table and of the data's rows (gather_nd.h), OneHot an Equal with the positions
// and a Where (one_hot.h), MeanVarianceNormalization a normalization (mean_variance_norm.h), MaxUnpool a
// ScatterElements into zeros (max_unpool.h). Each
// has a descriptor (its shape rule checks the model), no kernel on any backend, and a lowering the importer
// runs after shape inference and constant folding; the optimizer's passes then fuse the pieces as they fuse
// any others. Some ops are lowered only in part: Max and Min of other than two
// operands become an Identity or a chain of pairs (max_min.h); 3-D Conv, MaxPool and AveragePool become
// 2-D ones (volumetric.h).
//
// lower_each rewrites every node of `kind` in `graph` with `lower`, which appends the nodes computing
// it to `out` (their output values added with the shapes they must have: the node's outputs keep their
// ids). Each new node's own shape rule must agree with those shapes (else an internal error naming both
// nodes); producers are renumbered and the graph validated. `what` names the op in that validation.
using LowerNode = Status (*)(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out);

// Every lowered op: no backend has a kernel of it (the backends' registries give each an empty one, and a
// graph built around the importer is refused: "no CPU kernel").
#define UCUDNN_FOR_EACH_LOWERED_OP(X)                                                         \
  X(ConvTranspose) X(LayerNormalization) X(InstanceNormalization) X(GroupNormalization)       \
  X(DepthToSpace) X(SpaceToDepth) X(Tile) X(Sum) X(Mean) X(Upsample) X(ConstantOfShape) X(CastLike) \
  X(Einsum) X(NegativeLogLikelihoodLoss) X(SoftmaxCrossEntropyLoss) X(Hardmax) X(GatherND) X(OneHot)      \
  X(MeanVarianceNormalization) X(MaxUnpool)
Status lower_each(ir::Graph& graph, OpKind kind, LowerNode lower, const char* what);

// The nodes and values one lowered node becomes, appended to `out` and named after it ("<node>/<what>").
class LoweringBuilder {
 public:
  // The new nodes get `opset` (the lowered node's own, or a later one whose form they are written in).
  LoweringBuilder(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out, int opset)
      : graph_(graph), node_(node), out_(out), opset_(opset) {}

  // A node `op` of `inputs` with `attrs` (the spec's defaults filled in) writing `into`, else a new
  // value of `dtype` and `shape`; the id of its output. An empty `what` names it after the lowered node
  // alone (a lowering into one node).
  ir::ValueId emit(OpKind op, const std::string& what, std::vector<ir::ValueId> inputs, DType dtype,
                   const Shape& shape, ir::ValueId into = ir::kNoValue, ir::Attributes attrs = {});
  // ((inputs[0] op inputs[1]) op inputs[2]) ...: binary nodes "<what><i>" of broadcasting operands (at least
  // two), the last writing `into` (else a new value); its id.
  ir::ValueId chain(OpKind op, const std::string& what, const std::vector<ir::ValueId>& inputs, DType dtype,
                    ir::ValueId into = ir::kNoValue);
  // A constant value holding `data`.
  ir::ValueId constant(const std::string& what, Tensor data);
  // A 1-D int64 constant (a Reshape's shape, axes).
  ir::ValueId int64s(const std::string& what, const std::vector<int64_t>& values);
  // An int64 scalar constant.
  ir::ValueId int64_scalar(const std::string& what, int64_t value);
  // [0, 1, ..., count - 1] (int64), computed by a Range node when the graph runs: a size the model gives
  // (OneHot's depth, an axis of data) never becomes a table allocated at load (Range refuses over 2^31).
  ir::ValueId iota(const std::string& what, int64_t count);
  // A new value of `dtype` and `shape` for a node to write.
  ir::ValueId intermediate(const std::string& what, DType dtype, const Shape& shape);

  ir::Graph& graph() { return graph_; }
  const ir::Node& node() const { return node_; }

 private:
  ir::Graph& graph_;
  const ir::Node& node_;
  std::vector<ir::Node>& out_;
  int opset_;
};

// Lowers every op of the list above in `graph` (shapes inferred): what the importer runs.
Status lower_composite_ops(ir::Graph& graph);

}  // namespace ucudnn
