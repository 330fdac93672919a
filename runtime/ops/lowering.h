// Ops the importer rewrites into others before anything else sees the graph (Note [lowered ops]).
#pragma once

#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Note [lowered ops]
// Some ONNX ops are compositions of ops ucudnn already plans, runs and differentiates: ConvTranspose is a
// Conv's data gradient (Note [ConvTranspose as ConvGradData], conv_transpose.h), LayerNormalization,
// InstanceNormalization and GroupNormalization a few reductions and elementwise ops (layer_norm.h,
// instance_norm.h, group_norm.h, normalization_lowering.h), DepthToSpace and SpaceToDepth a Reshape, a
// Transpose and a Reshape (depth_to_space.h), a ConstantOfShape too large to fold an Expand
// (constant_of_shape.h). Each has a descriptor (its shape rule checks the model), no kernel on any backend,
// and a lowering the importer runs after shape inference and constant folding; the optimizer's passes then
// fuse the pieces as they fuse any others.
//
// lower_each rewrites every node of `kind` in `graph` with `lower`, which appends the nodes computing
// it to `out` (their output values added with the shapes they must have: the node's outputs keep their
// ids). Each new node's own shape rule must agree with those shapes (else an internal error naming both
// nodes); producers are renumbered and the graph validated. `what` names the op in that validation.
using LowerNode = Status (*)(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out);
Status lower_each(ir::Graph& graph, OpKind kind, LowerNode lower, const char* what);

// Lowers every op of the list above in `graph` (shapes inferred): what the importer runs.
Status lower_composite_ops(ir::Graph& graph);

}  // namespace ucudnn
