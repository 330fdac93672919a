// model_info, check_model_imports, read_tensor_file and write_tensor_file (include/ucudnn/ucudnn.h):
// the public face of onnx_import's model summary, its import and tensor files.
#include "onnx_import/onnx_import.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {

// The importer fills the public struct itself (runtime/core/model_info.h): nothing to convert.
Expected<ModelInfo> model_info(const std::string& model_path) { return onnx_import::summarize_model(model_path); }

Status check_model_imports(const std::string& model_path) {
  return onnx_import::load_model(model_path, onnx_import::ImportOptions{}).status();
}

Expected<Tensor> read_tensor_file(const std::string& path) { return onnx_import::read_tensor_file(path); }

Status write_tensor_file(const std::string& path, const std::string& name, const Tensor& tensor) {
  return onnx_import::write_tensor_pb(path, name, tensor);
}

}  // namespace ucudnn
