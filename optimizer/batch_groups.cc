// check_samples_independent and default_batch_groups (Note [batch groups], batch_groups.h).
#include "optimizer/batch_groups.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <variant>

#include "runtime/core/shape.h"

namespace ucudnn::optimizer {

namespace {

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.nbytes() == 0 || std::memcmp(a.data<void>(), b.data<void>(), a.nbytes()) == 0);
}

bool same_attributes(const ir::Attributes& a, const ir::Attributes& b) {
  if (a.all().size() != b.all().size()) return false;
  for (const auto& [name, value] : a.all()) {
    const auto it = b.all().find(name);
    if (it == b.all().end() || it->second.index() != value.index()) return false;
    const bool same = std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          const T& y = std::get<T>(it->second);
          if constexpr (std::is_same_v<T, Tensor>) return same_tensor(x, y);
          else return x == y;
        },
        value);
    if (!same) return false;
  }
  return true;
}

// [k·batch, rest...] in the whole graph and [k·group_batch, rest...] in the group's, k >= 1 (k = 1 only when
// `rows_per_sample` is false): sample s holds rows s·k to s·k + k - 1, the same bytes as in [batch, k, rest...].
bool batched_pair(const Shape& whole, const Shape& group, int64_t batch, int64_t group_batch, bool rows_per_sample) {
  if (whole.empty() || whole.size() != group.size() || whole[0] < batch || whole[0] % batch != 0) return false;
  const int64_t k = whole[0] / batch;
  if ((k != 1 && !rows_per_sample) || group[0] != k * group_batch) return false;
  for (size_t d = 1; d < whole.size(); ++d)
    if (whole[d] != group[d]) return false;
  return true;
}

Status mixes(const ir::Node& node, const std::string& why) {
  return unsupported(node.describe() + " " + why + ": its batch cannot run as groups of samples");
}

// Input `slot` of `node` may be a constant that differs between the two imports: a target shape (whose
// output the shapes check).
bool shape_slot(const ir::Node& node, size_t slot) {
  return (slot == 1 && (node.op == OpKind::kReshape || node.op == OpKind::kExpand)) ||
         (slot == 3 && node.op == OpKind::kResize);
}

// Nodes that work along axis 0 of input 0 while keeping shapes (the shapes catch the rest).
Status check_axes(const ir::Graph& graph, const ir::Node& node) {
  if (node.inputs.empty() || node.inputs[0] == ir::kNoValue) return Status::ok();
  const ir::Value& x = graph.value(node.inputs[0]);
  if (x.constant) return Status::ok();  // an embedding table gathered along its rows, say
  const auto rank = static_cast<int64_t>(x.shape.size());
  const ir::Attributes& attrs = node.attrs;
  if (attrs.has("axis") && ir::attr_value_type(attrs.all().at("axis")) == ir::AttrType::kInt &&
      normalize_axis(attrs.get_int("axis"), rank) == 0)
    return mixes(node, "works along axis 0");
  if (attrs.has("axes") && ir::attr_value_type(attrs.all().at("axes")) == ir::AttrType::kInts)
    for (int64_t axis : attrs.get_ints("axes"))
      if (normalize_axis(axis, rank) == 0) return mixes(node, "works along axis 0");
  if (node.op == OpKind::kTranspose && attrs.has("perm") && !attrs.get_ints("perm").empty() &&
      attrs.get_ints("perm")[0] != 0)
    return mixes(node, "moves axis 0");
  if (node.op == OpKind::kCumSum && node.inputs.size() > 1 && node.inputs[1] != ir::kNoValue) {
    const ir::Value& axis = graph.value(node.inputs[1]);
    if (!axis.constant) return mixes(node, "sums along an axis known only when it runs");
    const Expected<std::vector<int64_t>> values = axis.constant->to_int64_vector();
    if (!values || values->size() != 1 || normalize_axis((*values)[0], rank) == 0)
      return mixes(node, "sums along axis 0");
  }
  if (node.op == OpKind::kScatterND || node.op == OpKind::kGatherND) return mixes(node, "indexes from axis 0");
  return Status::ok();
}

Status check_node(const ir::Graph& whole, const ir::Graph& group, size_t i, int64_t batch, int64_t group_batch) {
  const ir::Node& a = whole.nodes[i];
  const ir::Node& b = group.nodes[i];
  if (a.op != b.op || a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size())
    return unsupported(a.describe() + " is " + b.describe() + " in the model at batch " +
                       std::to_string(group_batch) + ": its batch cannot run as groups of samples");
  if (!same_attributes(a.attrs, b.attrs)) return mixes(a, "has attributes that depend on the batch");
  for (size_t s = 0; s < a.inputs.size(); ++s) {
    if ((a.inputs[s] == ir::kNoValue) != (b.inputs[s] == ir::kNoValue))
      return mixes(a, "has other inputs at another batch");
    if (a.inputs[s] == ir::kNoValue) continue;
    const ir::Value& va = whole.value(a.inputs[s]);
    const ir::Value& vb = group.value(b.inputs[s]);
    if (va.constant.has_value() != vb.constant.has_value())
      return mixes(a, "reads '" + va.name + "', a constant at one batch and not at the other");
    if (va.constant && !shape_slot(a, s) && !same_tensor(*va.constant, *vb.constant))
      return mixes(a, "reads the constant '" + va.name + "', which depends on the batch");
  }
  for (size_t o = 0; o < a.outputs.size(); ++o) {
    const ir::Value& va = whole.value(a.outputs[o]);
    const ir::Value& vb = group.value(b.outputs[o]);
    if (!batched_pair(va.shape, vb.shape, batch, group_batch, true))
      return mixes(a, "makes '" + va.name + "' " + shape_to_string(va.shape) + " (" + shape_to_string(vb.shape) +
                          " at batch " + std::to_string(group_batch) + "), not the same rows per sample");
  }
  return check_axes(whole, a);
}

Status check_io(const ir::Graph& whole, const ir::Graph& group, const std::vector<ir::ValueId>& a,
                const std::vector<ir::ValueId>& b, const char* kind, int64_t batch, int64_t group_batch) {
  if (a.size() != b.size())
    return unsupported(std::string("the model has other ") + kind + "s at batch " + std::to_string(group_batch));
  for (size_t i = 0; i < a.size(); ++i) {
    const ir::Value& va = whole.value(a[i]);
    const ir::Value& vb = group.value(b[i]);
    if (!batched_pair(va.shape, vb.shape, batch, group_batch, false) || va.dtype != vb.dtype)
      return unsupported(std::string(kind) + " '" + va.name + "' is " + shape_to_string(va.shape) + " at batch " +
                         std::to_string(batch) + " and " + shape_to_string(vb.shape) + " at batch " +
                         std::to_string(group_batch) + ", not one row per sample: its batch cannot run as "
                         "groups of samples");
  }
  return Status::ok();
}

}  // namespace

Status check_samples_independent(const ir::Graph& whole, const ir::Graph& group, int64_t batch,
                                 int64_t group_batch) {
  if (batch < 2 || group_batch < 1 || batch % group_batch != 0 || group_batch == batch)
    return invalid_argument("batch groups: batch " + std::to_string(batch) + " does not divide into groups of " +
                            std::to_string(group_batch));
  UCUDNN_RETURN_IF_ERROR(check_io(whole, group, whole.inputs, group.inputs, "input", batch, group_batch));
  UCUDNN_RETURN_IF_ERROR(check_io(whole, group, whole.outputs, group.outputs, "output", batch, group_batch));
  if (whole.nodes.size() != group.nodes.size())
    return unsupported("the model has " + std::to_string(whole.nodes.size()) + " nodes at batch " +
                       std::to_string(batch) + " and " + std::to_string(group.nodes.size()) + " at batch " +
                       std::to_string(group_batch) + ": its batch cannot run as groups of samples");
  for (size_t i = 0; i < whole.nodes.size(); ++i)
    UCUDNN_RETURN_IF_ERROR(check_node(whole, group, i, batch, group_batch));
  return Status::ok();
}

int default_batch_groups(int64_t batch, int threads) {
  for (int64_t g = std::min<int64_t>(batch, threads); g >= 2; --g)
    if (batch % g == 0) return static_cast<int>(g);
  return 1;
}

}  // namespace ucudnn::optimizer
