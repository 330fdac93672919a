// OpDescriptor: everything about an op that does not depend on a backend —
// arity, attributes (ONNX names, spec defaults), the shape/dtype rule and FLOPs.
//
// One descriptor per op, defined in runtime/ops/<family>.cc as
// `const OpDescriptor& describe_<Op>()`; the registry (op_registry.cc) is
// generated from op_list.h. The importer validates attributes against
// `attrs` and fills defaults; the shape rule then runs on static shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

class GradientContext;  // runtime/ops/gradient.h

// What a shape rule sees of one input or output value.
struct ValueInfo {
  DType dtype = DType::kUndefined;  // kUndefined for an absent optional input
  Shape shape;
  const Tensor* constant = nullptr;  // set when the value is known at import (initializer, folded)
};

class InferContext {
 public:
  InferContext(const ir::Node& node, std::vector<ValueInfo> inputs)
      : node_(node), inputs_(std::move(inputs)), outputs_(node.outputs.size()) {}

  const ir::Node& node() const { return node_; }
  const ir::Attributes& attrs() const { return node_.attrs; }
  int opset() const { return node_.opset; }

  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i].dtype != DType::kUndefined; }
  const ValueInfo& input(size_t i) const { return inputs_[i]; }

  size_t num_outputs() const { return outputs_.size(); }
  ValueInfo& output(size_t i) { return outputs_[i]; }
  const ValueInfo& output(size_t i) const { return outputs_[i]; }
  void set_output(size_t i, DType dtype, Shape shape) { outputs_[i] = ValueInfo{dtype, std::move(shape), nullptr}; }

  // An InvalidModel status prefixed with the node's description and input shapes.
  Status error(const std::string& message) const;
  // An Unsupported status prefixed the same way (valid ONNX we do not implement).
  Status unsupported_error(const std::string& message) const;
  // Fails unless input i is present and has one of `allowed` dtypes.
  Status expect_dtype(size_t i, std::initializer_list<DType> allowed) const;
  // Fails unless input i is a constant (known at import); e.g. Reshape's shape.
  Status expect_constant(size_t i, const char* what) const;
  // Output 0 gets `dtype` and the broadcast (numpy's rule) of every input's shape; an error naming the
  // input that does not broadcast.
  Status set_broadcast_output(DType dtype);

 private:
  const ir::Node& node_;
  std::vector<ValueInfo> inputs_;
  std::vector<ValueInfo> outputs_;
};

enum class AttrPresence {
  kRequired,  // the model must set it
  kDefault,   // the spec's default applies when absent (stored in `default_value`)
  kOptional,  // may be absent, no default (e.g. Conv's kernel_shape); check with attrs().has()
};

struct AttrSpec {
  const char* name;
  ir::AttrType type;
  AttrPresence presence;
  std::optional<ir::AttrValue> default_value;
};

// Helpers to write attribute tables tersely.
AttrSpec attr_int(const char* name, int64_t default_value);
AttrSpec attr_float(const char* name, float default_value);
AttrSpec attr_string(const char* name, std::string default_value);
AttrSpec attr_ints(const char* name, std::vector<int64_t> default_value);
AttrSpec attr_optional(const char* name, ir::AttrType type);
AttrSpec attr_required(const char* name, ir::AttrType type);

struct OpDescriptor {
  OpKind kind;
  int min_inputs = 1, max_inputs = 1;
  int min_outputs = 1, max_outputs = 1;
  int min_opset = 1;             // oldest default-domain opset version we implement
  std::vector<AttrSpec> attrs;   // every attribute the op reads; others are rejected
  // Sets every output's dtype and shape from the inputs and attributes; returns
  // a clear error for inconsistent shapes or unsupported dtypes.
  Status (*infer)(InferContext& ctx) = nullptr;
  // Floating-point operations (multiply-add = 2) once shapes are known; nullptr → 0.
  int64_t (*flops)(const InferContext& ctx) = nullptr;
  // True for ops only ucudnn's own passes create (the training ops): the importer refuses them.
  bool internal = false;
  // The gradient rule (runtime/ops/gradient.h): emits the nodes computing the gradients of the
  // node's inputs from those of its outputs. nullptr: the op cannot be trained through.
  Status (*gradient)(GradientContext& ctx) = nullptr;
};

const OpDescriptor& op_descriptor(OpKind kind);

// Runs the op's shape rule for a node of `graph`, reading its input values.
Expected<std::vector<ValueInfo>> infer_node(const ir::Graph& graph, const ir::Node& node);
// For passes that add or change nodes: infer_node for node `id`, then its output values get the
// dtypes and shapes the rule gives them (unchanged when it refuses the node).
Status infer_node_outputs(ir::Graph& graph, ir::NodeId id);
// Sets every attribute of `node`'s op that has a spec default and that `node` lacks, as the
// importer leaves nodes (for passes that create nodes).
void fill_default_attributes(ir::Node& node);

}  // namespace ucudnn
