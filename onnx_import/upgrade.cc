// Older opset forms → the one form each descriptor declares (the newest).
//
// Runs on a PendingNode before attribute validation. Attributes that later
// opsets turned into inputs become constant int64/float inputs:
//   Slice<10 starts/ends/axes, Pad<11 pads/value (Pad-1 calls them paddings), Split<13 split,
//   Squeeze/Unsqueeze<13 axes, Clip<11 min/max, ReduceMean<18 axes, ReduceSum<13 axes,
//   Dropout<12 ratio, Reshape<5 shape.
// BatchNormalization's legacy attributes are dropped when harmless
// (spatial=1, is_test=1, consumed_inputs, and momentum when the descriptor does
// not read it); spatial=0 and is_test=0 (training mode, before opset 7) are rejected.
// Softmax/LogSoftmax keep their form: the descriptor reads the opset for the axis semantics.
//
// Opsets 1 to 6 (Note [legacy broadcasting]): `consumed_inputs` (opset 1's in-place hint) is dropped
// everywhere; Concat-1 defaults its axis to 1; Cast-1 names its target type ("FLOAT"); Selu-1's
// defaults were 1.6732 and 1.0507.
#include <algorithm>
#include <optional>

#include "onnx_import/internal.h"
#include "runtime/ops/reductions.h"

namespace ucudnn::onnx_import {

std::string PendingNode::describe() const {
  return "node '" + name + "' (" + op_name(op) + ", opset " + std::to_string(opset) + ")";
}

namespace {

std::optional<ir::AttrValue> take(PendingNode& node, const char* name) {
  auto it = node.attrs.find(name);
  if (it == node.attrs.end()) return std::nullopt;
  ir::AttrValue v = std::move(it->second);
  node.attrs.erase(it);
  return v;
}

bool declares(const PendingNode& node, const char* name) {
  for (const AttrSpec& s : op_descriptor(node.op).attrs)
    if (std::string(s.name) == name) return true;
  return false;
}

void set_input(PendingNode& node, size_t index, std::string value_name) {
  if (node.inputs.size() <= index) node.inputs.resize(index + 1);
  node.inputs[index] = std::move(value_name);
}

Status wrong_type(const PendingNode& node, const char* name, ir::AttrType want, const ir::AttrValue& got) {
  return invalid_model(node.describe() + ": attribute '" + name + "' must be " + ir::attr_type_name(want) +
                       ", the model gives " + ir::attr_type_name(ir::attr_value_type(got)));
}

// Moves ints attribute `name` to int64 1-D input `index`. Absent: required → error, else nothing.
Status ints_to_input(PendingNode& node, const char* name, size_t index, bool required, const AddConstant& add) {
  std::optional<ir::AttrValue> v = take(node, name);
  if (!v) {
    if (required) return invalid_model(node.describe() + ": required attribute '" + name + "' is missing");
    return Status::ok();
  }
  const auto* ints = std::get_if<std::vector<int64_t>>(&*v);
  if (!ints) return wrong_type(node, name, ir::AttrType::kInts, *v);
  if (node.inputs.size() > index && !node.inputs[index].empty())
    return invalid_model(node.describe() + ": '" + name + "' is given both as attribute and as input");
  set_input(node, index,
            add(node.name + "/" + name, int64_vector_tensor(*ints)));
  return Status::ok();
}

// Moves float attribute `name` to float scalar input `index` when present.
Status float_to_input(PendingNode& node, const char* name, size_t index, const AddConstant& add) {
  std::optional<ir::AttrValue> v = take(node, name);
  if (!v) return Status::ok();
  const auto* f = std::get_if<float>(&*v);
  if (!f) return wrong_type(node, name, ir::AttrType::kFloat, *v);
  if (node.inputs.size() > index && !node.inputs[index].empty())
    return invalid_model(node.describe() + ": '" + name + "' is given both as attribute and as input");
  const float value = *f;
  set_input(node, index, add(node.name + "/" + name, Tensor::from_floats({}, std::span<const float>(&value, 1))));
  return Status::ok();
}

// Note [legacy broadcasting]
// Before opset 7 the binary ops (Add, Sub, Mul, Div, Pow, the comparisons, And, Or, Xor) broadcast only when
// asked (broadcast=1), and then B's shape is a contiguous run of A's dims: its last ones, or those starting
// at `axis`; without broadcast=1 the shapes must be equal. PRelu-6's slope is one value or one per channel
// (axis 1). Numpy broadcasting gives the same result as the trailing-dims rule, so that form is dropped here;
// an `axis` or a required equality becomes the private attribute kLegacyBroadcastAttr, which the importer
// resolves once shapes are known (typed_forms.cc: B reshaped so that numpy broadcasting aligns it
// at `axis`, or the two shapes checked equal) before the node's shape rule runs.
Status upgrade_legacy_broadcast(PendingNode& node) {
  int64_t broadcast = 0;
  if (std::optional<ir::AttrValue> b = take(node, "broadcast")) {
    const auto* i = std::get_if<int64_t>(&*b);
    if (!i) return wrong_type(node, "broadcast", ir::AttrType::kInt, *b);
    broadcast = *i;
  }
  std::optional<ir::AttrValue> axis = take(node, "axis");
  if (broadcast == 0) {
    node.legacy_broadcast = kLegacySameShape;
    return Status::ok();
  }
  if (!axis) return Status::ok();
  const auto* i = std::get_if<int64_t>(&*axis);
  if (!i) return wrong_type(node, "axis", ir::AttrType::kInt, *axis);
  if (*i < 0) return invalid_model(node.describe() + ": axis " + std::to_string(*i) + " must be >= 0");
  node.legacy_broadcast = *i;
  return Status::ok();
}

bool is_legacy_broadcasting(OpKind op) {
  switch (op) {
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kPow:
    case OpKind::kEqual:
    case OpKind::kLess:
    case OpKind::kGreater:
    case OpKind::kAnd:
    case OpKind::kOr:
    case OpKind::kXor: return true;
    default: return false;
  }
}

// Cast-1's `to` is a type name ("FLOAT"); later opsets give TensorProto's number.
Status upgrade_cast(PendingNode& node) {
  auto it = node.attrs.find("to");
  if (it == node.attrs.end()) return Status::ok();  // validation reports it missing
  const auto* name = std::get_if<std::string>(&it->second);
  if (!name) return Status::ok();
  onnx::TensorProto_DataType type;
  if (!onnx::TensorProto_DataType_Parse(*name, &type))
    return invalid_model(node.describe() + ": 'to' names no ONNX type: '" + *name + "'");
  it->second = static_cast<int64_t>(type);
  return Status::ok();
}

void set_default(PendingNode& node, const char* name, float value) {
  if (node.attrs.find(name) == node.attrs.end()) node.attrs[name] = value;
}

Status upgrade_batch_norm(PendingNode& node) {
  if (std::optional<ir::AttrValue> spatial = take(node, "spatial")) {
    const auto* i = std::get_if<int64_t>(&*spatial);
    if (!i) return wrong_type(node, "spatial", ir::AttrType::kInt, *spatial);
    if (*i != 1)
      return unsupported(node.describe() +
                         ": spatial=0 (per-activation statistics) is not supported; only spatial=1");
  }
  if (std::optional<ir::AttrValue> is_test = take(node, "is_test"); node.opset < 7) {
    // Before opset 7 is_test defaulted to 0, training mode: statistics of the batch, not the running ones.
    const auto* i = is_test ? std::get_if<int64_t>(&*is_test) : nullptr;
    if (is_test && !i) return wrong_type(node, "is_test", ir::AttrType::kInt, *is_test);
    if (!i || *i == 0)
      return unsupported(node.describe() + ": is_test=0 (training mode: the batch's own statistics) is not " +
                         "supported; only is_test=1");
  }
  if (!declares(node, "momentum")) take(node, "momentum");  // running-statistics update: training only
  return Status::ok();
}

}  // namespace

bool has_upgrade(OpKind op) {
  switch (op) {
    case OpKind::kSlice:
    case OpKind::kPad:
    case OpKind::kSplit:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
    case OpKind::kClip:
    case OpKind::kDropout:
    case OpKind::kBatchNormalization: return true;
    default: return reduce_kind(op).has_value();
  }
}

Status upgrade_node(PendingNode& node, const AddConstant& add) {
  const int v = node.opset;
  if (v < 7) {
    take(node, "consumed_inputs");
    if (is_legacy_broadcasting(node.op)) UCUDNN_RETURN_IF_ERROR(upgrade_legacy_broadcast(node));
    if (node.op == OpKind::kPRelu) node.legacy_broadcast = 1;
    if (node.op == OpKind::kGemm) take(node, "broadcast");  // C broadcasts the same way since opset 7
  }
  switch (node.op) {
    case OpKind::kReshape:
      if (v < 5) UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "shape", 1, true, add));
      break;
    case OpKind::kConcat:
      if (v < 4 && node.attrs.find("axis") == node.attrs.end()) node.attrs["axis"] = int64_t{1};
      break;
    case OpKind::kCast:
      if (v < 6) UCUDNN_RETURN_IF_ERROR(upgrade_cast(node));
      break;
    case OpKind::kSelu:
      if (v >= 6) break;
      set_default(node, "alpha", 1.6732f);
      set_default(node, "gamma", 1.0507f);
      break;
    case OpKind::kSlice:
      if (v >= 10) break;
      UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "starts", 1, true, add));
      UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "ends", 2, true, add));
      UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "axes", 3, false, add));
      break;
    case OpKind::kPad:
      if (v >= 11) break;
      if (v < 2) {
        if (std::optional<ir::AttrValue> paddings = take(node, "paddings")) node.attrs["pads"] = std::move(*paddings);
      }
      UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "pads", 1, true, add));
      UCUDNN_RETURN_IF_ERROR(float_to_input(node, "value", 2, add));
      break;
    case OpKind::kSplit:
      // Without sizes (and without opset 18's num_outputs) the shape rule splits
      // evenly into as many outputs as listed, the older opsets' meaning.
      if (v < 13) UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "split", 1, false, add));
      break;
    case OpKind::kSqueeze:
      if (v < 13) UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "axes", 1, false, add));
      break;
    case OpKind::kUnsqueeze:
      if (v < 13) UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "axes", 1, true, add));
      break;
    case OpKind::kClip:
      if (v >= 11) break;
      UCUDNN_RETURN_IF_ERROR(float_to_input(node, "min", 1, add));
      UCUDNN_RETURN_IF_ERROR(float_to_input(node, "max", 2, add));
      break;
    case OpKind::kReduceSum:
      if (v < 13) UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "axes", 1, false, add));
      break;
    case OpKind::kDropout:
      if (v >= 12) break;
      take(node, "is_test");
      UCUDNN_RETURN_IF_ERROR(float_to_input(node, "ratio", 1, add));
      break;
    case OpKind::kBatchNormalization: UCUDNN_RETURN_IF_ERROR(upgrade_batch_norm(node)); break;
    default:
      // The other Reduce* ops took their axes as an attribute until opset 18.
      if (reduce_kind(node.op) && v < 18) UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "axes", 1, false, add));
      break;
  }
  return Status::ok();
}

}  // namespace ucudnn::onnx_import
