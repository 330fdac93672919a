// Einsum's descriptor and lowering (einsum.h).
#include "runtime/ops/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ops/lowering.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

// The equation with "..." replaced by one label per broadcast dim (the characters '0'.. '9', which an
// equation cannot use), every label's size, and the output's labels.
struct Equation {
  std::vector<std::string> operands;
  std::string output;
  std::map<char, int64_t> sizes;
};

std::string strip_spaces(const std::string& s) {
  std::string r;
  for (char c : s)
    if (c != ' ') r += c;
  return r;
}

// Ellipsis labels: the last `count` of the `total` broadcast labels ('0' + i), right-aligned.
std::string ellipsis_labels(size_t count, size_t total) {
  std::string r;
  for (size_t i = total - count; i < total; ++i) r += static_cast<char>('0' + i);
  return r;
}

Expected<Equation> parse(const std::string& text, const std::vector<Shape>& shapes) {
  const std::string eq = strip_spaces(text);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size())
    return invalid_model("equation '" + text + "' has " + std::to_string(terms.size()) + " operands, the node " +
                         std::to_string(shapes.size()) + " inputs");
  if (terms.size() > 2) return unsupported("Einsum of " + std::to_string(terms.size()) + " operands (one or two are)");
  // The broadcast dims each "..." stands for, and the most of any operand.
  size_t broadcast = 0;
  std::vector<size_t> ellipsis(terms.size(), 0);
  for (size_t t = 0; t < terms.size(); ++t) {
    const size_t dots = terms[t].find("...");
    const size_t letters = terms[t].size() - (dots == std::string::npos ? 0 : 3);
    if ((dots == std::string::npos && letters != shapes[t].size()) || letters > shapes[t].size())
      return invalid_model("operand " + std::to_string(t) + " '" + terms[t] + "' does not match its shape " +
                           shape_to_string(shapes[t]));
    if (dots != std::string::npos) ellipsis[t] = shapes[t].size() - letters;
    broadcast = std::max(broadcast, ellipsis[t]);
  }
  if (broadcast > 10) return unsupported("an ellipsis of more than 10 dims");
  Equation e;
  std::map<char, int> count;
  for (size_t t = 0; t < terms.size(); ++t) {
    std::string labels = terms[t];
    if (const size_t dots = labels.find("..."); dots != std::string::npos)
      labels.replace(dots, 3, ellipsis_labels(ellipsis[t], broadcast));
    for (char c : labels)
      if (!std::isalpha(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c)))
        return invalid_model("equation '" + text + "': '" + std::string(1, c) + "' is not a label");
    for (size_t d = 0; d < labels.size(); ++d) {
      const char c = labels[d];
      if (labels.find(c) != d)
        return unsupported("equation '" + text + "' repeats '" + std::string(1, c) +
                           "' in one operand (a diagonal; not supported)");
      const int64_t size = shapes[t][d];
      auto [it, inserted] = e.sizes.emplace(c, size);
      if (!inserted && it->second != size) {
        if (std::isdigit(static_cast<unsigned char>(c)) && (it->second == 1 || size == 1)) {
          it->second = std::max(it->second, size);  // broadcast dims: 1 against n
        } else {
          return invalid_model("label '" + std::string(1, c) + "' is " + std::to_string(it->second) + " in one operand and " +
                               std::to_string(size) + " in another");
        }
      }
      ++count[c];
    }
    e.operands.push_back(labels);
  }
  if (arrow != std::string::npos) {
    e.output = eq.substr(arrow + 2);
    if (const size_t dots = e.output.find("..."); dots != std::string::npos)
      e.output.replace(dots, 3, ellipsis_labels(broadcast, broadcast));
    for (size_t d = 0; d < e.output.size(); ++d) {
      const char c = e.output[d];
      if (e.sizes.count(c) == 0 || e.output.find(c) != d)
        return invalid_model("equation '" + text + "': output label '" + std::string(1, c) +
                             "' is repeated or in no operand");
    }
  } else {  // implicit: the broadcast labels, then the labels used once, in alphabetical order
    e.output = ellipsis_labels(broadcast, broadcast);
    for (const auto& [c, n] : count)
      if (n == 1 && std::isalpha(static_cast<unsigned char>(c))) e.output += c;
  }
  return e;
}

Shape shape_of(const std::string& labels, const std::map<char, int64_t>& sizes) {
  Shape s;
  for (char c : labels) s.push_back(sizes.at(c));
  return s;
}

bool has(const std::string& labels, char c) { return labels.find(c) != std::string::npos; }

Status einsum_infer(InferContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
    shapes.push_back(ctx.input(i).shape);
  }
  const Expected<Equation> e = parse(ctx.attrs().get_string("equation"), shapes);
  if (!e) {
    if (e.status().code() == StatusCode::kUnsupported) return ctx.unsupported_error(e.status().message());
    return ctx.error(e.status().message());
  }
  ctx.set_output(0, DType::kFloat32, shape_of(e->output, e->sizes));
  return Status::ok();
}

// Emits the nodes of one Einsum's lowering; each helper gets the labels of the value it is given.
class EinsumLowering {
 public:
  EinsumLowering(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out, Equation e)
      : build_(graph, node, out, std::max(node.opset, 13)), e_(std::move(e)) {}

  // The sum over the labels of operand t that neither the other operand nor the output has.
  std::string sum_alone(size_t t, ir::ValueId& value) {
    const std::string& labels = e_.operands[t];
    const std::string other = e_.operands.size() == 2 ? e_.operands[1 - t] : std::string();
    std::string kept;
    std::vector<int64_t> axes;
    for (size_t d = 0; d < labels.size(); ++d) {
      if (has(e_.output, labels[d]) || has(other, labels[d])) kept += labels[d];
      else axes.push_back(static_cast<int64_t>(d));
    }
    if (axes.empty()) return labels;
    ir::Attributes attrs;
    attrs.set("keepdims", int64_t{0});
    value = build_.emit(OpKind::kReduceSum, "sum" + std::to_string(t), {value, build_.int64s("sum_axes", axes)},
                        DType::kFloat32, sized(kept, value, labels), ir::kNoValue, std::move(attrs));
    return kept;
  }

  // `value` with labels `from` put in the order `to` (no node when they are in it already).
  ir::ValueId transpose(ir::ValueId value, const std::string& from, const std::string& to, const std::string& what,
                        ir::ValueId into = ir::kNoValue) {
    if (from == to && into == ir::kNoValue) return value;
    std::vector<int64_t> perm;
    for (char c : to) perm.push_back(static_cast<int64_t>(from.find(c)));
    ir::Attributes attrs;
    attrs.set("perm", perm);
    return build_.emit(OpKind::kTranspose, what, {value}, DType::kFloat32, sized(to, value, from), into,
                       std::move(attrs));
  }

  ir::ValueId reshape(ir::ValueId value, const Shape& shape, const std::string& what, ir::ValueId into = ir::kNoValue) {
    if (build_.graph().value(value).shape == shape && into == ir::kNoValue) return value;
    return build_.emit(OpKind::kReshape, what, {value, build_.int64s(what + "_shape", shape)}, DType::kFloat32, shape,
                       into);
  }

  ir::ValueId matmul(ir::ValueId a, ir::ValueId b, const Shape& shape) {
    return build_.emit(OpKind::kMatMul, "matmul", {a, b}, DType::kFloat32, shape);
  }

  // The shape of `labels`, taking each label's size from the value that has it (1 on broadcast dims).
  Shape sized(const std::string& labels, ir::ValueId value, const std::string& value_labels = "") {
    const Shape& shape = build_.graph().value(value).shape;
    Shape s;
    for (char c : labels) {
      const size_t d = value_labels.empty() ? std::string::npos : value_labels.find(c);
      s.push_back(d != std::string::npos ? shape[d] : e_.sizes.at(c));
    }
    return s;
  }

 private:
  LoweringBuilder build_;
  Equation e_;
};

// Sizes of `labels` as operand `labels_of` has them, or all 1 where it lacks them.
Shape dims_in(const std::string& labels, const std::string& operand, const Shape& shape) {
  Shape s;
  for (char c : labels) {
    const size_t d = operand.find(c);
    s.push_back(d == std::string::npos ? 1 : shape[d]);
  }
  return s;
}

int64_t product(const Shape& s) { return shape_numel(s); }

Status lower_one(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  std::vector<Shape> shapes;
  for (ir::ValueId id : node.inputs) shapes.push_back(graph.value(id).shape);
  UCUDNN_ASSIGN_OR_RETURN(Equation e, parse(node.attrs.get_string("equation"), shapes));
  const ir::ValueId y = node.outputs[0];
  EinsumLowering lower(graph, node, out, e);
  ir::ValueId a = node.inputs[0];
  // The summed-alone labels go first (sum_alone reads sizes from the value's own shape: the operand's).
  const std::string a_labels = lower.sum_alone(0, a);
  if (e.operands.size() == 1) {
    lower.transpose(a, a_labels, e.output, "order", y);
    return Status::ok();
  }
  ir::ValueId b = node.inputs[1];
  const std::string b_labels = lower.sum_alone(1, b);
  std::string batch, free_a, free_b, summed;
  for (char c : e.output) {
    if (has(a_labels, c) && has(b_labels, c)) batch += c;
  }
  for (char c : a_labels) {
    if (has(b_labels, c) && !has(e.output, c)) summed += c;
    else if (!has(b_labels, c)) free_a += c;
  }
  for (char c : b_labels)
    if (!has(a_labels, c)) free_b += c;
  for (char c : summed)
    if (shapes[0][e.operands[0].find(c)] != shapes[1][e.operands[1].find(c)])
      return unsupported(node.describe() + ": summed label '" + std::string(1, c) + "' broadcast between operands");
  const Shape& a_shape = graph.value(a).shape;
  const Shape& b_shape = graph.value(b).shape;
  const Shape a_batch = dims_in(batch, a_labels, a_shape), b_batch = dims_in(batch, b_labels, b_shape);
  const Shape free_a_dims = dims_in(free_a, a_labels, a_shape), free_b_dims = dims_in(free_b, b_labels, b_shape);
  const int64_t m = product(free_a_dims), k = product(dims_in(summed, a_labels, a_shape)), n = product(free_b_dims);
  // A: [batch, free_a, summed] → [batch..., m, k]; B: [batch, summed, free_b] → [batch..., k, n]. A batch label
  // one operand lacks is a dim of 1 there, which MatMul broadcasts.
  auto with = [](Shape s, std::initializer_list<int64_t> tail) {
    s.insert(s.end(), tail);
    return s;
  };
  const std::string a_order = batch + free_a + summed, b_order = batch + summed + free_b;
  auto arrange = [&](ir::ValueId v, const std::string& labels, const std::string& order, const Shape& shape,
                     const std::string& what) {
    return lower.reshape(lower.transpose(v, labels, order, what + "_order"), shape, what + "_matrix");
  };
  a = arrange(a, a_labels, a_order, with(a_batch, {m, k}), "a");
  b = arrange(b, b_labels, b_order, with(b_batch, {k, n}), "b");
  Shape batch_dims;
  for (size_t i = 0; i < batch.size(); ++i) batch_dims.push_back(std::max(a_batch[i], b_batch[i]));
  const ir::ValueId product_value = lower.matmul(a, b, with(batch_dims, {m, n}));
  // [batch..., m, n] → [batch, free_a, free_b] → the output's order.
  const std::string natural = batch + free_a + free_b;
  Shape natural_shape = batch_dims;
  natural_shape.insert(natural_shape.end(), free_a_dims.begin(), free_a_dims.end());
  natural_shape.insert(natural_shape.end(), free_b_dims.begin(), free_b_dims.end());
  if (natural == e.output) {
    lower.reshape(product_value, natural_shape, "result", y);
  } else {
    lower.transpose(lower.reshape(product_value, natural_shape, "result"), natural, e.output, "order", y);
  }
  return Status::ok();
}

}  // namespace

const OpDescriptor& describe_Einsum() {
  static const OpDescriptor d{.kind = OpKind::kEinsum,
                              .min_inputs = 1,
                              .max_inputs = 1 << 16,
                              .min_opset = 12,
                              .attrs = {attr_required("equation", ir::AttrType::kString)},
                              .infer = einsum_infer};
  return d;
}

Status lower_einsums(ir::Graph& graph) { return lower_each(graph, OpKind::kEinsum, lower_one, "Einsum"); }

}  // namespace ucudnn
