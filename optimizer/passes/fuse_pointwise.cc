// fuse_pointwise: trees of float32 elementwise nodes become one FusedPointwise node each
// (Note [pointwise programs], runtime/ir/pointwise_program.h), which reads every input once and
// writes its output once instead of one pass over memory per node.
//
// Stages, per node in reverse topological order (so each tree is found from its root):
//  1. Grow the tree. An operand's producer joins when it is fusible (an op whose PointwiseOp,
//     runtime/ir/unary_ops.h, a program may hold: Relu, LeakyRelu, PRelu, Sigmoid, Tanh, HardSigmoid,
//     HardSwish, Clip with constant bounds, Elu, Erf, Softplus, Sqrt, Exp, Log, Abs, Neg, Reciprocal,
//     Add/Sub/Mul/Div/Pow (Pow by the constant 2: a Mul); an Add with a fused Relu; a FusedPointwise
//     without a concat), its output has this one
//     reader, is no graph output and has the root's shape — or is a unary activation of a value that
//     broadcasts to it (an SE gate's Sigmoid at [N, C, 1, 1]: recomputed per output element, a few
//     instructions instead of a kernel; its own operand is a leaf). Every other
//     operand is a leaf, one per value however many instructions read it; a single-element
//     constant becomes an immediate instead, and other constants are reshaped to the output's rank.
//     A node with a non-constant operand of lower rank stays out (FusedPointwise needs equal ranks).
//     The limits of pointwise_program.h cut the tree: a subtree that does not fit becomes a leaf
//     (and an output of too high a rank is left alone).
//  2. Absorb a Concat: a leaf that is the output of a float32 Concat read only by the tree, of the
//     output's shape, becomes leaf 0 read piece by piece (DenseNet's Concat → BN → Relu).
//  3. Keep the tree when it replaces two or more nodes (a lone Relu or Add stays as it is), name
//     its pattern for the report ("SiLU", "BN+ReLU", "Concat+BN+ReLU", ...: pattern_name), and put
//     the FusedPointwise in the root's place, where every leaf is already computed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"
#include "runtime/ir/pointwise_program.h"
#include "runtime/ir/unary_ops.h"
#include "runtime/ops/fused_pointwise.h"

namespace ucudnn::optimizer {

namespace {

using ir::PointwiseOp;

// An instruction's operand while a program is built: leaf `index`, or instruction `index`.
struct Ref {
  bool leaf = false;
  int index = 0;
  bool operator==(const Ref& other) const { return leaf == other.leaf && index == other.index; }
};

struct Instruction {
  PointwiseOp op = PointwiseOp::kAdd;
  Ref a, b;
  int k = 0;  // first immediate in Tree::constants
};

struct Tree {
  std::vector<Instruction> code;
  std::vector<float> constants;
  std::vector<ir::ValueId> leaves;  // as the graph has them (constants not yet reshaped)
  std::vector<ir::NodeId> nodes;    // the nodes it replaces
  ir::NodeId concat = -1;           // an absorbed Concat: its output is leaves[0]
};

// Whether a constant of the graph is `expected` (as a float32 literal of it is).
bool near(double value, double expected) {
  return std::abs(value - expected) <= 1e-4 * std::max(1.0, std::abs(expected));
}

const Tensor* single_element_constant(const ir::Graph& graph, ir::ValueId id) {
  if (id == ir::kNoValue) return nullptr;
  const ir::Value& v = graph.value(id);
  return v.constant && v.dtype == DType::kFloat32 && v.constant->numel() == 1 ? &*v.constant : nullptr;
}

// The data operands of a fusible node (Clip's bounds are immediates, not data).
std::vector<ir::ValueId> data_operands(const ir::Node& node) {
  if (node.op == OpKind::kClip) return {node.inputs[0]};
  return node.inputs;
}

// The PointwiseOp a node of `kind` becomes in a program (its one mapping, runtime/ir/unary_ops.h), when a
// program may hold that op (below PointwiseOp::kCount).
std::optional<PointwiseOp> program_op(OpKind kind) {
  PointwiseOp op = PointwiseOp::kIdentity;
  if (!ir::pointwise_op_of(kind, &op) || op >= PointwiseOp::kCount) return std::nullopt;
  return op;
}

// Whether `node` can be one or more instructions, whatever its shape.
bool fusible_op(const ir::Graph& graph, const ir::Node& node) {
  if (node.outputs.size() != 1 || node.inputs.empty() || graph.value(node.outputs[0]).dtype != DType::kFloat32)
    return false;
  for (ir::ValueId id : node.inputs)
    if (id != ir::kNoValue && graph.value(id).dtype != DType::kFloat32) return false;
  const bool fused_relu = ir::fused_activation(node) == "Relu";
  if (node.attrs.has(ir::kFusedActivationAttr) && !(node.op == OpKind::kAdd && fused_relu)) return false;
  if (node.op == OpKind::kFusedPointwise) return node.attrs.get_int(ir::kPointwiseConcatCountAttr) == 0;
  const std::optional<PointwiseOp> op = program_op(node.op);
  if (!op) return false;
  if (*op == PointwiseOp::kClip) {
    for (size_t i = 1; i < node.inputs.size(); ++i)
      if (node.inputs[i] != ir::kNoValue && !single_element_constant(graph, node.inputs[i])) return false;
    return !node.attrs.has("min") && !node.attrs.has("max");  // the importer makes them inputs
  }
  if (ir::pointwise_op_is_binary(*op)) return node.inputs.size() == 2 && node.inputs[1] != ir::kNoValue;
  return node.inputs.size() == 1;
}

// One data operand, elementwise: cheap to recompute per output element.
bool is_unary_activation(OpKind op) {
  const std::optional<PointwiseOp> p = program_op(op);
  return p && !ir::pointwise_op_is_binary(*p);
}

// Grows one tree from its root (stage 1 of the file comment).
class TreeBuilder {
 public:
  TreeBuilder(const ir::Graph& graph, const std::vector<int>& uses, const std::vector<bool>& taken, Shape shape)
      : graph_(graph), uses_(uses), taken_(taken), shape_(std::move(shape)) {}

  // The tree rooted at `root`, or nothing when the root itself cannot be fused.
  std::optional<Tree> build(ir::NodeId root) {
    if (shape_.size() > static_cast<size_t>(ir::kMaxPointwiseRank)) return std::nullopt;
    if (!fits(graph_.nodes[root]) || !node(root)) return std::nullopt;
    return std::move(tree_);
  }

 private:
  // Fusible, and every operand of the output's rank (a constant: at most).
  bool fits(const ir::Node& node) const {
    if (!fusible_op(graph_, node)) return false;
    for (ir::ValueId id : data_operands(node)) {
      const ir::Value& v = graph_.value(id);
      if (v.shape.size() > shape_.size() || (!v.constant && v.shape.size() != shape_.size())) return false;
    }
    return true;
  }

  bool absorbable(ir::ValueId id) const {
    const ir::NodeId p = graph_.value(id).producer;
    if (p < 0 || taken_[p] || uses_[id] != 1 || is_graph_output(graph_, id) || !fits(graph_.nodes[p])) return false;
    return graph_.value(id).shape == shape_ || small_unary(graph_.nodes[p]);
  }

  // A unary activation on a value that broadcasts to the output (a squeeze-excitation gate's
  // Sigmoid/HardSigmoid on [N, C, 1, 1]): it joins, recomputed per output element — a few
  // instructions instead of a kernel launch and a pass. Its operand, of its own shape, is a leaf.
  bool small_unary(const ir::Node& node) const {
    if (!is_unary_activation(node.op)) return false;
    const Shape& s = graph_.value(node.outputs[0]).shape;
    if (s.size() != shape_.size()) return false;
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] != 1 && s[d] != shape_[d]) return false;
    return true;
  }

  struct Mark {
    size_t code, constants, leaves, nodes;
  };
  Mark mark() const { return {tree_.code.size(), tree_.constants.size(), tree_.leaves.size(), tree_.nodes.size()}; }
  void rollback(const Mark& m) {
    tree_.code.resize(m.code);
    tree_.constants.resize(m.constants);
    tree_.leaves.resize(m.leaves);
    tree_.nodes.resize(m.nodes);
  }
  size_t registers() const { return tree_.leaves.size() + tree_.code.size(); }

  std::optional<Ref> emit(PointwiseOp op, Ref a, Ref b = {}, std::vector<float> immediates = {}) {
    if (registers() + 1 > static_cast<size_t>(ir::kMaxPointwiseRegisters)) return std::nullopt;
    tree_.code.push_back({op, a, b, static_cast<int>(tree_.constants.size())});
    tree_.constants.insert(tree_.constants.end(), immediates.begin(), immediates.end());
    return Ref{false, static_cast<int>(tree_.code.size()) - 1};
  }

  std::optional<Ref> leaf(ir::ValueId id) {
    for (size_t i = 0; i < tree_.leaves.size(); ++i)
      if (tree_.leaves[i] == id) return Ref{true, static_cast<int>(i)};
    if (tree_.leaves.size() + 1 > static_cast<size_t>(ir::kMaxPointwiseLeaves) ||
        registers() + 1 > static_cast<size_t>(ir::kMaxPointwiseRegisters))
      return std::nullopt;
    const Shape& s = graph_.value(id).shape;  // right-aligned against the output, as numpy broadcasts
    const size_t offset = shape_.size() - s.size();
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] != 1 && s[d] != shape_[offset + d]) return std::nullopt;
    tree_.leaves.push_back(id);
    return Ref{true, static_cast<int>(tree_.leaves.size()) - 1};
  }

  // The producer's instructions when it may join, else a leaf. Every joined node adds at least one
  // instruction and a tree reads at least one leaf, so a tree of kMaxPointwiseRegisters nodes cannot be
  // emitted: stopping before bounds the recursion (node → operand → value → node) by the register count,
  // not by the length of a chain of fusible nodes (issue 44: a 20,000-Relu chain overflowed the stack).
  std::optional<Ref> value(ir::ValueId id) {
    if (absorbable(id) && tree_.nodes.size() + 1 < static_cast<size_t>(ir::kMaxPointwiseRegisters)) {
      const Mark m = mark();
      if (std::optional<Ref> r = node(graph_.value(id).producer)) return r;
      rollback(m);
    }
    return leaf(id);
  }

  // A single-element constant as an immediate, else value(id).
  std::optional<Ref> operand(ir::ValueId id) {
    if (const Tensor* c = single_element_constant(graph_, id))
      return emit(PointwiseOp::kConstant, {}, {}, {c->data<float>()[0]});
    return value(id);
  }

  std::optional<Ref> node(ir::NodeId id) {
    const ir::Node& n = graph_.nodes[id];
    tree_.nodes.push_back(id);
    if (n.op == OpKind::kFusedPointwise) return inline_program(n);
    const std::optional<Ref> a = operand(n.inputs[0]);
    if (!a) return std::nullopt;
    const std::optional<PointwiseOp> op = program_op(n.op);
    if (!op) return std::nullopt;
    switch (*op) {
      case PointwiseOp::kClip: return emit(PointwiseOp::kClip, *a, {}, {clip_bound(n, 1), clip_bound(n, 2)});
      case PointwiseOp::kPRelu: {
        if (const Tensor* slope = single_element_constant(graph_, n.inputs[1]))
          return emit(PointwiseOp::kLeakyRelu, *a, {}, {slope->data<float>()[0]});
        const std::optional<Ref> b = value(n.inputs[1]);
        return b ? emit(PointwiseOp::kPRelu, *a, *b) : std::nullopt;
      }
      case PointwiseOp::kPow:
        if (const Tensor* e = single_element_constant(graph_, n.inputs[1]); e != nullptr && e->data<float>()[0] == 2.f)
          return emit(PointwiseOp::kMul, *a, *a);  // powf(a, 2) is a · a, both rounded once (a variance's square)
        break;
      default: break;
    }
    if (!ir::pointwise_op_is_binary(*op)) {  // its immediates from its attributes (alpha, beta)
      const ir::PointwiseParameters p = ir::pointwise_parameters(n.attrs, *op);
      const float parameters[] = {p.p0, p.p1};
      return emit(*op, *a, {}, std::vector<float>(parameters, parameters + ir::pointwise_op_immediates(*op)));
    }
    const std::optional<Ref> b = operand(n.inputs[1]);
    if (!b) return std::nullopt;
    const std::optional<Ref> r = emit(*op, *a, *b);
    if (r && ir::fused_activation(n) == "Relu") return emit(PointwiseOp::kRelu, *r);
    return r;
  }

  float clip_bound(const ir::Node& clip, size_t i) const {
    const Tensor* c = i < clip.inputs.size() ? single_element_constant(graph_, clip.inputs[i]) : nullptr;
    if (c) return c->data<float>()[0];
    return i == 1 ? std::numeric_limits<float>::lowest() : std::numeric_limits<float>::max();
  }

  // An existing FusedPointwise's instructions, its leaves becoming operands of this tree.
  std::optional<Ref> inline_program(const ir::Node& n) {
    Expected<PointwiseProgram> program =
        decode_pointwise_program(n, n.inputs.size(), static_cast<int64_t>(shape_.size()));
    if (!program) return std::nullopt;
    std::vector<Ref> registers;
    for (ir::ValueId id : n.inputs) {
      const std::optional<Ref> r = operand(id);
      if (!r) return std::nullopt;
      registers.push_back(*r);
    }
    for (const PointwiseInstruction& ins : program->code) {
      std::vector<float> immediates = {ins.p0, ins.p1};
      immediates.resize(static_cast<size_t>(ir::pointwise_op_immediates(ins.op)));
      const bool binary = ir::pointwise_op_is_binary(ins.op);
      const std::optional<Ref> r = emit(ins.op, ins.op == PointwiseOp::kConstant ? Ref{} : registers[ins.a],
                                        binary ? registers[ins.b] : Ref{}, std::move(immediates));
      if (!r) return std::nullopt;
      registers.push_back(*r);
    }
    return registers.back();
  }

  const ir::Graph& graph_;
  const std::vector<int>& uses_;
  const std::vector<bool>& taken_;
  const Shape shape_;
  Tree tree_;
};

// Stage 2: the first leaf that is a Concat the tree may read piece by piece; -1 when none.
ir::NodeId absorbable_concat(const ir::Graph& graph, const std::vector<int>& uses, const std::vector<bool>& taken,
                             const Tree& tree, const Shape& shape) {
  for (ir::ValueId id : tree.leaves) {
    const ir::NodeId p = graph.value(id).producer;
    if (p < 0 || taken[p] || graph.nodes[p].op != OpKind::kConcat || uses[id] != 1 || is_graph_output(graph, id))
      continue;
    const ir::Node& concat = graph.nodes[p];
    if (graph.value(id).shape != shape || graph.value(id).dtype != DType::kFloat32) continue;
    if (concat.inputs.empty() || concat.inputs.size() > static_cast<size_t>(ir::kMaxConcatPieces)) continue;
    const bool pieces_ok = std::all_of(concat.inputs.begin(), concat.inputs.end(), [&](ir::ValueId piece) {
      if (piece == ir::kNoValue) return false;
      const ir::Value& v = graph.value(piece);
      return !v.constant && v.dtype == DType::kFloat32 && v.shape.size() == shape.size();
    });
    if (pieces_ok) return p;
  }
  return -1;
}

// Stage 3: the name the report shows. Recognised groups ("SiLU", "HardSwish", "GELU", "ReLU6",
// "BN+ReLU", "BN", "SE gate") and the other instructions' op names, in evaluation order, joined by '+'.
class PatternNamer {
 public:
  PatternNamer(const ir::Graph& graph, const Tree& tree, const Shape& shape)
      : graph_(graph), tree_(tree), shape_(shape), covered_(tree.code.size(), false) {}

  std::string name() {
    std::vector<std::pair<int, std::string>> groups;
    for (int i = static_cast<int>(tree_.code.size()) - 1; i >= 0; --i) {
      if (covered_[i]) continue;
      std::string group = match(i);
      if (group.empty() && tree_.code[i].op != PointwiseOp::kConstant) {
        group = op_label(tree_.code[i].op);
        covered_[i] = true;
      }
      if (!group.empty()) groups.emplace_back(i, group);
    }
    std::string out = tree_.concat >= 0 ? "Concat" : "";
    for (auto it = groups.rbegin(); it != groups.rend(); ++it) out += (out.empty() ? "" : "+") + it->second;
    return out;
  }

 private:
  struct Product {
    std::vector<Ref> terms;  // non-constant factors
    double factor = 1;       // the constant factors' product
    std::vector<int> covered;
  };

  const Instruction* at(Ref r) const { return r.leaf ? nullptr : &tree_.code[r.index]; }
  bool is(Ref r, PointwiseOp op) const { return !r.leaf && tree_.code[r.index].op == op; }
  float p0(Ref r) const { return tree_.constants[tree_.code[r.index].k]; }
  float p1(Ref r) const { return tree_.constants[tree_.code[r.index].k + 1]; }
  bool is_constant(Ref r, double value) const { return is(r, PointwiseOp::kConstant) && near(p0(r), value); }
  // A constant operand: an immediate or a constant leaf (BN's scale and shift).
  bool constant_operand(Ref r) const {
    return is(r, PointwiseOp::kConstant) || (r.leaf && graph_.value(tree_.leaves[r.index]).constant);
  }

  void flatten(Ref r, Product& p) const {
    if (!r.leaf) {
      const Instruction& in = tree_.code[r.index];
      if (in.op == PointwiseOp::kMul || (in.op == PointwiseOp::kDiv && is(in.b, PointwiseOp::kConstant))) {
        p.covered.push_back(r.index);
        flatten(in.a, p);
        if (in.op == PointwiseOp::kMul) {
          flatten(in.b, p);
        } else {
          p.factor /= p0(in.b);
          p.covered.push_back(in.b.index);
        }
        return;
      }
      if (in.op == PointwiseOp::kConstant) {
        p.factor *= p0(r);
        p.covered.push_back(r.index);
        return;
      }
    }
    p.terms.push_back(r);
  }

  // x·f(x) patterns: the name when `t` is f of `x` (adding f's instructions to `covered`), else "".
  std::string product_of(Ref x, Ref t, double factor, std::vector<int>& covered) const {
    const Instruction* f = at(t);
    if (!f) return "";
    covered.push_back(t.index);
    if (f->op == PointwiseOp::kSigmoid && f->a == x && near(factor, 1)) return "SiLU";
    if (f->op == PointwiseOp::kHardSigmoid && f->a == x && near(factor, 1) && near(p0(t), 1.0 / 6) &&
        near(p1(t), 0.5))
      return "HardSwish";
    if (f->op == PointwiseOp::kClip && near(p0(t), 0) && near(p1(t), 6) && near(factor, 1.0 / 6) &&
        is(f->a, PointwiseOp::kAdd)) {  // x·clip(x + 3, 0, 6)/6
      const Instruction& add = *at(f->a);
      for (auto [y, three] : {std::pair{add.a, add.b}, std::pair{add.b, add.a}})
        if (y == x && is_constant(three, 3)) {
          covered.insert(covered.end(), {f->a.index, three.index});
          return "HardSwish";
        }
    }
    if (f->op == PointwiseOp::kAdd && near(factor, 0.5)) {  // x·0.5·(1 + erf(x/√2))
      for (auto [e, one] : {std::pair{f->a, f->b}, std::pair{f->b, f->a}}) {
        if (!is_constant(one, 1) || !is(e, PointwiseOp::kErf) || at(e)->a.leaf) continue;
        const Ref u = at(e)->a;
        const Instruction& scale = *at(u);
        const bool div = scale.op == PointwiseOp::kDiv && scale.a == x && is_constant(scale.b, std::sqrt(2.0));
        const bool mul = scale.op == PointwiseOp::kMul && ((scale.a == x && is_constant(scale.b, std::sqrt(0.5))) ||
                                                           (scale.b == x && is_constant(scale.a, std::sqrt(0.5))));
        if (!div && !mul) continue;
        covered.insert(covered.end(), {one.index, e.index, u.index, (scale.a == x ? scale.b : scale.a).index});
        return "GELU";
      }
    }
    return "";
  }

  // Non-empty when `i` roots a recognised group (then its instructions are covered).
  std::string match(int i) {
    const Instruction& in = tree_.code[i];
    std::vector<int> covered = {i};
    std::string name;
    if (in.op == PointwiseOp::kRelu && is(in.a, PointwiseOp::kAdd) && scale_shift(in.a.index, covered)) {
      name = "BN+ReLU";
    } else if (in.op == PointwiseOp::kAdd && scale_shift(i, covered)) {
      name = "BN";
    } else if (in.op == PointwiseOp::kClip && near(p0({false, i}), 0) && near(p1({false, i}), 6)) {
      name = "ReLU6";
    } else if (in.op == PointwiseOp::kMul || in.op == PointwiseOp::kDiv) {
      Product p;
      flatten({false, i}, p);
      if (p.terms.size() == 2) {
        for (int first = 0; first < 2 && name.empty(); ++first) {
          covered = p.covered;
          name = product_of(p.terms[first], p.terms[1 - first], p.factor, covered);
        }
      }
      if (name.empty() && in.op == PointwiseOp::kMul) {
        covered = {i};
        if (is_gate(in.a, covered) || is_gate(in.b, covered)) name = "SE gate";
      }
    }
    if (name.empty()) return "";
    for (int c : covered)
      if (covered_[c]) return "";
    for (int c : covered) covered_[c] = true;
    return name;
  }

  // Add(Mul(x, scale), shift) with constant scale and shift; adds its instructions to `covered`.
  bool scale_shift(int add_index, std::vector<int>& covered) const {
    const Instruction& add = tree_.code[add_index];
    for (auto [mul, shift] : {std::pair{add.a, add.b}, std::pair{add.b, add.a}}) {
      if (!is(mul, PointwiseOp::kMul) || !constant_operand(shift)) continue;
      const Instruction& m = *at(mul);
      const Ref scale = constant_operand(m.b) ? m.b : m.a;
      if (!constant_operand(scale) || constant_operand(scale == m.b ? m.a : m.b)) continue;
      covered.insert(covered.end(), {add_index, mul.index});
      for (Ref c : {scale, shift})
        if (!c.leaf) covered.push_back(c.index);
      return true;
    }
    return false;
  }

  // A non-constant leaf with singleton spatial dims (an SE block's gate) in an output that has some.
  // A leaf with singleton spatial dims, or a unary activation of one computed per element (adding
  // that instruction to `covered`).
  bool is_gate(Ref r, std::vector<int>& covered) const {
    if (!r.leaf) {
      const Instruction& in = tree_.code[r.index];
      if (ir::pointwise_op_is_binary(in.op) || in.op == PointwiseOp::kConstant || !is_gate(in.a, covered)) return false;
      covered.push_back(r.index);
      return true;
    }
    if (shape_.size() < 3) return false;
    const ir::Value& v = graph_.value(tree_.leaves[r.index]);
    if (v.constant) return false;
    const auto spatial = [](const Shape& s) { return shape_numel(Shape(s.begin() + 2, s.end())); };
    return spatial(v.shape) == 1 && spatial(shape_) > 1;
  }

  static std::string op_label(PointwiseOp op) {
    static const char* const kNames[] = {"Add", "Sub", "Mul", "Div", "Relu", "LeakyRelu", "PRelu",
                                         "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Clip", "Elu", "Erf",
                                         "Constant", "Max", "Min", "Sqrt", "Neg", "Exp", "Log", "Abs",
                                         "Reciprocal", "Softplus", "Pow"};
    static_assert(sizeof kNames / sizeof kNames[0] == static_cast<size_t>(PointwiseOp::kCount));
    return kNames[static_cast<int>(op)];
  }

  const ir::Graph& graph_;
  const Tree& tree_;
  const Shape& shape_;
  std::vector<bool> covered_;
};

// The FusedPointwise node for `tree`, its leaves' constants reshaped to the output's rank.
class NodeMaker {
 public:
  explicit NodeMaker(ir::Graph& graph) : graph_(graph) {}

  ir::Node make(const Tree& tree, const ir::Node& root, std::string pattern) {
    const size_t rank = graph_.value(root.outputs[0]).shape.size();
    PointwiseAttrs attrs;
    attrs.pattern = std::move(pattern);
    std::vector<ir::ValueId> inputs;
    if (tree.concat >= 0) {
      const ir::Node& concat = graph_.nodes[tree.concat];
      inputs = concat.inputs;
      attrs.concat_count = static_cast<int64_t>(concat.inputs.size());
      attrs.concat_axis = normalize_axis(concat.attrs.get_int("axis"), static_cast<int64_t>(rank));
    }
    // Registers: the concat's leaf first, then the others in the order the tree met them.
    std::vector<int> leaf_register(tree.leaves.size());
    const size_t concat_leaf = tree.concat >= 0 ? leaf_index(tree, graph_.nodes[tree.concat].outputs[0]) : SIZE_MAX;
    int next = tree.concat >= 0 ? 1 : 0;
    for (size_t j = 0; j < tree.leaves.size(); ++j) {
      if (j == concat_leaf) {
        leaf_register[j] = 0;
        continue;
      }
      leaf_register[j] = next++;
      inputs.push_back(with_rank(tree.leaves[j], rank));
    }
    const int leaves = next;
    auto reg = [&](Ref r) -> int64_t { return r.leaf ? leaf_register[r.index] : leaves + r.index; };
    for (const Instruction& in : tree.code) {
      const bool unary_or_constant = !ir::pointwise_op_is_binary(in.op);
      attrs.program.insert(attrs.program.end(),
                           {static_cast<int64_t>(in.op), in.op == PointwiseOp::kConstant ? 0 : reg(in.a),
                            unary_or_constant ? 0 : reg(in.b), ir::pointwise_op_immediates(in.op) ? in.k : 0});
    }
    attrs.constants = tree.constants;
    ir::Node fused = make_fused_pointwise(root, std::move(inputs), std::move(attrs));
    fused.outputs = {root.outputs[0]};
    return fused;
  }

 private:
  static size_t leaf_index(const Tree& tree, ir::ValueId id) {
    return static_cast<size_t>(std::find(tree.leaves.begin(), tree.leaves.end(), id) - tree.leaves.begin());
  }

  // `id`, or for a constant of lower rank a copy of it with leading 1s (made once per constant and rank).
  ir::ValueId with_rank(ir::ValueId id, size_t rank) {
    const ir::Value& v = graph_.value(id);
    if (v.shape.size() == rank) return id;
    auto [it, added] = reshaped_.try_emplace({id, rank}, ir::kNoValue);
    if (!added) return it->second;
    Shape shape(rank - v.shape.size(), 1);
    shape.insert(shape.end(), v.shape.begin(), v.shape.end());
    Tensor t = v.constant->reshaped(shape);
    const std::string name = v.name + ".rank" + std::to_string(rank);
    it->second = graph_.add_value({name, v.dtype, shape, std::move(t), -1});
    return it->second;
  }

  ir::Graph& graph_;
  std::map<std::pair<ir::ValueId, size_t>, ir::ValueId> reshaped_;
};

}  // namespace

Status fuse_pointwise(ir::Graph& graph, PassStats* stats) {
  const std::vector<int> uses = count_uses(graph);
  const size_t count = graph.nodes.size();
  std::vector<bool> taken(count, false);
  std::vector<std::optional<Tree>> trees(count);
  for (size_t n = count; n-- > 0;) {
    if (taken[n] || graph.nodes[n].outputs.empty()) continue;
    const ir::ValueId out = graph.nodes[n].outputs[0];
    const Shape shape = graph.value(out).shape;
    std::optional<Tree> tree = TreeBuilder(graph, uses, taken, shape).build(static_cast<ir::NodeId>(n));
    if (!tree) continue;
    const bool reads_input = std::any_of(tree->leaves.begin(), tree->leaves.end(),
                                         [&](ir::ValueId id) { return !graph.value(id).constant; });
    tree->concat = absorbable_concat(graph, uses, taken, *tree, shape);
    if (!reads_input || (tree->nodes.size() < 2 && tree->concat < 0)) continue;
    for (ir::NodeId id : tree->nodes) taken[id] = true;
    if (tree->concat >= 0) taken[tree->concat] = true;
    trees[n] = std::move(tree);
  }
  std::vector<bool> remove(count, false);
  NodeMaker maker(graph);
  for (size_t n = 0; n < count; ++n) {
    if (!trees[n]) continue;
    const Tree& tree = *trees[n];
    const Shape shape = graph.value(graph.nodes[n].outputs[0]).shape;
    std::string pattern = PatternNamer(graph, tree, shape).name();
    ir::Node fused = maker.make(tree, graph.nodes[n], std::move(pattern));
    for (ir::NodeId id : tree.nodes) remove[id] = id != static_cast<ir::NodeId>(n);
    if (tree.concat >= 0) remove[tree.concat] = true;
    graph.nodes[n] = std::move(fused);  // the root's place: every leaf is computed before it
    ++stats->pointwise_fused;
    stats->pointwise_nodes_replaced += static_cast<int>(tree.nodes.size()) + (tree.concat >= 0 ? 1 : 0);
  }
  remove_nodes(graph, remove);
  return Status::ok();
}

}  // namespace ucudnn::optimizer
