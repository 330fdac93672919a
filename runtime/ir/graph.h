// The IR: a graph of nodes over values, in topological order.
//
// Values are named tensors with a static dtype and shape (symbolic dims are
// resolved by the importer). A value is a graph input, an initializer/folded
// constant (`constant` set), or the output of exactly one node. Nodes refer to
// values by index; an absent optional input is kNoValue.
//
// The IR is direction-agnostic: a later training pass appends backward nodes
// (and kernels carry a direction), so nothing here assumes inference only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/attributes.h"
#include "runtime/ir/op_list.h"

namespace ucudnn::ir {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;

struct Value {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  std::optional<Tensor> constant;  // initializers and folded constants
  NodeId producer = -1;            // -1 for graph inputs and constants
};

struct Node {
  std::string name;    // ONNX node name, or "<op_type>_<index>" when the model gives none
  OpKind op = OpKind::kIdentity;
  int opset = 0;       // default-domain opset version the model imports
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attributes attrs;

  // "node 'conv1' (Conv, opset 13)" — the prefix of every error about this node.
  std::string describe() const;
};

struct Graph {
  std::string name;
  int opset = 0;
  std::vector<Value> values;
  std::vector<Node> nodes;           // topologically sorted
  std::vector<ValueId> inputs;       // runtime inputs (initializers excluded)
  std::vector<ValueId> outputs;

  ValueId add_value(Value v);
  // Index of the value named `name`, or kNoValue.
  ValueId find_value(const std::string& name) const;
  // `hint`, or `hint` with a number appended: a name no value has (for values a pass adds).
  std::string unused_value_name(const std::string& hint) const;

  const Value& value(ValueId id) const { return values[static_cast<size_t>(id)]; }
  Value& value(ValueId id) { return values[static_cast<size_t>(id)]; }

  // Checks the invariants above: indices in range, one producer per value,
  // topological order, every node input defined before use; then check_value_sizes.
  // For the importer, tests and passes.
  Status validate() const;
  // Removes nodes not needed for any output and values no node or output uses.
  void prune();
};

// Every value's dims are non-negative and its byte size fits (checked_nbytes, runtime/core/tensor.h):
// InvalidArgument naming the value, its shape and size otherwise. Kernels, the arena planner and
// the executor compute sizes and offsets from these shapes with plain arithmetic because of this
// check; the shape rules run it on every input and output (infer_node), the executor before it
// allocates.
Status check_value_sizes(const Graph& graph);

}  // namespace ucudnn::ir
