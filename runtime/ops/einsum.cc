// Einsum's descriptor (opset 12): one or two float32 operands; the importer lowers it into MatMuls,
// Transposes, Reshapes and a ReduceSum (onnx_import/lowering/einsum.h).
#include "runtime/ops/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "runtime/ops/op_descriptor.h"

namespace ucudnn {

namespace {

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

Shape shape_of(const std::string& labels, const std::map<char, int64_t>& sizes) {
  Shape s;
  for (char c : labels) s.push_back(sizes.at(c));
  return s;
}

Status einsum_infer(InferContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    UCUDNN_RETURN_IF_ERROR(ctx.expect_dtype(i, {DType::kFloat32}));
    shapes.push_back(ctx.input(i).shape);
  }
  const Expected<EinsumEquation> e = parse_einsum(ctx.attrs().get_string("equation"), shapes);
  if (!e) {
    if (e.status().code() == StatusCode::kUnsupported) return ctx.unsupported_error(e.status().message());
    return ctx.error(e.status().message());
  }
  ctx.set_output(0, DType::kFloat32, shape_of(e->output, e->sizes));
  return Status::ok();
}

}  // namespace

Expected<EinsumEquation> parse_einsum(const std::string& text, const std::vector<Shape>& shapes) {
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
  EinsumEquation e;
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

const OpDescriptor& describe_Einsum() {
  static const OpDescriptor d{.kind = OpKind::kEinsum,
                              .min_inputs = 1,
                              .max_inputs = 1 << 16,
                              .min_opset = 12,
                              .attrs = {attr_required("equation", ir::AttrType::kString)},
                              .infer = einsum_infer};
  return d;
}

}  // namespace ucudnn
