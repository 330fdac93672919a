// Graph helpers: lookup, validation, pruning.
#include "runtime/ir/graph.h"

#include <unordered_map>

namespace ucudnn::ir {

std::string Node::describe() const {
  return "node '" + name + "' (" + op_name(op) + ", opset " + std::to_string(opset) + ")";
}

ValueId Graph::add_value(Value v) {
  values.push_back(std::move(v));
  return static_cast<ValueId>(values.size() - 1);
}

ValueId Graph::find_value(const std::string& name) const {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].name == name) return static_cast<ValueId>(i);
  return kNoValue;
}

std::string Graph::unused_value_name(const std::string& hint) const {
  std::string name = hint;
  for (int k = 1; find_value(name) != kNoValue; ++k) name = hint + "_" + std::to_string(k);
  return name;
}

Status Graph::validate() const {
  const auto n_values = static_cast<ValueId>(values.size());
  std::vector<bool> defined(values.size(), false);
  for (ValueId id : inputs) {
    if (id < 0 || id >= n_values) return internal_error("graph input index out of range");
    defined[id] = true;
  }
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].constant) defined[i] = true;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    for (ValueId id : node.inputs) {
      if (id == kNoValue) continue;
      if (id < 0 || id >= n_values) return internal_error(node.describe() + ": input index out of range");
      if (!defined[id])
        return internal_error(node.describe() + ": input '" + values[id].name + "' used before it is defined");
    }
    for (ValueId id : node.outputs) {
      if (id == kNoValue) continue;
      if (id < 0 || id >= n_values) return internal_error(node.describe() + ": output index out of range");
      if (defined[id]) return internal_error(node.describe() + ": output '" + values[id].name + "' defined twice");
      if (values[id].producer != static_cast<NodeId>(n))
        return internal_error(node.describe() + ": output '" + values[id].name + "' has the wrong producer");
      defined[id] = true;
    }
  }
  for (ValueId id : outputs)
    if (id < 0 || id >= n_values || !defined[id]) return internal_error("graph output is never defined");
  return check_value_sizes(*this);
}

Status check_value_sizes(const Graph& graph) {
  for (const Value& v : graph.values)
    UCUDNN_RETURN_IF_ERROR(checked_nbytes(v.dtype, v.shape, "value '" + v.name + "'").status());
  return Status::ok();
}

void Graph::prune() {
  std::vector<bool> needed(values.size(), false);
  for (ValueId id : outputs) needed[id] = true;
  std::vector<bool> keep_node(nodes.size(), false);
  for (size_t n = nodes.size(); n-- > 0;) {
    bool any = false;
    for (ValueId id : nodes[n].outputs)
      if (id != kNoValue && needed[id]) any = true;
    if (!any) continue;
    keep_node[n] = true;
    for (ValueId id : nodes[n].outputs)  // a kept node writes all its outputs
      if (id != kNoValue) needed[id] = true;
    for (ValueId id : nodes[n].inputs)
      if (id != kNoValue) needed[id] = true;
  }
  for (ValueId id : inputs) needed[id] = true;

  std::vector<ValueId> new_value_id(values.size(), kNoValue);
  std::vector<Value> new_values;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!needed[i]) continue;
    new_value_id[i] = static_cast<ValueId>(new_values.size());
    new_values.push_back(std::move(values[i]));
  }
  std::vector<Node> new_nodes;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (!keep_node[n]) continue;
    Node node = std::move(nodes[n]);
    for (ValueId& id : node.inputs)
      if (id != kNoValue) id = new_value_id[id];
    for (ValueId& id : node.outputs) {
      if (id == kNoValue) continue;
      id = new_value_id[id];
      new_values[id].producer = static_cast<NodeId>(new_nodes.size());
    }
    new_nodes.push_back(std::move(node));
  }
  for (ValueId& id : inputs) id = new_value_id[id];
  for (ValueId& id : outputs) id = new_value_id[id];
  values = std::move(new_values);
  nodes = std::move(new_nodes);
}

}  // namespace ucudnn::ir
