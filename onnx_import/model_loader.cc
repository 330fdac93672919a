// Reading a .onnx file into a ModelProto, with the checks that need nothing
// but the file: it exists, is a regular non-empty file, parses as a ModelProto,
// has a graph and a supported IR version. The opset range is checked by the
// callers (load_model rejects, summarize_model reports).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "onnx_import/internal.h"

namespace ucudnn::onnx_import {

namespace fs = std::filesystem;

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

Expected<ModelFile> read_model_file(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return not_found("model file '" + path + "' does not exist");
  if (!fs::is_regular_file(st)) return invalid_model("'" + path + "' is not a file");

  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot open model file '" + path + "'");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return io_error("cannot read model file '" + path + "'");
  const std::string bytes = buf.str();
  if (bytes.empty()) return invalid_model("model file '" + path + "' is empty");

  ModelFile model;
  model.path = path;
  model.dir = fs::path(path).parent_path().string();
  if (model.dir.empty()) model.dir = ".";
  if (!model.proto.ParseFromString(bytes))
    return invalid_model("'" + path + "' is not an ONNX model (protobuf parse failed; truncated or another format?)");
  const onnx::ModelProto& proto = model.proto;
  if (proto.ir_version() <= 0 || !proto.has_graph())
    return invalid_model("'" + path + "' is not an ONNX model (no IR version or no graph)");
  if (proto.ir_version() < 3)
    return unsupported("'" + path + "' has IR version " + std::to_string(proto.ir_version()) +
                       "; ucudnn reads IR version 3 and later");
  if (proto.graph().output_size() == 0)
    return invalid_model("'" + path + "': the graph has no outputs (truncated or inconsistent model)");

  int opset_count = 0;
  for (const onnx::OperatorSetIdProto& id : proto.opset_import()) {
    if (!is_default_domain(id.domain())) continue;
    ++opset_count;
    model.opset = static_cast<int>(std::clamp<int64_t>(id.version(), 0, 1 << 20));
  }
  if (opset_count > 1)
    return invalid_model("'" + path + "' imports the default domain's opset more than once");
  return model;
}

}  // namespace ucudnn::onnx_import
