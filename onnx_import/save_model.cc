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

// The new data must fit the initializer it replaces: float32 on both sides, the same shape.
Status check_replacement(const ModelFile& model, const onnx::TensorProto& proto, const Tensor& tensor) {
  const std::string what = "initializer '" + proto.name() + "' of '" + model.path + "'";
  if (proto.data_type() != onnx::TensorProto::FLOAT)
    return invalid_argument(what + " has dtype " + onnx_dtype_name(proto.data_type()) +
                            "; only float32 initializers are replaced");
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

Status save_model_with_initializers(const std::string& in_path, const std::string& out_path,
                                    const std::map<std::string, Tensor>& initializers) {
  UCUDNN_ASSIGN_OR_RETURN(ModelFile model, read_model_file(in_path));
  UCUDNN_ASSIGN_OR_RETURN(auto by_name, initializers_by_name(model));
  for (const auto& [name, tensor] : initializers) {
    const auto found = by_name.find(name);
    if (found == by_name.end())
      return not_found("'" + in_path + "' has no initializer named '" + name + "' to replace");
    UCUDNN_RETURN_IF_ERROR(check_replacement(model, *found->second, tensor));
  }
  UCUDNN_RETURN_IF_ERROR(check_external_data(model, out_path, initializers));
  for (const auto& [name, tensor] : initializers) tensor_to_proto(tensor, name, by_name.at(name));

  std::string bytes;
  if (!model.proto.SerializeToString(&bytes))
    return invalid_argument("cannot serialize the model for '" + out_path +
                            "' (protobuf refuses messages of 2 GiB and more: keep large weights in external data)");
  return write_file_atomically(out_path, bytes);
}

}  // namespace ucudnn::onnx_import
