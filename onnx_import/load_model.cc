// load_model: the import pipeline (see onnx_import.h and internal.h).
// File-level problems name the path; node-level ones name the node (the shape
// rules' messages are passed on unchanged).
#include "onnx_import/internal.h"
#include "onnx_import/lowering/lowering.h"

namespace ucudnn::onnx_import {

Expected<ir::Graph> load_model(const std::string& path, const ImportOptions& options) {
  if (options.batch <= 0)
    return invalid_argument("the batch size must be positive, got " + std::to_string(options.batch));
  UCUDNN_ASSIGN_OR_RETURN(ModelFile model, read_model_file(path));
  bool default_domain_nodes = false;
  for (const onnx::NodeProto& node : model.proto.graph().node())
    default_domain_nodes |= is_default_domain(node.domain());
  if (model.opset == 0 && default_domain_nodes)
    return invalid_model("'" + path + "' has ONNX nodes but imports no opset of the default ONNX domain");
  if (model.opset != 0 && (model.opset < kMinOpset || model.opset > kMaxOpset))
    return unsupported("'" + path + "' uses opset " + std::to_string(model.opset) +
                       " of the default ONNX domain; ucudnn supports opsets " + std::to_string(kMinOpset) +
                       " to " + std::to_string(kMaxOpset));
  const std::vector<std::string> problems = find_unsupported_nodes(model.proto);
  if (!problems.empty()) {
    std::string message = "'" + path + "' has " + std::to_string(problems.size()) + " unsupported node" +
                          (problems.size() == 1 ? "" : "s") + ":";
    for (const std::string& line : problems) message += "\n  " + line;
    return unsupported(message);
  }
  UCUDNN_ASSIGN_OR_RETURN(ir::Graph graph, build_graph(model, options));
  UCUDNN_RETURN_IF_ERROR(widen_half_precision(graph, model.proto.graph()));  // Note [half-precision models]
  const bool as_declared = inputs_as_declared(graph, model.proto.graph());
  UCUDNN_RETURN_IF_ERROR(infer_and_fold(graph, options));
  UCUDNN_RETURN_IF_ERROR(lower_composite_ops(graph));  // Note [lowered ops]
  UCUDNN_RETURN_IF_ERROR(check_declared_outputs(graph, model.proto.graph(), as_declared));
  return graph;
}

}  // namespace ucudnn::onnx_import
