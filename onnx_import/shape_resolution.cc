// Static shapes: graph inputs get the user's shapes or their declared dims
// (symbolic ones = the batch); every node's outputs then get the dtype and
// shape its op's rule computes, in topological order, folding constant nodes
// as they come so that shape computations (Shape → Gather → Concat → Reshape)
// are constants by the time a rule needs them. The model's own declarations of
// output shapes are only compared against, never trusted over the rules.
#include "onnx_import/internal.h"

namespace ucudnn::onnx_import {

namespace {

std::string declared_dims(const onnx::TensorShapeProto& shape) {
  std::string s = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    if (i) s += ", ";
    const auto& d = shape.dim(i);
    s += d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?";
  }
  return s + "]";
}

}  // namespace

Expected<Shape> resolve_input_shape(const onnx::ValueInfoProto& input, const ImportOptions& options) {
  const onnx::TypeProto::Tensor& tt = input.type().tensor_type();
  const std::string what = "graph input '" + input.name() + "'";
  auto given = options.input_shapes.find(input.name());
  if (given != options.input_shapes.end()) {
    const Shape& shape = given->second;
    if (tt.has_shape() && tt.shape().dim_size() != static_cast<int>(shape.size()))
      return invalid_argument(what + " has rank " + std::to_string(tt.shape().dim_size()) + " in the model " +
                              declared_dims(tt.shape()) + "; the given shape " + shape_to_string(shape) +
                              " has rank " + std::to_string(shape.size()));
    for (int64_t d : shape)
      if (d < 0) return invalid_argument(what + ": the given shape " + shape_to_string(shape) + " has a negative dim");
    return shape;
  }
  if (!tt.has_shape())
    return invalid_argument(what + " declares no shape; give its shape when loading the model");
  if (options.batch <= 0)
    return invalid_argument("the batch size must be positive, got " + std::to_string(options.batch));
  Shape shape;
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value()) {
      shape.push_back(options.batch);  // dim_param, or no value at all
      continue;
    }
    if (d.dim_value() < 0)
      return invalid_model(what + " declares a negative dimension in " + declared_dims(tt.shape()));
    shape.push_back(d.dim_value());
  }
  return shape;
}

bool inputs_as_declared(const ir::Graph& graph, const onnx::GraphProto& proto) {
  for (ir::ValueId id : graph.inputs) {
    const ir::Value& v = graph.value(id);
    const onnx::ValueInfoProto* declared = nullptr;
    for (const onnx::ValueInfoProto& in : proto.input())
      if (in.name() == v.name) declared = &in;
    if (!declared || !declared->type().tensor_type().has_shape()) return false;
    const auto& dims = declared->type().tensor_type().shape().dim();
    if (dims.size() != static_cast<int>(v.shape.size())) return false;
    for (int i = 0; i < dims.size(); ++i)
      if (!dims[i].has_dim_value() || dims[i].dim_value() != v.shape[static_cast<size_t>(i)]) return false;
  }
  return true;
}

Status infer_and_fold(ir::Graph& graph, const ImportOptions& options) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    UCUDNN_ASSIGN_OR_RETURN(std::vector<ValueInfo> outputs, infer_node(graph, graph.nodes[n]));
    const ir::Node& node = graph.nodes[n];
    for (size_t i = 0; i < node.outputs.size() && i < outputs.size(); ++i) {
      if (node.outputs[i] == ir::kNoValue) continue;
      ir::Value& v = graph.value(node.outputs[i]);
      v.dtype = outputs[i].dtype;
      v.shape = outputs[i].shape;
    }
    if (options.fold_constants) {
      UCUDNN_ASSIGN_OR_RETURN(bool folded, fold_node(graph, static_cast<ir::NodeId>(n)));
      (void)folded;
    }
  }
  if (options.fold_constants) remove_folded_nodes(graph);
  graph.prune();
  return graph.validate().with_context("after import");
}

Status check_declared_outputs(const ir::Graph& graph, const onnx::GraphProto& proto, bool compare_dims) {
  for (int i = 0; i < proto.output_size() && i < static_cast<int>(graph.outputs.size()); ++i) {
    const onnx::ValueInfoProto& declared = proto.output(i);
    if (!declared.has_type() || !declared.type().has_tensor_type()) continue;
    const onnx::TypeProto::Tensor& tt = declared.type().tensor_type();
    const ir::Value& v = graph.value(graph.outputs[static_cast<size_t>(i)]);
    const std::string ours = std::string(dtype_name(v.dtype)) + shape_to_string(v.shape);
    const std::string theirs =
        onnx_dtype_name(tt.elem_type()) + (tt.has_shape() ? declared_dims(tt.shape()) : std::string("[...]"));
    bool mismatch = tt.elem_type() != 0 && dtype_from_onnx(tt.elem_type()) != v.dtype;
    if (tt.has_shape()) {
      if (tt.shape().dim_size() != static_cast<int>(v.shape.size())) {
        mismatch = true;
      } else if (compare_dims) {
        for (int d = 0; d < tt.shape().dim_size(); ++d)
          if (tt.shape().dim(d).has_dim_value() && tt.shape().dim(d).dim_value() != v.shape[static_cast<size_t>(d)])
            mismatch = true;
      }
    }
    if (mismatch)
      return invalid_model("graph output '" + v.name + "' is declared " + theirs + " but the model computes " + ours);
  }
  return Status::ok();
}

}  // namespace ucudnn::onnx_import
