// model_info, check_model_imports, read_tensor_file and write_tensor_file (include/ucudnn/ucudnn.h):
// the public face of onnx_import's model summary, its import and tensor files.
#include "onnx_import/onnx_import.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

namespace {
std::vector<ModelInfo::Io> public_io(const std::vector<onnx_import::ModelSummary::IoInfo>& list) {
  std::vector<ModelInfo::Io> out;
  for (const auto& io : list) out.push_back({io.name, io.dtype, io.dims});
  return out;
}
}  // namespace

Expected<ModelInfo> model_info(const std::string& model_path) {
  UCUDNN_ASSIGN_OR_RETURN(onnx_import::ModelSummary summary, onnx_import::summarize_model(model_path));
  ModelInfo info;
  info.ir_version = summary.ir_version;
  info.opset = summary.opset;
  info.producer = summary.producer;
  info.inputs = public_io(summary.inputs);
  info.outputs = public_io(summary.outputs);
  info.op_counts = summary.op_counts;
  info.unsupported = summary.unsupported;
  info.parameter_count = summary.parameter_count;
  return info;
}

Status check_model_imports(const std::string& model_path) {
  return onnx_import::load_model(model_path, onnx_import::ImportOptions{}).status();
}

Expected<Tensor> read_tensor_file(const std::string& path) { return onnx_import::read_tensor_file(path); }

Status write_tensor_file(const std::string& path, const std::string& name, const Tensor& tensor) {
  return onnx_import::write_tensor_pb(path, name, tensor);
}

}  // namespace ucudnn
