// The nodes LayerNormalization, InstanceNormalization and GroupNormalization are lowered into (Note [lowered
// ops], runtime/ops/lowered_ops.h).
#pragma once

#include <string>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Appends to `out` nodes that compute part of `node` (a normalization): over `axes` of a float32 X,
//   Mean = ReduceMean(X), D = X - Mean, Var = ReduceMean(D · D), S = Sqrt(Var + epsilon),
//   Y = D / S (· Scale) (+ B), InvStdDev = Reciprocal(S)
// — ONNX's reference computation. Mean and InvStdDev go into node.outputs[1] and [2] where the node has
// them (LayerNormalization's optional outputs), else they are not computed. MeanVarianceNormalization adds
// its epsilon after the square root: S = Sqrt(Var) + epsilon (EpsilonAt::kAfterSqrt).
class NormalizationLowering {
 public:
  enum class EpsilonAt { kUnderSqrt, kAfterSqrt };

  NormalizationLowering(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out)
      : build_(graph, node, out, node.opset), graph_(graph), node_(node) {}

  // X is `x`, Y goes into `y`; `scale` and `bias` (ir::kNoValue: none) broadcast to X.
  Status run(ir::ValueId x, const std::vector<int64_t>& axes, float epsilon, ir::ValueId scale, ir::ValueId bias,
             ir::ValueId y, EpsilonAt epsilon_at = EpsilonAt::kUnderSqrt);

  // A node `op` of `inputs` named after the lowered node and `what`, writing `into`, else a new float32
  // value of `shape`; its id.
  ir::ValueId emit(OpKind op, const std::string& what, std::vector<ir::ValueId> inputs, const Shape& shape,
                   ir::ValueId into = ir::kNoValue);
  // A 1-D int64 constant named after the lowered node and `what` (a Reshape's shape).
  ir::ValueId int64s(const std::string& what, const std::vector<int64_t>& values);
  // A new float32 value of `shape` named after the lowered node and `what`, for a node to write.
  ir::ValueId intermediate(const std::string& what, const Shape& shape);

 private:
  ir::ValueId output(size_t i) const { return i < node_.outputs.size() ? node_.outputs[i] : ir::kNoValue; }

  LoweringBuilder build_;
  ir::Graph& graph_;
  const ir::Node& node_;
};

}  // namespace ucudnn
