// summarize_model: what `ucudnn info` prints. Reads the ModelProto only — no
// shapes are resolved and unsupported ops are listed rather than fatal.
#include <unordered_set>

#include "onnx_import/internal.h"

namespace ucudnn::onnx_import {

namespace {

ModelInfo::Io io_info(const onnx::ValueInfoProto& v) {
  ModelInfo::Io info;
  info.name = v.name();
  const onnx::TypeProto& type = v.type();
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      info.dtype = onnx_dtype_name(type.tensor_type().elem_type());
      if (!type.tensor_type().has_shape()) {
        info.dims.push_back("unknown rank");
        break;
      }
      for (const auto& d : type.tensor_type().shape().dim())
        info.dims.push_back(d.has_dim_value() ? std::to_string(d.dim_value())
                            : d.has_dim_param() ? d.dim_param()
                                                : "?");
      break;
    }
    case onnx::TypeProto::kSequenceType: info.dtype = std::string("sequence"); break;
    case onnx::TypeProto::kMapType: info.dtype = std::string("map"); break;
    case onnx::TypeProto::kOptionalType: info.dtype = std::string("optional"); break;
    default: info.dtype = std::string("?"); break;
  }
  return info;
}

}  // namespace

Expected<ModelInfo> summarize_model(const std::string& path) {
  UCUDNN_ASSIGN_OR_RETURN(ModelFile model, read_model_file(path));
  const onnx::ModelProto& proto = model.proto;
  const onnx::GraphProto& graph = proto.graph();
  ModelInfo s;
  s.ir_version = proto.ir_version();
  s.opset = model.opset;
  s.producer = proto.producer_name();
  if (!proto.producer_version().empty()) s.producer += (s.producer.empty() ? "" : " ") + proto.producer_version();

  std::unordered_set<std::string> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) {
    initializers.insert(init.name());
    UCUDNN_ASSIGN_OR_RETURN(Shape shape, tensor_proto_shape(init, "initializer '" + init.name() + "'"));
    s.parameter_count += shape_numel(shape);
  }
  for (const onnx::ValueInfoProto& in : graph.input())
    if (!initializers.count(in.name())) s.inputs.push_back(io_info(in));
  for (const onnx::ValueInfoProto& out : graph.output()) s.outputs.push_back(io_info(out));

  for (const onnx::NodeProto& node : graph.node())
    ++s.op_counts[is_default_domain(node.domain()) ? node.op_type() : node.domain() + "." + node.op_type()];

  if (model.opset == 0) {
    for (const onnx::NodeProto& node : graph.node())
      if (is_default_domain(node.domain())) {
        s.unsupported.push_back("model: has ONNX nodes but imports no opset of the default ONNX domain");
        break;
      }
  } else if (model.opset < kMinOpset || model.opset > kMaxOpset)
    s.unsupported.push_back("model: opset " + std::to_string(model.opset) +
                            " of the default domain; ucudnn supports opsets " + std::to_string(kMinOpset) + " to " +
                            std::to_string(kMaxOpset));
  for (std::string& line : find_unsupported_nodes(proto)) s.unsupported.push_back(std::move(line));
  return s;
}

}  // namespace ucudnn::onnx_import
