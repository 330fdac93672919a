// GraphProto → ir::Graph (before shape inference).
//
// Order: initializers become constant values; graph inputs that are not
// initializers become runtime inputs with resolved static shapes, or constants
// when the caller gives their values (ImportOptions::constant_inputs) (old IR
// versions list initializers among the inputs; those stay constants);
// Constant nodes become constant values; every other node is parsed, upgraded
// to its newest form, checked for arity and attributes, and wired to the values
// it reads, which must already exist (ONNX requires topological order: a use
// before the definition is an InvalidModel, a value nobody defines a dangling
// input). Node output dtypes and shapes are left to infer_and_fold.
#include <unordered_map>
#include <unordered_set>

#include "onnx_import/internal.h"

namespace ucudnn::onnx_import {

namespace {

class Builder {
 public:
  Builder(const ModelFile& model, const ImportOptions& options)
      : model_(model), graph_proto_(model.proto.graph()), options_(options) {}

  Expected<ir::Graph> build() {
    graph_.name = graph_proto_.name();
    graph_.opset = model_.opset;
    UCUDNN_RETURN_IF_ERROR(add_initializers());
    UCUDNN_RETURN_IF_ERROR(add_inputs());
    UCUDNN_RETURN_IF_ERROR(index_producers());
    for (int i = 0; i < graph_proto_.node_size(); ++i) UCUDNN_RETURN_IF_ERROR(add_node(static_cast<size_t>(i)));
    for (const onnx::ValueInfoProto& out : graph_proto_.output()) {
      auto it = ids_.find(out.name());
      if (it == ids_.end()) return invalid_model("graph output '" + out.name() + "' is never produced");
      graph_.outputs.push_back(it->second);
    }
    return std::move(graph_);
  }

 private:
  ir::ValueId add_value(ir::Value v) {
    const std::string name = v.name;
    const ir::ValueId id = graph_.add_value(std::move(v));
    ids_[name] = id;
    return id;
  }

  // A name no value and no node output of the model uses, based on `hint`.
  std::string unique_name(const std::string& hint) {
    std::string name = hint;
    for (int k = 1; ids_.count(name) || producers_.count(name); ++k) name = hint + "_" + std::to_string(k);
    return name;
  }

  std::string add_constant(const std::string& hint, Tensor tensor) {
    ir::Value v;
    v.name = unique_name(hint);
    v.dtype = tensor.dtype();
    v.shape = tensor.shape();
    v.constant = std::move(tensor);
    const std::string name = v.name;
    add_value(std::move(v));
    return name;
  }

  Status add_initializers() {
    if (graph_proto_.sparse_initializer_size() > 0)
      return unsupported("sparse initializer '" + graph_proto_.sparse_initializer(0).values().name() +
                         "' is not supported");
    for (const onnx::TensorProto& init : graph_proto_.initializer()) {
      const std::string what = "initializer '" + init.name() + "'";
      if (init.name().empty()) return invalid_model("an initializer has no name");
      if (ids_.count(init.name())) return invalid_model(what + " is defined twice");
      UCUDNN_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(init, model_.dir, what));
      add_constant(init.name(), std::move(t));
    }
    return Status::ok();
  }

  Status add_inputs() {
    UCUDNN_ASSIGN_OR_RETURN(const SymbolBindings bindings, bind_given_shapes(graph_proto_, options_));
    std::unordered_set<std::string> runtime_inputs;
    for (const onnx::ValueInfoProto& in : graph_proto_.input()) {
      if (ids_.count(in.name())) {
        if (runtime_inputs.count(in.name())) return invalid_model("graph input '" + in.name() + "' is listed twice");
        continue;  // an initializer listed among the inputs: a constant
      }
      const std::string what = "graph input '" + in.name() + "'";
      if (in.name().empty()) return invalid_model("a graph input has no name");
      if (!in.has_type() || !in.type().has_tensor_type())
        return unsupported(what + " is not a tensor (sequences, maps and optionals are not supported)");
      const int elem = in.type().tensor_type().elem_type();
      const DType dtype = dtype_from_onnx(elem);
      // Any dtype a Tensor can hold is accepted here; each op's shape rule says
      // which dtypes it computes on (most: float32 only).
      if (dtype == DType::kUndefined)
        return unsupported(what + " has dtype " + onnx_dtype_name(elem) + ", which ucudnn cannot represent");
      UCUDNN_ASSIGN_OR_RETURN(Shape shape, resolve_input_shape(in, options_, bindings));
      UCUDNN_RETURN_IF_ERROR(check_input_size(in.name(), dtype, shape, options_.batch));
      runtime_inputs.insert(in.name());
      ir::Value v;
      v.name = in.name();
      v.dtype = dtype;
      v.shape = std::move(shape);
      auto constant = options_.constant_inputs.find(in.name());
      if (constant != options_.constant_inputs.end()) {
        if (constant->second.dtype() != dtype)
          return invalid_argument(what + " is declared " + onnx_dtype_name(elem) +
                                  "; the value given for it at load is " + constant->second.describe());
        if (constant->second.empty()) return invalid_argument(what + ": the value given for it at load holds no data");
        // A copy the graph owns (the caller may reuse its buffer): a constant like an initializer, not an input.
        UCUDNN_ASSIGN_OR_RETURN(v.constant, constant->second.clone());
        add_value(std::move(v));
        continue;
      }
      graph_.inputs.push_back(add_value(std::move(v)));
    }
    UCUDNN_RETURN_IF_ERROR(check_given_names("a shape", options_.input_shapes, runtime_inputs));
    return check_given_names("a value", options_.constant_inputs, runtime_inputs);
  }

  // Every name in `given` (input_shapes, constant_inputs) is a graph input that is not an initializer.
  template <typename Map>
  Status check_given_names(const char* kind, const Map& given, const std::unordered_set<std::string>& inputs) {
    for (const auto& entry : given) {
      if (inputs.count(entry.first)) continue;
      std::string list;
      for (const onnx::ValueInfoProto& in : graph_proto_.input())
        if (inputs.count(in.name())) list += (list.empty() ? "" : ", ") + in.name();
      return invalid_argument(std::string(kind) + " is given for '" + entry.first +
                              "', which is not a runtime input of the model (inputs: " + list + ")");
    }
    return Status::ok();
  }

  // Which node defines each name, to tell "defined later" from "never defined".
  Status index_producers() {
    for (int i = 0; i < graph_proto_.node_size(); ++i) {
      for (const std::string& out : graph_proto_.node(i).output()) {
        if (out.empty()) continue;
        if (ids_.count(out) || producers_.count(out))
          return invalid_model(describe_node_proto(model_.proto, graph_proto_.node(i), static_cast<size_t>(i)) +
                               ": output '" + out + "' is already defined (ONNX values are assigned once)");
        producers_[out] = static_cast<size_t>(i);
      }
    }
    return Status::ok();
  }

  Expected<ir::ValueId> lookup_input(const std::string& name, const std::string& who) {
    if (name.empty()) return ir::kNoValue;
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    auto p = producers_.find(name);
    if (p != producers_.end())
      return invalid_model(who + " uses '" + name + "' before " +
                           describe_node_proto(model_.proto, graph_proto_.node(static_cast<int>(p->second)), p->second) +
                           " defines it (nodes must be in topological order)");
    return invalid_model(who + " has a dangling input '" + name +
                         "': no node produces it and it is neither an initializer nor a graph input");
  }

  Status add_constant_node(const PendingNode& node) {
    if (node.outputs.size() != 1 || node.outputs[0].empty())
      return invalid_model(node.describe() + ": Constant must have exactly one output");
    if (!node.inputs.empty()) return invalid_model(node.describe() + ": Constant takes no inputs");
    if (node.attrs.size() != 1)
      return invalid_model(node.describe() + ": Constant needs exactly one value attribute, the model gives " +
                           std::to_string(node.attrs.size()));
    const auto& [attr, value] = *node.attrs.begin();
    Tensor t;
    if (attr == "value" && std::holds_alternative<Tensor>(value)) {
      t = std::get<Tensor>(value);
    } else if (attr == "value_float" && std::holds_alternative<float>(value)) {
      t = Tensor::from_floats({}, std::span<const float>(&std::get<float>(value), 1));
    } else if (attr == "value_floats" && std::holds_alternative<std::vector<float>>(value)) {
      const auto& v = std::get<std::vector<float>>(value);
      t = float_vector_tensor(v);
    } else if (attr == "value_int" && std::holds_alternative<int64_t>(value)) {
      t = Tensor::from_int64s({}, std::span<const int64_t>(&std::get<int64_t>(value), 1));
    } else if (attr == "value_ints" && std::holds_alternative<std::vector<int64_t>>(value)) {
      const auto& v = std::get<std::vector<int64_t>>(value);
      t = int64_vector_tensor(v);
    } else if (attr == "value_string" || attr == "value_strings" || attr == "sparse_value") {
      return unsupported(node.describe() + ": Constant with '" + attr + "' is not supported");
    } else {
      return invalid_model(node.describe() + ": Constant attribute '" + attr + "' of type " +
                           ir::attr_type_name(ir::attr_value_type(value)) + " is not a Constant value");
    }
    ir::Value v;
    v.name = node.outputs[0];
    v.dtype = t.dtype();
    v.shape = t.shape();
    v.constant = std::move(t);
    add_value(std::move(v));
    return Status::ok();
  }

  Status add_node(size_t index) {
    const onnx::NodeProto& proto = graph_proto_.node(static_cast<int>(index));
    PendingNode node;
    node.name = node_proto_name(proto, index);
    if (!import_op(proto.op_type(), model_.opset, &node.op, &node.opset))  // find_unsupported_nodes ran before
      return unsupported(describe_node_proto(model_.proto, proto, index) + ": op is not implemented");
    node.inputs.assign(proto.input().begin(), proto.input().end());
    node.outputs.assign(proto.output().begin(), proto.output().end());
    const std::string who = node.describe();
    if (proto.attribute_size() > 0 && node.op == OpKind::kConstant)
      for (const onnx::AttributeProto& a : proto.attribute())
        if (a.name() == "sparse_value" || a.name() == "value_string" || a.name() == "value_strings")
          return unsupported(who + ": Constant with '" + a.name() + "' is not supported");
    UCUDNN_ASSIGN_OR_RETURN(node.attrs, parse_attributes(proto, model_.dir, who));
    if (node.op == OpKind::kConstant) return add_constant_node(node);

    UCUDNN_RETURN_IF_ERROR(
        upgrade_node(node, [this](const std::string& hint, Tensor t) { return add_constant(hint, std::move(t)); }));
    while (!node.inputs.empty() && node.inputs.back().empty()) node.inputs.pop_back();
    while (!node.outputs.empty() && node.outputs.back().empty()) node.outputs.pop_back();

    const OpDescriptor& desc = op_descriptor(node.op);
    const auto n_in = static_cast<int>(node.inputs.size());
    const auto n_out = static_cast<int>(node.outputs.size());
    if (n_in < desc.min_inputs || n_in > desc.max_inputs)
      return invalid_model(who + ": has " + std::to_string(n_in) + " inputs; " + op_name(node.op) + " takes " +
                           std::to_string(desc.min_inputs) + " to " + std::to_string(desc.max_inputs));
    if (n_out < desc.min_outputs || n_out > desc.max_outputs)
      return invalid_model(who + ": has " + std::to_string(n_out) + " outputs; " + op_name(node.op) + " gives " +
                           std::to_string(desc.min_outputs) + " to " + std::to_string(desc.max_outputs));

    ir::Node out;
    out.name = node.name;
    out.op = node.op;
    out.opset = node.opset;
    UCUDNN_RETURN_IF_ERROR(validate_attributes(desc, std::move(node.attrs), who, &out.attrs));
    if (node.legacy_broadcast) out.attrs.set(kLegacyBroadcastAttr, *node.legacy_broadcast);
    for (const std::string& name : node.inputs) {
      UCUDNN_ASSIGN_OR_RETURN(ir::ValueId id, lookup_input(name, who));
      out.inputs.push_back(id);
    }
    const auto node_id = static_cast<ir::NodeId>(graph_.nodes.size());
    for (const std::string& name : node.outputs) {
      if (name.empty()) {
        out.outputs.push_back(ir::kNoValue);
        continue;
      }
      ir::Value v;
      v.name = name;
      v.producer = node_id;
      out.outputs.push_back(add_value(std::move(v)));
    }
    graph_.nodes.push_back(std::move(out));
    return Status::ok();
  }

  const ModelFile& model_;
  const onnx::GraphProto& graph_proto_;
  const ImportOptions& options_;
  ir::Graph graph_;
  std::unordered_map<std::string, ir::ValueId> ids_;   // values defined so far
  std::unordered_map<std::string, size_t> producers_;  // node outputs → node index
};

}  // namespace

Expected<ir::Graph> build_graph(const ModelFile& model, const ImportOptions& options) {
  return Builder(model, options).build();
}

}  // namespace ucudnn::onnx_import
