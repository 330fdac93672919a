// What the importer's lowerings (Note [lowered ops], runtime/ops/lowered_ops.h) write with: lower_each, which
// replaces every node of one op by the nodes a lowering appends and checks them, and LoweringBuilder, which makes
// those nodes and their values.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// lower_each rewrites every node of `kind` in `graph` with `lower`, which appends the nodes computing
// it to `out` (their output values added with the shapes they must have: the node's outputs keep their
// ids). Each new node's own shape rule must agree with those shapes (else an internal error naming both
// nodes); producers are renumbered and the graph validated. `what` names the op in that validation.
using LowerNode = Status (*)(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out);
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

}  // namespace ucudnn
