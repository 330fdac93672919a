// The descriptor registry and op name table, generated from op_list.h.
#include <cstring>
#include <string>
#include <utility>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

#define UCUDNN_DECLARE_DESCRIBE(name) const OpDescriptor& describe_##name();
UCUDNN_FOR_EACH_OP(UCUDNN_DECLARE_DESCRIBE)
#undef UCUDNN_DECLARE_DESCRIBE

namespace {
const char* const kOpNames[] = {
#define UCUDNN_OP_NAME(name) #name,
    UCUDNN_FOR_EACH_OP(UCUDNN_OP_NAME)
#undef UCUDNN_OP_NAME
};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == static_cast<size_t>(OpKind::kCount));
}  // namespace

const char* op_name(OpKind kind) {
  const int i = static_cast<int>(kind);
  return i >= 0 && i < static_cast<int>(OpKind::kCount) ? kOpNames[i] : "?";
}

bool op_from_name(const char* name, OpKind* kind) {
  for (int i = 0; i < static_cast<int>(OpKind::kCount); ++i) {
    if (std::strcmp(kOpNames[i], name) == 0) {
      *kind = static_cast<OpKind>(i);
      return true;
    }
  }
  return false;
}

const OpDescriptor& op_descriptor(OpKind kind) {
  using Describe = const OpDescriptor& (*)();
  static const Describe table[] = {
#define UCUDNN_OP_DESCRIBE(name) &describe_##name,
      UCUDNN_FOR_EACH_OP(UCUDNN_OP_DESCRIBE)
#undef UCUDNN_OP_DESCRIBE
  };
  return table[static_cast<int>(kind)]();
}

// --- InferContext and attribute-table helpers -------------------------------

Status InferContext::error(const std::string& message) const {
  std::string shapes;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (i) shapes += ", ";
    shapes += has_input(i) ? std::string(dtype_name(inputs_[i].dtype)) + shape_to_string(inputs_[i].shape) : "-";
  }
  return invalid_model(node_.describe() + " with inputs (" + shapes + "): " + message);
}

Status InferContext::unsupported_error(const std::string& message) const {
  Status s = error(message);
  return Status(StatusCode::kUnsupported, s.message());
}

Status InferContext::expect_dtype(size_t i, std::initializer_list<DType> allowed) const {
  if (!has_input(i)) return error("input " + std::to_string(i) + " is required");
  for (DType d : allowed)
    if (inputs_[i].dtype == d) return Status::ok();
  std::string names;
  for (DType d : allowed) names += std::string(names.empty() ? "" : " or ") + dtype_name(d);
  return unsupported_error("input " + std::to_string(i) + " has dtype " + dtype_name(inputs_[i].dtype) +
                           "; ucudnn supports " + names + " here");
}

Status InferContext::expect_constant(size_t i, const char* what) const {
  if (!has_input(i)) return error(std::string(what) + " (input " + std::to_string(i) + ") is required");
  if (inputs_[i].constant == nullptr)
    return unsupported_error(std::string(what) + " (input " + std::to_string(i) +
                             ") must be known when the model is loaded (an initializer or computable from shapes)");
  return Status::ok();
}

Status InferContext::set_broadcast_output(DType dtype) {
  Shape out;
  for (size_t i = 0; i < num_inputs(); ++i) {
    Shape next;
    if (!broadcast_shapes(out, input(i).shape, &next))
      return error("input " + std::to_string(i) + "'s shape " + shape_to_string(input(i).shape) +
                   " does not broadcast with " + shape_to_string(out));
    out = std::move(next);
  }
  set_output(0, dtype, std::move(out));
  return Status::ok();
}

AttrSpec attr_int(const char* name, int64_t v) { return {name, ir::AttrType::kInt, AttrPresence::kDefault, v}; }
AttrSpec attr_float(const char* name, float v) { return {name, ir::AttrType::kFloat, AttrPresence::kDefault, v}; }
AttrSpec attr_string(const char* name, std::string v) {
  return {name, ir::AttrType::kString, AttrPresence::kDefault, std::move(v)};
}
AttrSpec attr_ints(const char* name, std::vector<int64_t> v) {
  return {name, ir::AttrType::kInts, AttrPresence::kDefault, std::move(v)};
}
AttrSpec attr_optional(const char* name, ir::AttrType t) { return {name, t, AttrPresence::kOptional, std::nullopt}; }
AttrSpec attr_required(const char* name, ir::AttrType t) { return {name, t, AttrPresence::kRequired, std::nullopt}; }

Status infer_node_outputs(ir::Graph& graph, ir::NodeId id) {
  ir::Node& node = graph.nodes[static_cast<size_t>(id)];
  UCUDNN_ASSIGN_OR_RETURN(std::vector<ValueInfo> infos, infer_node(graph, node));
  for (size_t i = 0; i < infos.size() && i < node.outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) continue;
    ir::Value& v = graph.value(node.outputs[i]);
    v.dtype = infos[i].dtype;
    v.shape = infos[i].shape;
  }
  return Status::ok();
}

void fill_default_attributes(ir::Node& node) {
  for (const AttrSpec& spec : op_descriptor(node.op).attrs)
    if (spec.presence == AttrPresence::kDefault && !node.attrs.has(spec.name))
      node.attrs.set(spec.name, *spec.default_value);
}

Expected<std::vector<ValueInfo>> infer_node(const ir::Graph& graph, const ir::Node& node) {
  std::vector<ValueInfo> inputs;
  for (ir::ValueId id : node.inputs) {
    if (id == ir::kNoValue) {
      inputs.push_back({});
      continue;
    }
    const ir::Value& v = graph.value(id);
    // The rules' arithmetic on dims (sums, products, windows) trusts that each input's size fits.
    UCUDNN_RETURN_IF_ERROR(checked_nbytes(v.dtype, v.shape, "input '" + v.name + "'").status().with_context(
        node.describe()));
    inputs.push_back({v.dtype, v.shape, v.constant ? &*v.constant : nullptr});
  }
  InferContext ctx(node, std::move(inputs));
  const OpDescriptor& desc = op_descriptor(node.op);
  UCUDNN_RETURN_IF_ERROR(desc.infer(ctx));
  std::vector<ValueInfo> outputs;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    if (ctx.output(i).dtype == DType::kUndefined)
      return internal_error(node.describe() + ": shape rule left output " + std::to_string(i) + " undefined");
    // One check here, where every value gets its shape, so kernels can trust sizes (check_value_sizes).
    const std::string name = i < node.outputs.size() && node.outputs[i] != ir::kNoValue
                                 ? "output '" + graph.value(node.outputs[i]).name + "'"
                                 : "output " + std::to_string(i);
    UCUDNN_RETURN_IF_ERROR(
        checked_nbytes(ctx.output(i).dtype, ctx.output(i).shape, name).status().with_context(node.describe()));
    outputs.push_back(ctx.output(i));
  }
  return outputs;
}

}  // namespace ucudnn
