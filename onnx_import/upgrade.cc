// Older opset forms → the one form each descriptor declares (the newest).
//
// Runs on a PendingNode before attribute validation. Attributes that later
// opsets turned into inputs become constant int64/float inputs:
//   Slice<10 starts/ends/axes, Pad<11 pads/value, Split<13 split,
//   Squeeze/Unsqueeze<13 axes, Clip<11 min/max, ReduceMean<18 axes, ReduceSum<13 axes,
//   Dropout<12 ratio.
// BatchNormalization's legacy attributes are dropped when harmless
// (spatial=1, is_test, consumed_inputs, and momentum when the descriptor does
// not read it); spatial=0 is rejected. Softmax/LogSoftmax keep their form: the
// descriptor reads the opset for the axis semantics.
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

Status upgrade_batch_norm(PendingNode& node) {
  if (std::optional<ir::AttrValue> spatial = take(node, "spatial")) {
    const auto* i = std::get_if<int64_t>(&*spatial);
    if (!i) return wrong_type(node, "spatial", ir::AttrType::kInt, *spatial);
    if (*i != 1)
      return unsupported(node.describe() +
                         ": spatial=0 (per-activation statistics) is not supported; only spatial=1");
  }
  take(node, "is_test");  // removed in opset 7; inference is the only mode here
  take(node, "consumed_inputs");
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
  switch (node.op) {
    case OpKind::kSlice:
      if (v >= 10) break;
      UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "starts", 1, true, add));
      UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "ends", 2, true, add));
      UCUDNN_RETURN_IF_ERROR(ints_to_input(node, "axes", 3, false, add));
      break;
    case OpKind::kPad:
      if (v >= 11) break;
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
