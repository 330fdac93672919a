// Which nodes the importer can take, decided from the NodeProtos alone, so that
// load_model can list every unsupported node in one error and summarize_model
// can list them without failing.
#include <algorithm>

#include "onnx_import/internal.h"

namespace ucudnn::onnx_import {

namespace {

// The opset version the model imports for `domain`; 0 when it imports none.
int64_t domain_opset(const onnx::ModelProto& model, const std::string& domain) {
  const bool want_default = is_default_domain(domain);
  for (const onnx::OperatorSetIdProto& id : model.opset_import())
    if (want_default ? is_default_domain(id.domain()) : id.domain() == domain) return id.version();
  return 0;
}

}  // namespace

bool import_op(const std::string& op_type, int opset, OpKind* kind, int* node_opset) {
  struct Deprecated {
    const char* name;
    OpKind replacement;
    int since;
  };
  static const Deprecated kDeprecated[] = {{"Scatter", OpKind::kScatterElements, 11}};
  for (const Deprecated& d : kDeprecated)
    if (op_type == d.name) {
      *kind = d.replacement;
      *node_opset = std::max(opset, d.since);
      return true;
    }
  *node_opset = opset;
  return op_from_name(op_type.c_str(), kind) && !op_descriptor(*kind).internal;
}

std::string node_proto_name(const onnx::NodeProto& node, size_t index) {
  return node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
}

std::string describe_node_proto(const onnx::ModelProto& model, const onnx::NodeProto& node, size_t index) {
  const std::string op = is_default_domain(node.domain()) ? node.op_type() : node.domain() + "." + node.op_type();
  return "node '" + node_proto_name(node, index) + "' (" + op + ", opset " +
         std::to_string(domain_opset(model, node.domain())) + ")";
}

std::vector<std::string> find_unsupported_nodes(const onnx::ModelProto& model) {
  std::vector<std::string> lines;
  const onnx::GraphProto& graph = model.graph();
  const int64_t opset = domain_opset(model, "");
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const std::string who = describe_node_proto(model, node, static_cast<size_t>(i));
    if (!is_default_domain(node.domain())) {
      lines.push_back(who + ": domain '" + node.domain() + "' is not supported (ucudnn implements the default ONNX domain)");
      continue;
    }
    OpKind kind;
    int node_opset = 0;
    if (!import_op(node.op_type(), static_cast<int>(opset), &kind, &node_opset)) {
      lines.push_back(who + ": op '" + node.op_type() + "' is not implemented by ucudnn");
      continue;
    }
    const OpDescriptor& desc = op_descriptor(kind);
    if (node_opset < desc.min_opset && !has_upgrade(kind))
      lines.push_back(who + ": ucudnn implements " + node.op_type() + " from opset " +
                      std::to_string(desc.min_opset) + " on");
  }
  return lines;
}

}  // namespace ucudnn::onnx_import
