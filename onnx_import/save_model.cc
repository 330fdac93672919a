// save_model_with_initializers (onnx_import.h): the original ModelProto with new initializer
// data — how training hands its weights back as an ONNX model. Every replacement is checked against
// the model before anything is written; the rest of the proto is kept as it was read.
#include <filesystem>
#include <unordered_map>

#include "onnx_import/internal.h"
#include "runtime/core/file_io.h"

namespace ucudnn::onnx_import {

namespace fs = std::filesystem;

namespace {

// The model's initializers by name; InvalidModel when a name appears twice.
Expected<std::unordered_map<std::string, onnx::TensorProto*>> initializers_by_name(ModelFile& model) {
  std::unordered_map<std::string, onnx::TensorProto*> by_name;
  for (onnx::TensorProto& proto : *model.proto.mutable_graph()->mutable_initializer())
    if (!by_name.emplace(proto.name(), &proto).second)
      return invalid_model("'" + model.path + "' has two initializers named '" + proto.name() + "'");
  return by_name;
}

bool is_float_initializer(const onnx::TensorProto& proto) {
  return proto.data_type() == onnx::TensorProto::FLOAT || proto.data_type() == onnx::TensorProto::FLOAT16 ||
         proto.data_type() == onnx::TensorProto::BFLOAT16;
}

// The new data must fit the initializer it replaces: float32 (of a float32, float16 or bfloat16
// initializer: a half-precision model trains in float32, Note [half-precision models]), the same shape.
Status check_replacement(const ModelFile& model, const onnx::TensorProto& proto, const Tensor& tensor) {
  const std::string what = "initializer '" + proto.name() + "' of '" + model.path + "'";
  if (!is_float_initializer(proto))
    return invalid_argument(what + " has dtype " + onnx_dtype_name(proto.data_type()) +
                            "; only float32, float16 and bfloat16 initializers are replaced");
  if (tensor.dtype() != DType::kFloat32 || tensor.empty())
    return invalid_argument(what + ": the new value " + tensor.describe() + " must be a float32 tensor with data");
  UCUDNN_ASSIGN_OR_RETURN(const Shape shape, tensor_proto_shape(proto, what));
  if (shape != tensor.shape())
    return invalid_argument(what + " has shape " + shape_to_string(shape) + "; the new value is " +
                            tensor.describe());
  return Status::ok();
}

// Initializers kept in external files stay valid only when the output sits beside the input.
Status check_external_data(const ModelFile& model, const std::string& out_path,
                           const std::map<std::string, Tensor>& replaced) {
  std::string out_dir = fs::path(out_path).parent_path().string();
  if (out_dir.empty()) out_dir = ".";
  std::error_code ec;
  if (fs::equivalent(model.dir, out_dir, ec)) return Status::ok();
  for (const onnx::TensorProto& proto : model.proto.graph().initializer())
    if (proto.data_location() == onnx::TensorProto::EXTERNAL && replaced.count(proto.name()) == 0)
      return invalid_argument("initializer '" + proto.name() + "' of '" + model.path +
                              "' lives in an external data file next to it; write '" + out_path +
                              "' into the same folder (or replace that initializer too)");
  return Status::ok();
}

}  // namespace

// Applies `splits` (see onnx_import.h) to the model's graph.
Status apply_splits(ModelFile& model, const std::vector<InitializerSplit>& splits) {
  onnx::GraphProto& graph = *model.proto.mutable_graph();
  for (const InitializerSplit& split : splits) {
    UCUDNN_ASSIGN_OR_RETURN(auto by_name, initializers_by_name(model));
    const auto from = by_name.find(split.from);
    if (from == by_name.end())
      return not_found("'" + model.path + "' has no initializer named '" + split.from + "' to split");
    if (by_name.count(split.to)) return invalid_argument("'" + model.path + "' already has an initializer '" + split.to + "'");
    onnx::NodeProto* node = nullptr;
    for (int i = 0; i < graph.node_size() && node == nullptr; ++i)
      if (node_proto_name(graph.node(i), static_cast<size_t>(i)) == split.node) node = graph.mutable_node(i);
    if (node == nullptr || split.input >= static_cast<size_t>(node->input_size()) ||
        node->input(static_cast<int>(split.input)) != split.from)
      return not_found("'" + model.path + "' has no node '" + split.node + "' reading '" + split.from + "' as input " +
                       std::to_string(split.input));
    onnx::TensorProto copy = *from->second;
    copy.set_name(split.to);
    *graph.add_initializer() = std::move(copy);
    node->set_input(static_cast<int>(split.input), split.to);
  }
  return Status::ok();
}

// A name to replace that is not an initializer but the output of an Identity of one — how
// PyTorch's exporter writes a parameter whose initial value equals another's (a fresh model's
// BatchNorm scales) — becomes an initializer of its own (a copy of the Identity's input) and the
// Identity node goes: training gave the two values different contents.
Status materialize_identities(ModelFile& model, const std::map<std::string, Tensor>& initializers) {
  onnx::GraphProto& graph = *model.proto.mutable_graph();
  for (const auto& [name, tensor] : initializers) {
    UCUDNN_ASSIGN_OR_RETURN(auto by_name, initializers_by_name(model));
    if (by_name.count(name)) continue;
    for (int i = 0; i < graph.node_size(); ++i) {
      const onnx::NodeProto& node = graph.node(i);
      if (node.op_type() != "Identity" || node.output_size() != 1 || node.output(0) != name ||
          node.input_size() != 1 || !by_name.count(node.input(0)))
        continue;
      onnx::TensorProto copy = *by_name.at(node.input(0));
      copy.set_name(name);
      *graph.add_initializer() = std::move(copy);
      graph.mutable_node()->DeleteSubrange(i, 1);
      break;
    }
  }
  return Status::ok();
}

Status save_model_with_initializers(const std::string& in_path, const std::string& out_path,
                                    const std::map<std::string, Tensor>& initializers,
                                    const std::vector<InitializerSplit>& splits) {
  UCUDNN_ASSIGN_OR_RETURN(ModelFile model, read_model_file(in_path));
  UCUDNN_RETURN_IF_ERROR(apply_splits(model, splits));
  UCUDNN_RETURN_IF_ERROR(materialize_identities(model, initializers));
  UCUDNN_ASSIGN_OR_RETURN(auto by_name, initializers_by_name(model));
  for (const auto& [name, tensor] : initializers) {
    const auto found = by_name.find(name);
    if (found == by_name.end())
      return not_found("'" + in_path + "' has no initializer named '" + name + "' to replace");
    UCUDNN_RETURN_IF_ERROR(check_replacement(model, *found->second, tensor));
  }
  UCUDNN_RETURN_IF_ERROR(check_external_data(model, out_path, initializers));
  for (const auto& [name, tensor] : initializers) {
    onnx::TensorProto* proto = by_name.at(name);
    const DType stored = dtype_from_onnx(proto->data_type());  // a half initializer stays half, rounded
    UCUDNN_ASSIGN_OR_RETURN(const Tensor data, convert_floating(tensor, stored));
    tensor_to_proto(data, name, proto);
  }

  std::string bytes;
  if (!model.proto.SerializeToString(&bytes))
    return invalid_argument("cannot serialize the model for '" + out_path +
                            "' (protobuf refuses messages of 2 GiB and more: keep large weights in external data)");
  return write_file_atomically(out_path, bytes);
}

}  // namespace ucudnn::onnx_import
