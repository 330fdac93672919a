// Gradient rules: how each op's backward pass is built, beside its descriptor.
//
// Reverse-mode automatic differentiation over the IR (training/autodiff.h) walks
// the forward nodes in reverse order and calls each one's rule
// (OpDescriptor::gradient) with a GradientContext. The rule reads the forward
// node, the gradients flowing into its outputs, and emits ordinary IR nodes —
// existing ops (Mul, ReduceSum, Transpose, Gemm, ...) or the training ops of
// op_list.h (ConvGradData, ActivationGrad, ...) — then hands each input that
// needs one its gradient. Backward nodes refer to forward values directly (the
// "saved" activations); the arena planner keeps them alive by liveness.
//
// A rule must:
//  - emit nothing for inputs where needs_input_grad(i) is false;
//  - give add_input_grad a value of exactly the input's dtype and shape
//    (reduce_to_shape undoes broadcasting);
//  - refuse, with unsupported(), attributes it does not differentiate.
// Summing the contributions of a value used by several nodes is the driver's.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

class GradientContext {
 public:
  virtual ~GradientContext() = default;

  // The forward node (a copy: stays valid while nodes are appended), and the graph it is in
  // (backward nodes are appended to it, so references into graph() do not survive emit() and
  // add_constant()). value() returns a copy for that reason: `const Shape& s = ctx.value(v).shape`
  // keeps the copy alive and stays valid whatever the rule emits next.
  virtual const ir::Node& node() const = 0;
  virtual const ir::Graph& graph() const = 0;
  ir::Value value(ir::ValueId id) const { return graph().value(id); }
  Shape shape_of(ir::ValueId id) const { return graph().value(id).shape; }
  DType dtype_of(ir::ValueId id) const { return graph().value(id).dtype; }
  ir::ValueId input(size_t i) const { return i < node().inputs.size() ? node().inputs[i] : ir::kNoValue; }
  ir::ValueId output(size_t i) const { return node().outputs[i]; }

  // dLoss/d(output i): a value of the output's dtype and shape, or kNoValue when
  // no gradient flows into that output (e.g. BatchNormTrain's running statistics).
  virtual ir::ValueId output_grad(size_t i) const = 0;
  // Whether input i needs a gradient (it is a parameter, or depends on one, on the
  // way to the loss). False for absent inputs, constants and integer values.
  virtual bool needs_input_grad(size_t i) const = 0;
  // Contributes `grad` (same dtype and shape as input i) to input i's gradient.
  virtual Status add_input_grad(size_t i, ir::ValueId grad) = 0;

  // Appends a node `op` over `inputs` with `attrs` (the op's spec defaults are
  // filled in) and `num_outputs` outputs, runs its shape rule and returns the
  // output values. Names derive from the forward node's ("conv1/grad/ConvGradData").
  virtual Expected<std::vector<ir::ValueId>> emit(OpKind op, std::vector<ir::ValueId> inputs,
                                                  ir::Attributes attrs, size_t num_outputs = 1) = 0;
  // A new constant value holding `tensor`.
  virtual ir::ValueId add_constant(Tensor tensor, const std::string& name_hint) = 0;

  // Unsupported naming the forward node: "cannot train through node 'x' (Op, opset n): why".
  Status unsupported(const std::string& why) const;

  // Helpers over emit().
  // The one output of a single-output node.
  Expected<ir::ValueId> emit1(OpKind op, std::vector<ir::ValueId> inputs, ir::Attributes attrs = {});
  // A constant int64 vector (axes, shapes, pads).
  ir::ValueId int64_constant(const std::vector<int64_t>& values, const std::string& name_hint);
  // A constant float32 scalar of shape [] (broadcasts to anything).
  ir::ValueId float_constant(float value, const std::string& name_hint);
  // `grad` summed over the dimensions broadcasting added or stretched so that it has
  // `target` (a broadcast operand's shape): ReduceSum (+ Reshape); `grad` itself when
  // the shapes already match.
  Expected<ir::ValueId> reduce_to_shape(ir::ValueId grad, const Shape& target);
  // `value` reshaped to `shape` (a Reshape node; `value` itself when already that shape).
  Expected<ir::ValueId> reshape(ir::ValueId value, const Shape& shape);
};

}  // namespace ucudnn
