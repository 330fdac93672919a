// Structural graph comparison for pass tests (see graph_compare.h): value
// identities by origin, node-by-node checks, and the readable report.
#include "tests/support/graph_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <type_traits>
#include <variant>
#include <vector>

namespace ucudnn_test {

using ucudnn::DType;
using ucudnn::Tensor;
using ucudnn::ir::AttrValue;
using ucudnn::ir::Graph;
using ucudnn::ir::kNoValue;
using ucudnn::ir::Node;
using ucudnn::ir::ValueId;

namespace {

constexpr size_t kMaxReportedProblems = 12;

std::string dims_text(DType dtype, const ucudnn::Shape& shape) {
  return std::string(ucudnn::dtype_name(dtype)) + ucudnn::shape_to_string(shape);
}

template <typename T>
std::string list_text(const std::vector<T>& values) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  out << "]";
  return out.str();
}

std::string attribute_text(const AttrValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* f = std::get_if<float>(&value)) {
    std::ostringstream out;
    out << *f;
    return out.str();
  }
  if (const auto* s = std::get_if<std::string>(&value)) return "\"" + *s + "\"";
  if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) return list_text(*ints);
  if (const auto* floats = std::get_if<std::vector<float>>(&value)) return list_text(*floats);
  return std::get<Tensor>(value).describe();
}

// "" when the tensors hold the same elements (float32: within the tolerance), else the first difference.
std::string tensor_difference(const Tensor& expected, const Tensor& actual, const GraphCompareOptions& options) {
  if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape())
    return "expected " + expected.describe() + ", got " + actual.describe();
  int64_t first = -1, differing = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    bool same;
    if (expected.dtype() == DType::kFloat32) {
      const float e = expected.data<float>()[i], a = actual.data<float>()[i];
      same = std::abs(e - a) <= options.absolute_tolerance + options.relative_tolerance * std::abs(e);
    } else {
      const size_t size = ucudnn::dtype_size(expected.dtype());
      same = std::memcmp(static_cast<const std::byte*>(expected.raw()) + i * size,
                         static_cast<const std::byte*>(actual.raw()) + i * size, size) == 0;
    }
    if (same) continue;
    if (first < 0) first = i;
    ++differing;
  }
  if (differing == 0) return "";
  std::ostringstream out;
  out << differing << " of " << expected.numel() << " elements differ, the first at " << first;
  if (expected.dtype() == DType::kFloat32)
    out << ": expected " << expected.data<float>()[first] << ", got " << actual.data<float>()[first];
  return out.str();
}

bool same_attribute(const AttrValue& expected, const AttrValue& actual, const GraphCompareOptions& options) {
  if (expected.index() != actual.index()) return false;
  return std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, Tensor>)
          return tensor_difference(e, std::get<Tensor>(actual), options).empty();
        else
          return e == std::get<T>(actual);
      },
      expected);
}

// Where each value of one graph comes from, and how to write values and nodes.
class GraphView {
 public:
  enum class Kind { kAbsent, kInput, kNodeOutput, kConstant, kUnknown };
  struct Origin {
    Kind kind = Kind::kUnknown;
    int index = -1;  // graph input index, or producing node
    int slot = -1;   // output slot of the producing node
  };

  explicit GraphView(const Graph& graph) : graph_(graph), origins_(graph.values.size()) {
    for (size_t v = 0; v < graph.values.size(); ++v)
      if (graph.values[v].constant) origins_[v] = {Kind::kConstant, -1, -1};
    for (size_t n = 0; n < graph.nodes.size(); ++n)
      for (size_t s = 0; s < graph.nodes[n].outputs.size(); ++s)
        if (in_range(graph.nodes[n].outputs[s]))
          origins_[graph.nodes[n].outputs[s]] = {Kind::kNodeOutput, static_cast<int>(n), static_cast<int>(s)};
    for (size_t i = 0; i < graph.inputs.size(); ++i)
      if (in_range(graph.inputs[i])) origins_[graph.inputs[i]] = {Kind::kInput, static_cast<int>(i), -1};
  }

  const Graph& graph() const { return graph_; }

  Origin origin(ValueId id) const {
    if (id == kNoValue) return {Kind::kAbsent, -1, -1};
    return in_range(id) ? origins_[id] : Origin{};
  }

  // "input 0 'x'", "n2", "n2#1", "const 'w' float32[8, 4, 3, 3]", "none".
  std::string value_text(ValueId id) const {
    const Origin o = origin(id);
    switch (o.kind) {
      case Kind::kAbsent: return "none";
      case Kind::kInput: return "input " + std::to_string(o.index) + " '" + graph_.value(id).name + "'";
      case Kind::kNodeOutput: return "n" + std::to_string(o.index) + (o.slot ? "#" + std::to_string(o.slot) : "");
      case Kind::kConstant:
        return "const '" + graph_.value(id).name + "' " + dims_text(graph_.value(id).dtype, graph_.value(id).shape);
      case Kind::kUnknown: break;
    }
    return in_range(id) ? "undefined '" + graph_.value(id).name + "'" : "out-of-range value " + std::to_string(id);
  }

  std::string node_text(size_t n) const {
    const Node& node = graph_.nodes[n];
    std::ostringstream out;
    out << "n" << n << " = " << ucudnn::op_name(node.op) << "(";
    for (size_t i = 0; i < node.inputs.size(); ++i) out << (i ? ", " : "") << value_text(node.inputs[i]);
    out << ")";
    if (!node.attrs.all().empty()) {
      out << " [";
      bool first = true;
      for (const auto& [name, value] : node.attrs.all()) {
        out << (first ? "" : ", ") << name << "=" << attribute_text(value);
        first = false;
      }
      out << "]";
    }
    out << " ->";
    for (size_t s = 0; s < node.outputs.size(); ++s) {
      const ValueId id = node.outputs[s];
      out << (s ? ", " : " ") << (in_range(id) ? dims_text(graph_.value(id).dtype, graph_.value(id).shape) : "none");
    }
    return out.str();
  }

 private:
  bool in_range(ValueId id) const { return id >= 0 && static_cast<size_t>(id) < graph_.values.size(); }

  const Graph& graph_;
  std::vector<Origin> origins_;
};

class GraphComparer {
 public:
  GraphComparer(const Graph& expected, const Graph& actual, const GraphCompareOptions& options)
      : expected_(expected), actual_(actual), options_(options) {}

  std::vector<std::string> problems() {
    if (auto status = expected_.graph().validate(); !status.is_ok())
      add("the expected graph is invalid: " + status.to_string());
    if (auto status = actual_.graph().validate(); !status.is_ok())
      add("the actual graph is invalid: " + status.to_string());
    if (!problems_.empty()) return problems_;  // indices may be out of range: compare nothing more
    compare_inputs();
    compare_nodes();
    compare_outputs();
    return problems_;
  }

 private:
  void add(std::string problem) { problems_.push_back(std::move(problem)); }

  void compare_inputs() {
    const Graph& e = expected_.graph();
    const Graph& a = actual_.graph();
    if (e.inputs.size() != a.inputs.size())
      add("expected " + std::to_string(e.inputs.size()) + " graph inputs, got " + std::to_string(a.inputs.size()));
    for (size_t i = 0; i < std::min(e.inputs.size(), a.inputs.size()); ++i) {
      const auto& ev = e.value(e.inputs[i]);
      const auto& av = a.value(a.inputs[i]);
      const bool names_differ = options_.compare_interface_names && ev.name != av.name;
      if (ev.dtype != av.dtype || ev.shape != av.shape || names_differ)
        add("graph input " + std::to_string(i) + ": expected '" + ev.name + "' " + dims_text(ev.dtype, ev.shape) +
            ", got '" + av.name + "' " + dims_text(av.dtype, av.shape));
    }
  }

  void compare_nodes() {
    const Graph& e = expected_.graph();
    const Graph& a = actual_.graph();
    if (e.nodes.size() != a.nodes.size())
      add("expected " + std::to_string(e.nodes.size()) + " nodes, got " + std::to_string(a.nodes.size()));
    for (size_t n = 0; n < std::min(e.nodes.size(), a.nodes.size()); ++n) {
      const std::string why = node_difference(e.nodes[n], a.nodes[n]);
      if (!why.empty())
        add("node " + std::to_string(n) + ": expected " + expected_.node_text(n) + "\n    got " + actual_.node_text(n) +
            "\n    (" + why + ")");
    }
  }

  void compare_outputs() {
    const Graph& e = expected_.graph();
    const Graph& a = actual_.graph();
    if (e.outputs.size() != a.outputs.size())
      add("expected " + std::to_string(e.outputs.size()) + " graph outputs, got " + std::to_string(a.outputs.size()));
    for (size_t j = 0; j < std::min(e.outputs.size(), a.outputs.size()); ++j) {
      std::string why = value_difference(e.outputs[j], a.outputs[j]);
      const std::string& expected_name = e.value(e.outputs[j]).name;
      const std::string& actual_name = a.value(a.outputs[j]).name;
      if (why.empty() && options_.compare_interface_names && expected_name != actual_name)
        why = "expected the name '" + expected_name + "', got '" + actual_name + "'";
      if (!why.empty()) add("graph output " + std::to_string(j) + ": " + why);
    }
  }

  // "" when the nodes match; else the reasons, "; "-separated.
  std::string node_difference(const Node& e, const Node& a) const {
    if (e.op != a.op) return std::string("op ") + ucudnn::op_name(a.op) + " instead of " + ucudnn::op_name(e.op);
    std::vector<std::string> reasons;
    if (e.inputs.size() != a.inputs.size())
      reasons.push_back(std::to_string(a.inputs.size()) + " inputs instead of " + std::to_string(e.inputs.size()));
    for (size_t i = 0; i < std::min(e.inputs.size(), a.inputs.size()); ++i) {
      const std::string why = value_difference(e.inputs[i], a.inputs[i]);
      if (!why.empty()) reasons.push_back("input " + std::to_string(i) + ": " + why);
    }
    std::set<std::string> names;
    for (const auto& [name, value] : e.attrs.all()) names.insert(name);
    for (const auto& [name, value] : a.attrs.all()) names.insert(name);
    for (const std::string& name : names) {
      const auto ei = e.attrs.all().find(name);
      const auto ai = a.attrs.all().find(name);
      const bool has_e = ei != e.attrs.all().end(), has_a = ai != a.attrs.all().end();
      if (has_e && has_a && same_attribute(ei->second, ai->second, options_)) continue;
      reasons.push_back("attribute " + name + ": expected " + (has_e ? attribute_text(ei->second) : "none") +
                        ", got " + (has_a ? attribute_text(ai->second) : "none"));
    }
    if (e.outputs.size() != a.outputs.size())
      reasons.push_back(std::to_string(a.outputs.size()) + " outputs instead of " + std::to_string(e.outputs.size()));
    for (size_t s = 0; s < std::min(e.outputs.size(), a.outputs.size()); ++s) {
      const bool has_e = e.outputs[s] != kNoValue, has_a = a.outputs[s] != kNoValue;
      if (!has_e && !has_a) continue;
      if (has_e != has_a) {
        reasons.push_back("output " + std::to_string(s) + (has_e ? " is missing" : " is unexpected"));
        continue;
      }
      const auto& ev = expected_.graph().value(e.outputs[s]);
      const auto& av = actual_.graph().value(a.outputs[s]);
      if (ev.dtype != av.dtype || ev.shape != av.shape)
        reasons.push_back("output " + std::to_string(s) + ": expected " + dims_text(ev.dtype, ev.shape) + ", got " +
                          dims_text(av.dtype, av.shape));
    }
    std::string joined;
    for (const std::string& r : reasons) joined += (joined.empty() ? "" : "; ") + r;
    return joined;
  }

  // "" when the two values have the same origin (constants: the same contents).
  std::string value_difference(ValueId e, ValueId a) const {
    using Kind = GraphView::Kind;
    const GraphView::Origin eo = expected_.origin(e), ao = actual_.origin(a);
    const std::string mismatch = "expected " + expected_.value_text(e) + ", got " + actual_.value_text(a);
    if (eo.kind != ao.kind || eo.kind == Kind::kUnknown) return mismatch;
    if (eo.kind == Kind::kInput || eo.kind == Kind::kNodeOutput)
      return eo.index == ao.index && eo.slot == ao.slot ? "" : mismatch;
    if (eo.kind != Kind::kConstant) return "";
    const auto& ev = expected_.graph().value(e);
    const auto& av = actual_.graph().value(a);
    if (ev.dtype != av.dtype || ev.shape != av.shape) return mismatch;
    const std::string why = tensor_difference(*ev.constant, *av.constant, options_);
    return why.empty() ? "" : "constant '" + av.name + "' is not the expected '" + ev.name + "': " + why;
  }

  GraphView expected_, actual_;
  const GraphCompareOptions& options_;
  std::vector<std::string> problems_;
};

}  // namespace

std::string describe_graph(const Graph& graph) {
  GraphView view(graph);
  std::string text = "  inputs:";
  for (ValueId id : graph.inputs) text += " " + view.value_text(id);
  text += "\n";
  for (size_t n = 0; n < graph.nodes.size(); ++n) text += "  " + view.node_text(n) + "\n";
  text += "  outputs:";
  for (ValueId id : graph.outputs)
    text += " " + view.value_text(id) + (id >= 0 && static_cast<size_t>(id) < graph.values.size()
                                             ? " '" + graph.value(id).name + "'" : std::string());
  return text + "\n";
}

std::string graph_difference(const Graph& expected, const Graph& actual, const GraphCompareOptions& options) {
  const std::vector<std::string> problems = GraphComparer(expected, actual, options).problems();
  if (problems.empty()) return "";
  std::string report = "the graphs differ:\n";
  for (size_t i = 0; i < std::min(problems.size(), kMaxReportedProblems); ++i) report += "  " + problems[i] + "\n";
  if (problems.size() > kMaxReportedProblems)
    report += "  ... and " + std::to_string(problems.size() - kMaxReportedProblems) + " more\n";
  return report + "expected graph:\n" + describe_graph(expected) + "actual graph:\n" + describe_graph(actual);
}

testing::AssertionResult same_graph(const Graph& expected, const Graph& actual, const GraphCompareOptions& options) {
  const std::string difference = graph_difference(expected, actual, options);
  if (difference.empty()) return testing::AssertionSuccess();
  return testing::AssertionFailure() << difference;
}

}  // namespace ucudnn_test
