// Static shapes: graph inputs get the user's shapes — checked against the
// declaration: they set symbolic dims, never static ones — or their declared dims
// (a symbolic one = the value a given shape set for its name, else the batch);
// inputs whose values are given at load become constants. Every node's outputs then get the dtype and
// shape its op's rule computes, in topological order, folding constant nodes
// as they come so that shape computations (Shape → Gather → Concat → Reshape)
// are constants by the time a rule needs them. The model's own declarations of
// output shapes are only compared against, never trusted over the rules.
#include <algorithm>

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

namespace {

// The shape given for graph input `name` (input_shapes, or a constant input's
// own shape), or null.
const Shape* given_shape(const ImportOptions& options, const std::string& name) {
  auto shape = options.input_shapes.find(name);
  if (shape != options.input_shapes.end()) return &shape->second;
  auto constant = options.constant_inputs.find(name);
  if (constant != options.constant_inputs.end()) return &constant->second.shape();
  return nullptr;
}

// Checks `shape`, given for `input`, against its declaration: rank and static dims
// equal (a given shape fixes symbolic dims, never changes the model), each
// symbolic name bound to one value across all inputs (recorded in `bindings`,
// with the input that bound it in `bound_by`).
Status check_given_shape(const onnx::ValueInfoProto& input, const Shape& shape, SymbolBindings* bindings,
                         std::map<std::string, std::string>* bound_by) {
  const onnx::TypeProto::Tensor& tt = input.type().tensor_type();
  const std::string what = "graph input '" + input.name() + "'";
  for (int64_t d : shape)
    if (d < 0) return invalid_argument(what + ": the given shape " + shape_to_string(shape) + " has a negative dim");
  if (!tt.has_shape()) return Status::ok();  // the model leaves it open
  const std::string declared = declared_dims(tt.shape());
  if (tt.shape().dim_size() != static_cast<int>(shape.size()))
    return invalid_argument(what + " has rank " + std::to_string(tt.shape().dim_size()) + " in the model " + declared +
                            "; the given shape " + shape_to_string(shape) + " has rank " +
                            std::to_string(shape.size()));
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    const int64_t given = shape[static_cast<size_t>(i)];
    if (d.has_dim_value() && d.dim_value() != given)
      return invalid_argument(what + " is declared " + declared + " in the model; the given shape " +
                              shape_to_string(shape) + " differs in dim " + std::to_string(i) + " (" +
                              std::to_string(given) + ", not " + std::to_string(d.dim_value()) + ")");
    if (d.has_dim_value() || !d.has_dim_param() || d.dim_param().empty()) continue;
    auto [it, inserted] = bindings->emplace(d.dim_param(), given);
    if (inserted) {
      (*bound_by)[d.dim_param()] = input.name();
    } else if (it->second != given) {
      return invalid_argument("the given shapes set dim '" + d.dim_param() + "' to " + std::to_string(it->second) +
                              " (graph input '" + (*bound_by)[d.dim_param()] + "') and to " + std::to_string(given) +
                              " (" + what + " " + shape_to_string(shape) + "); a symbolic dim has one value");
    }
  }
  return Status::ok();
}

// a * b, false on int64 overflow (both non-negative).
bool multiply(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

}  // namespace

Expected<SymbolBindings> bind_given_shapes(const onnx::GraphProto& graph, const ImportOptions& options) {
  for (const auto& [name, tensor] : options.constant_inputs)
    if (options.input_shapes.count(name))
      return invalid_argument("graph input '" + name +
                              "' is given both a shape and a constant value; give only the value");
  SymbolBindings bindings;
  std::map<std::string, std::string> bound_by;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    const Shape* shape = given_shape(options, input.name());
    if (shape && input.type().has_tensor_type())
      UCUDNN_RETURN_IF_ERROR(check_given_shape(input, *shape, &bindings, &bound_by));
  }
  return bindings;
}

Expected<Shape> resolve_input_shape(const onnx::ValueInfoProto& input, const ImportOptions& options,
                                    const SymbolBindings& bindings) {
  const onnx::TypeProto::Tensor& tt = input.type().tensor_type();
  const std::string what = "graph input '" + input.name() + "'";
  if (const Shape* given = given_shape(options, input.name())) return *given;  // checked by bind_given_shapes
  if (!tt.has_shape())
    return invalid_argument(what + " declares no shape; give its shape when loading the model");
  if (options.batch <= 0)
    return invalid_argument("the batch size must be positive, got " + std::to_string(options.batch));
  Shape shape;
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value()) {
      // A name another input's given shape bound keeps that value; any other is the batch.
      auto bound = d.has_dim_param() ? bindings.find(d.dim_param()) : bindings.end();
      shape.push_back(bound != bindings.end() ? bound->second : options.batch);
      continue;
    }
    if (d.dim_value() < 0)
      return invalid_model(what + " declares a negative dimension in " + declared_dims(tt.shape()));
    shape.push_back(d.dim_value());
  }
  return shape;
}

Status check_input_size(const std::string& name, DType dtype, const Shape& shape, int64_t batch) {
  int64_t bytes = static_cast<int64_t>(dtype_size(dtype));
  for (int64_t d : shape)
    if (!multiply(bytes, d, &bytes))
      return invalid_argument("graph input '" + name + "' would be " + dtype_name(dtype) + shape_to_string(shape) +
                              ", 2^63 bytes or more, which no buffer can hold; check the batch (" +
                              std::to_string(batch) + ") and the given shapes");
  return Status::ok();
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

namespace {

// An op that needs an operand at load (a Reshape's shape) fails when that operand is
// an int64 graph input: the error then says how to give its value at load.
Status with_constant_input_hint(const ir::Graph& graph, const ir::Node& node, Status status) {
  if (status.code() != StatusCode::kUnsupported) return status;
  for (ir::ValueId id : node.inputs) {
    if (id == ir::kNoValue) continue;
    const ir::Value& v = graph.value(id);
    const bool runtime_input = std::find(graph.inputs.begin(), graph.inputs.end(), id) != graph.inputs.end();
    if (runtime_input && v.dtype == DType::kInt64)
      return Status(status.code(), status.message() + "; it reads graph input '" + v.name +
                                       "': give its value at load (SessionOptions::constant_inputs, or `ucudnn "
                                       "run --input " + v.name + "=FILE`)");
  }
  return status;
}

}  // namespace

Status infer_and_fold(ir::Graph& graph, const ImportOptions& options) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    UCUDNN_RETURN_IF_ERROR(rewrite_typed_forms(graph, n));
    auto inferred = infer_node(graph, graph.nodes[n]);
    if (!inferred) return with_constant_input_hint(graph, graph.nodes[n], inferred.status());
    std::vector<ValueInfo> outputs = std::move(*inferred);
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
