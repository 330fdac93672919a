// ONNX AttributeProto → ir::AttrValue, then validation against the op's
// descriptor: every attribute the model sets must be declared with the same
// type; declared ones with a spec default are filled in when absent, so
// kernels and shape rules read them without repeating defaults.
#include "onnx_import/internal.h"

namespace ucudnn::onnx_import {

namespace {

using onnx::AttributeProto;

// IR version 1 attributes may lack `type`: infer it from the field that is set.
AttributeProto::AttributeType effective_type(const AttributeProto& a) {
  if (a.type() != AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return AttributeProto::FLOAT;
  if (a.has_i()) return AttributeProto::INT;
  if (a.has_s()) return AttributeProto::STRING;
  if (a.has_t()) return AttributeProto::TENSOR;
  if (a.has_g()) return AttributeProto::GRAPH;
  if (a.floats_size()) return AttributeProto::FLOATS;
  if (a.ints_size()) return AttributeProto::INTS;
  if (a.strings_size()) return AttributeProto::STRINGS;
  return AttributeProto::UNDEFINED;
}

std::string onnx_attr_type_name(AttributeProto::AttributeType t) {
  switch (t) {
    case AttributeProto::FLOAT: return "float";
    case AttributeProto::INT: return "int";
    case AttributeProto::STRING: return "string";
    case AttributeProto::TENSOR: return "tensor";
    case AttributeProto::GRAPH: return "graph";
    case AttributeProto::SPARSE_TENSOR: return "sparse tensor";
    case AttributeProto::TYPE_PROTO: return "type";
    case AttributeProto::FLOATS: return "floats";
    case AttributeProto::INTS: return "ints";
    case AttributeProto::STRINGS: return "strings";
    case AttributeProto::TENSORS: return "tensors";
    case AttributeProto::GRAPHS: return "graphs";
    case AttributeProto::SPARSE_TENSORS: return "sparse tensors";
    case AttributeProto::TYPE_PROTOS: return "types";
    default: return "undefined";
  }
}

}  // namespace

Expected<RawAttributes> parse_attributes(const onnx::NodeProto& node, const std::string& base_dir,
                                         const std::string& who) {
  RawAttributes out;
  for (const AttributeProto& a : node.attribute()) {
    const std::string what = who + ": attribute '" + a.name() + "'";
    if (a.name().empty()) return invalid_model(who + ": an attribute has no name");
    if (out.count(a.name())) return invalid_model(what + " is set twice");
    if (!a.ref_attr_name().empty())
      return unsupported(what + " refers to a function attribute ('" + a.ref_attr_name() + "')");
    const AttributeProto::AttributeType type = effective_type(a);
    switch (type) {
      case AttributeProto::FLOAT: out[a.name()] = a.f(); break;
      case AttributeProto::INT: out[a.name()] = static_cast<int64_t>(a.i()); break;
      case AttributeProto::STRING: out[a.name()] = a.s(); break;
      case AttributeProto::INTS: out[a.name()] = std::vector<int64_t>(a.ints().begin(), a.ints().end()); break;
      case AttributeProto::FLOATS: out[a.name()] = std::vector<float>(a.floats().begin(), a.floats().end()); break;
      case AttributeProto::TENSOR: {
        UCUDNN_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(a.t(), base_dir, what));
        out[a.name()] = std::move(t);
        break;
      }
      case AttributeProto::UNDEFINED: return invalid_model(what + " has no type and no value");
      default: return unsupported(what + " has type " + onnx_attr_type_name(type) + ", which ucudnn does not read");
    }
  }
  return out;
}

Status validate_attributes(const OpDescriptor& desc, RawAttributes raw, const std::string& who,
                           ir::Attributes* out) {
  for (const auto& [name, value] : raw) {
    const AttrSpec* spec = nullptr;
    for (const AttrSpec& s : desc.attrs)
      if (name == s.name) spec = &s;
    if (spec == nullptr) {
      std::string known;
      for (const AttrSpec& s : desc.attrs) known += std::string(known.empty() ? "" : ", ") + s.name;
      return unsupported(who + ": attribute '" + name + "' is not supported" +
                         (known.empty() ? std::string(" (the op takes no attributes)")
                                        : " (ucudnn reads " + known + ")"));
    }
    if (ir::attr_value_type(value) != spec->type)
      return invalid_model(who + ": attribute '" + name + "' must be " + ir::attr_type_name(spec->type) +
                           ", the model gives " + ir::attr_type_name(ir::attr_value_type(value)));
  }
  for (const AttrSpec& s : desc.attrs) {
    auto it = raw.find(s.name);
    if (it != raw.end()) {
      out->set(s.name, std::move(it->second));
      continue;
    }
    switch (s.presence) {
      case AttrPresence::kRequired:
        return invalid_model(who + ": required attribute '" + std::string(s.name) + "' is missing");
      case AttrPresence::kDefault:
        if (!s.default_value)
          return internal_error(who + ": descriptor declares a default for '" + s.name + "' but gives none");
        out->set(s.name, *s.default_value);
        break;
      case AttrPresence::kOptional: break;
    }
  }
  return Status::ok();
}

}  // namespace ucudnn::onnx_import
