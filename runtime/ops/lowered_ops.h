// Ops the importer rewrites into others before anything else sees the graph (Note [lowered ops]): their list,
// which the backends read. The lowerings are in onnx_import/lowering/ (lowering.h there runs them all;
// lowering_builder.h is what they write with).
#pragma once

// Note [lowered ops]
// Some ONNX ops are compositions of ops ucudnn already plans, runs and differentiates, each by its file in
// onnx_import/lowering/: ConvTranspose is a Conv's data gradient (Note [ConvTranspose as ConvGradData],
// conv_transpose.h), LayerNormalization, InstanceNormalization and GroupNormalization a few reductions and
// elementwise ops (layer_norm.h, instance_norm.h, group_norm.h, normalization_lowering.h), DepthToSpace and
// SpaceToDepth a Reshape, a Transpose and a Reshape (depth_to_space.h), Tile a Reshape, an Expand and a Reshape
// (tile.h), Sum and Mean Adds and a Mul (sum_mean.h), Upsample a Resize (upsample.h), a ConstantOfShape too large to
// fold an Expand (constant_of_shape.h), CastLike a Cast (cast_like.h), Einsum a MatMul between Transposes and
// Reshapes (einsum.h), NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss a GatherElements, a Gather of the
// weights and reductions (nll_loss.h), Hardmax an ArgMax compared with the positions (hardmax.h), GatherND Gathers
// of a stride table and of the data's rows (gather_nd.h), OneHot an Equal with the positions and a Where
// (one_hot.h), MeanVarianceNormalization a normalization (mean_variance_norm.h), MaxUnpool a ScatterElements into
// zeros (max_unpool.h), Gelu the elementwise ops of its formula (gelu.h). Each has a descriptor in runtime/ops (its shape rule checks the model), no kernel on any
// backend, and a lowering the importer runs after shape inference and constant folding; the optimizer's passes then
// fuse the pieces as they fuse any others. Some ops are lowered only in part: Max and Min of other than two operands
// become an Identity or a chain of pairs (onnx_import/lowering/max_min.h); 3-D Conv, MaxPool and AveragePool
// become 2-D ones (onnx_import/lowering/volumetric.h).

// Every lowered op: no backend has a kernel of it (the backends' registries give each an empty one, and a
// graph built around the importer is refused: "no CPU kernel").
#define UCUDNN_FOR_EACH_LOWERED_OP(X)                                                         \
  X(ConvTranspose) X(LayerNormalization) X(InstanceNormalization) X(GroupNormalization)       \
  X(DepthToSpace) X(SpaceToDepth) X(Tile) X(Sum) X(Mean) X(Upsample) X(ConstantOfShape) X(CastLike) \
  X(Einsum) X(NegativeLogLikelihoodLoss) X(SoftmaxCrossEntropyLoss) X(Hardmax) X(GatherND) X(OneHot)      \
  X(MeanVarianceNormalization) X(MaxUnpool) X(Gelu)
