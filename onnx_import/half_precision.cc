// widen_half_precision (internal.h): a model's float16 and bfloat16 values become float32 between its
// inputs and outputs, before shape inference (Note [half-precision models]).
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "onnx_import/internal.h"

namespace ucudnn::onnx_import {

// Note [half-precision models]
// A model exported in float16 (`model.half()`) or holding bfloat16 tensors runs as exported at its
// edges and in float32 inside: the kernels compute float32 only (native half kernels and a
// `--precision` for float32 models are later work, issue 41). Before shape inference:
//  - every float16/bfloat16 constant (initializers, Constant nodes, tensor attributes such as
//    ConstantOfShape's value) is converted to float32 at load, exactly: every half value is a float;
//  - a graph input of half type stays half (the caller feeds half tensors) and is read through a
//    Cast to float32 inserted after it; a Cast may read the half input directly (it converts from
//    any type exactly as through float32), so Casts keep the input itself;
//  - a graph output declared half is written by a Cast from the float32 value, under the output's
//    name (the float32 value is renamed "<name>/float32");
//  - an explicit Cast(to = FLOAT16 | BFLOAT16) keeps its half output, whose rounding the model asked
//    for, and is followed by a Cast back to float32 for the nodes reading it; a CastLike whose
//    target is a half value known before inference (a graph input, a constant, such a Cast's
//    output) becomes that Cast;
//  - EyeLike(dtype = half) computes float32 (its 0s and 1s are exact in either).
// So no value between the edges is half, and every shape rule and kernel sees float32. What this
// loses against a half computation is only its rounding: each op's result is float32's, nearer the
// exact one than the half a half kernel would give (a CastLike to a value that is half only through
// inference, Relu(half input) say, casts to float32). An op whose other attribute names a half
// dtype is refused by name rather than computed in another type.

namespace {

bool is_half(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }
bool is_half_code(int64_t onnx_code) { return is_half(dtype_from_onnx(static_cast<int>(onnx_code))); }

constexpr int64_t kOnnxFloat = 1;  // TensorProto FLOAT

// Attributes that name a data type: an op of this list other than Cast and EyeLike with a half
// type there is refused (the descriptors of today have no other; a later op lands here first).
constexpr const char* kDtypeAttributes[] = {"to", "dtype", "output_dtype"};

class Widening {
 public:
  Widening(ir::Graph& graph, const onnx::GraphProto& proto) : graph_(graph), proto_(proto) {}

  Status run() {
    bool any = false;
    for (const ir::Value& v : graph_.values) any |= is_half(v.dtype);
    for (const onnx::ValueInfoProto& out : proto_.output())
      any |= out.type().has_tensor_type() && is_half_code(out.type().tensor_type().elem_type());
    for (const ir::Node& node : graph_.nodes) any |= names_half(node);
    if (!any) return Status::ok();  // a float32 model is left exactly as it was

    UCUDNN_RETURN_IF_ERROR(widen_constants());
    const int opset = std::max(graph_.opset, 13);
    for (ir::ValueId id : graph_.inputs)
      if (is_half(graph_.value(id).dtype)) widened_[id] = add_cast(id, kOnnxFloat, "to_float32", opset);
    for (ir::Node& node : graph_.nodes) UCUDNN_RETURN_IF_ERROR(widen_node(std::move(node), opset));
    UCUDNN_RETURN_IF_ERROR(narrow_outputs(opset));
    graph_.nodes = std::move(nodes_);
    for (size_t n = 0; n < graph_.nodes.size(); ++n)
      for (ir::ValueId id : graph_.nodes[n].outputs)
        if (id != ir::kNoValue) graph_.value(id).producer = static_cast<ir::NodeId>(n);
    return Status::ok();
  }

 private:
  static bool names_half(const ir::Node& node) {
    for (const char* name : kDtypeAttributes)
      if (node.attrs.has(name) && std::holds_alternative<int64_t>(node.attrs.all().at(name)) &&
          is_half_code(node.attrs.get_int(name)))
        return true;
    for (const auto& [name, value] : node.attrs.all())
      if (const Tensor* t = std::get_if<Tensor>(&value); t && is_half(t->dtype())) return true;
    return false;
  }

  // Initializers, Constant nodes' values and folded-in constants (all constant values by now), and
  // the tensor attributes of nodes.
  Status widen_constants() {
    for (size_t id = 0; id < graph_.values.size(); ++id) {
      ir::Value& v = graph_.values[id];
      if (!v.constant || !is_half(v.dtype)) continue;
      UCUDNN_ASSIGN_OR_RETURN(Tensor wide, convert_floating(*v.constant, DType::kFloat32));
      model_dtype_[static_cast<ir::ValueId>(id)] = v.dtype;
      v.constant = std::move(wide);
      v.dtype = DType::kFloat32;
    }
    for (ir::Node& node : graph_.nodes) {
      std::vector<std::pair<std::string, Tensor>> widened;
      for (const auto& [name, value] : node.attrs.all())
        if (const Tensor* t = std::get_if<Tensor>(&value); t && is_half(t->dtype())) {
          auto wide = convert_floating(*t, DType::kFloat32);
          if (!wide) return wide.status().with_context(node.describe() + ": attribute '" + name + "'");
          widened.emplace_back(name, std::move(*wide));
        }
      for (auto& [name, tensor] : widened) node.attrs.set(name, std::move(tensor));
    }
    return Status::ok();
  }

  // The dtype `id` has in the model as far as it is known before inference: a graph input's, a
  // constant's (before widen_constants), an explicit Cast's; kUndefined for other node outputs.
  DType model_dtype(ir::ValueId id) const {
    const auto it = model_dtype_.find(id);
    return it != model_dtype_.end() ? it->second : graph_.value(id).dtype;
  }

  // A Cast of `src` to ONNX type `to`, appended to the new node list, writing a new value named
  // "<src>/<what>"; its id. The dtype is left to shape inference, as for every node output here.
  ir::ValueId add_cast(ir::ValueId src, int64_t to, const std::string& what, int opset) {
    ir::Value out;
    out.name = graph_.unused_value_name(graph_.value(src).name + "/" + what);
    const ir::ValueId dst = graph_.add_value(std::move(out));
    nodes_.push_back(cast_node(graph_.value(dst).name, src, dst, to, opset));
    return dst;
  }

  static ir::Node cast_node(const std::string& name, ir::ValueId src, ir::ValueId dst, int64_t to, int opset) {
    ir::Node cast;
    cast.name = name;
    cast.op = OpKind::kCast;
    cast.opset = opset;
    cast.inputs = {src};
    cast.outputs = {dst};
    cast.attrs.set("to", to);
    fill_default_attributes(cast);
    return cast;
  }

  ir::ValueId widened(ir::ValueId id) const {
    const auto it = widened_.find(id);
    return it == widened_.end() ? id : it->second;
  }

  Status widen_node(ir::Node node, int opset) {
    // CastLike to a value known to be half: the Cast it means, whose rounding is kept below.
    if (node.op == OpKind::kCastLike && node.inputs.size() > 1 && is_half(model_dtype(node.inputs[1]))) {
      ir::Node cast = cast_node(node.name, node.inputs[0], node.outputs[0], dtype_to_onnx(model_dtype(node.inputs[1])),
                                node.opset);
      if (node.attrs.has("saturate")) cast.attrs.set("saturate", node.attrs.get_int("saturate"));
      node = std::move(cast);
    }
    // A Cast (and a CastLike, which becomes one) converts from a half input exactly as from its float32
    // widening: it reads the value itself.
    const bool is_cast = node.op == OpKind::kCast || node.op == OpKind::kCastLike;
    for (size_t i = is_cast ? 1 : 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] != ir::kNoValue) node.inputs[i] = widened(node.inputs[i]);

    if (node.op == OpKind::kEyeLike && node.attrs.has("dtype") && is_half_code(node.attrs.get_int("dtype")))
      node.attrs.set("dtype", kOnnxFloat);
    if (node.op != OpKind::kCast)
      for (const char* name : kDtypeAttributes)
        if (node.attrs.has(name) && std::holds_alternative<int64_t>(node.attrs.all().at(name)) &&
            is_half_code(node.attrs.get_int(name)))
          return unsupported(node.describe() + ": attribute '" + name + "' names " +
                             onnx_dtype_name(static_cast<int>(node.attrs.get_int(name))) +
                             "; ucudnn computes half-precision models in float32 (Note [half-precision models]) "
                             "and cannot widen this op's output");
    const bool casts_to_half = node.op == OpKind::kCast && is_half_code(node.attrs.get_int("to"));
    const ir::ValueId y = node.outputs.empty() ? ir::kNoValue : node.outputs[0];
    const DType half = casts_to_half ? dtype_from_onnx(static_cast<int>(node.attrs.get_int("to"))) : DType::kUndefined;
    nodes_.push_back(std::move(node));
    if (casts_to_half && y != ir::kNoValue) {
      model_dtype_[y] = half;
      widened_[y] = add_cast(y, kOnnxFloat, "to_float32", opset);
    }
    return Status::ok();
  }

  // Graph outputs declared half that the widened graph computes in float32: a Cast to the declared
  // type writes them, under the output's name.
  Status narrow_outputs(int opset) {
    std::map<ir::ValueId, ir::ValueId> narrowed;
    for (int i = 0; i < proto_.output_size() && i < static_cast<int>(graph_.outputs.size()); ++i) {
      const onnx::ValueInfoProto& declared = proto_.output(i);
      if (!declared.type().has_tensor_type() || !is_half_code(declared.type().tensor_type().elem_type())) continue;
      ir::ValueId& out = graph_.outputs[static_cast<size_t>(i)];
      // A half input passed through, or an explicit Cast's half output (a widened constant is not).
      if (is_half(model_dtype(out)) && !graph_.value(out).constant) continue;
      if (const auto done = narrowed.find(out); done != narrowed.end()) {
        out = done->second;
        continue;
      }
      const std::string name = graph_.value(out).name;
      graph_.value(out).name = graph_.unused_value_name(name + "/float32");
      ir::Value half;
      half.name = name;
      const ir::ValueId dst = graph_.add_value(std::move(half));
      nodes_.push_back(cast_node(name, out, dst, declared.type().tensor_type().elem_type(), opset));
      narrowed[out] = dst;
      out = dst;
    }
    return Status::ok();
  }

  ir::Graph& graph_;
  const onnx::GraphProto& proto_;
  std::vector<ir::Node> nodes_;                // the rewritten nodes, in order
  std::map<ir::ValueId, ir::ValueId> widened_;  // a half value -> its float32 Cast, for the nodes reading it
  std::map<ir::ValueId, DType> model_dtype_;    // widened constants and explicit Casts' outputs: their half dtype
};

}  // namespace

Status widen_half_precision(ir::Graph& graph, const onnx::GraphProto& proto) {
  return Widening(graph, proto).run().with_context("widening the half-precision model to float32");
}

}  // namespace ucudnn::onnx_import
