// matmul_to_gemm: MatMul(A [..., M, K], B [K, N]) with a constant float32 B becomes
// Reshape(A → [rows, K]) → Gemm → Reshape(→ [..., M, N]), and an Add of a constant bias [N] (or
// [1, ..., 1, N]) that alone reads the MatMul's output becomes the Gemm's C. A Linear layer on a
// channels-last activation exports as such a MatMul (ConvNeXt's MLP blocks: [N, H, W, C] × [C, 4C]);
// the Gemm runs through oneDNN's matmul on the CPU (Note [oneDNN Gemm]) and cuBLAS on the GPU with
// the bias in the same call, where the MatMul kernel ran one batched product and the Add a pass of
// its own. The Reshapes are views (Note [views]): they copy nothing.
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "optimizer/passes/graph_edit.h"
#include "optimizer/passes/passes.h"
#include "runtime/ops/op_descriptor.h"

namespace ucudnn::optimizer {

namespace {

bool is_float_constant(const ir::Graph& graph, ir::ValueId id) {
  return id != ir::kNoValue && graph.value(id).constant.has_value() && graph.value(id).dtype == DType::kFloat32;
}

// Whether `node` is a MatMul this pass rewrites.
bool is_linear(const ir::Graph& graph, const ir::Node& node) {
  if (node.op != OpKind::kMatMul || node.inputs.size() != 2 || !is_float_constant(graph, node.inputs[1])) return false;
  const Shape& a = graph.value(node.inputs[0]).shape;
  const Shape& b = graph.value(node.inputs[1]).shape;
  // An empty product stays a MatMul (which writes zeros; a Gemm of K = 0 is no kernel's case).
  return graph.value(node.inputs[0]).dtype == DType::kFloat32 && a.size() >= 2 && b.size() == 2 && a.back() == b[0] &&
         a.back() > 0 && shape_numel(a) > 0 && b[1] > 0;
}

// The Add reading `y` (the output of node `matmul`, [..., N]) as its only reader with a constant bias of N elements
// along the last axis; -1 when there is none.
ir::NodeId bias_add(const ir::Graph& graph, const std::vector<int>& uses, size_t matmul, ir::ValueId y) {
  if (uses[static_cast<size_t>(y)] != 1 || is_graph_output(graph, y)) return -1;
  const int64_t n = graph.value(y).shape.back();
  for (size_t i = matmul + 1; i < graph.nodes.size(); ++i) {  // the nodes are in topological order
    const ir::Node& add = graph.nodes[i];
    if (add.op != OpKind::kAdd || add.inputs.size() != 2 || !ir::fused_activation(add).empty()) continue;
    for (size_t side = 0; side < 2; ++side) {
      if (add.inputs[side] != y || !is_float_constant(graph, add.inputs[1 - side])) continue;
      const Shape& bias = graph.value(add.inputs[1 - side]).shape;
      if (!bias.empty() && bias.back() == n && shape_numel(bias) == n && graph.value(add.outputs[0]).shape ==
                                                                               graph.value(y).shape)
        return static_cast<ir::NodeId>(i);
    }
  }
  return -1;
}

ir::ValueId int64_constant(ir::Graph& graph, const std::string& hint, const std::vector<int64_t>& values) {
  const Shape shape = {static_cast<int64_t>(values.size())};
  return graph.add_value(
      {graph.unused_value_name(hint), DType::kInt64, shape, Tensor::from_int64s(shape, values), -1});
}

// The nodes it makes take opset 13's forms (Gemm's C optional), with every attribute's default set, as
// the importer sets them: kernels read them without asking (the CUDA Gemm reads transA, alpha, beta).
ir::Node make_node(const std::string& name, OpKind op, std::vector<ir::ValueId> inputs, ir::ValueId output) {
  ir::Node node;
  node.name = name;
  node.op = op;
  node.opset = 13;
  node.inputs = std::move(inputs);
  node.outputs = {output};
  fill_default_attributes(node);
  return node;
}

}  // namespace

Status matmul_to_gemm(ir::Graph& graph, PassStats* stats) {
  const std::vector<int> uses = count_uses(graph);
  std::vector<bool> remove(graph.nodes.size(), false);
  std::vector<ir::Node> nodes;
  bool rewritten = false;
  // Each rewritten MatMul's nodes go where the MatMul was: its inputs are computed there. A folded Add
  // comes after the MatMul, so its readers come after the Gemm too.
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (remove[i]) continue;
    const ir::Node matmul = graph.nodes[i];  // a copy: add_value moves the values, not the nodes
    if (!is_linear(graph, matmul)) {
      nodes.push_back(graph.nodes[i]);
      continue;
    }
    const ir::ValueId a = matmul.inputs[0], b = matmul.inputs[1];
    const Shape a_shape = graph.value(a).shape;
    const int64_t k = a_shape.back(), n = graph.value(b).shape[1];
    const int64_t rows = shape_numel(a_shape) / k;
    std::vector<ir::ValueId> gemm_inputs = {a, b};
    ir::ValueId y = matmul.outputs[0];
    const ir::NodeId add = bias_add(graph, uses, i, y);
    if (add >= 0) {
      const ir::Node& add_node = graph.nodes[static_cast<size_t>(add)];
      const ir::ValueId bias = add_node.inputs[add_node.inputs[0] == y ? 1 : 0];
      const Tensor& data = *graph.value(bias).constant;
      const Shape c_shape = {n};
      const std::span<const float> values(data.data<float>(), static_cast<size_t>(n));
      gemm_inputs.push_back(graph.add_value({graph.unused_value_name(matmul.name + "/gemm_bias"), DType::kFloat32,
                                             c_shape, Tensor::from_floats(c_shape, values), -1}));
      y = add_node.outputs[0];
      remove[static_cast<size_t>(add)] = true;
      ++stats->biases_folded_into_gemms;
    }
    const Shape y_shape = graph.value(y).shape;
    const std::string name = graph.value(y).name;
    if (a_shape.size() == 2) {
      nodes.push_back(make_node(matmul.name, OpKind::kGemm, gemm_inputs, y));
    } else {  // A [..., M, K] as rows [rows, K], the product [rows, N] back as Y [..., M, N]
      const ir::ValueId a_rows = graph.add_value(
          {graph.unused_value_name(name + "/rows"), DType::kFloat32, Shape{rows, k}, std::nullopt, -1});
      nodes.push_back(make_node(matmul.name + "/rows", OpKind::kReshape,
                                {a, int64_constant(graph, name + "/rows_shape", {rows, k})}, a_rows));
      gemm_inputs[0] = a_rows;
      const ir::ValueId y_rows = graph.add_value(
          {graph.unused_value_name(name + "/gemm"), DType::kFloat32, Shape{rows, n}, std::nullopt, -1});
      nodes.push_back(make_node(matmul.name, OpKind::kGemm, gemm_inputs, y_rows));
      nodes.push_back(make_node(matmul.name + "/unrows", OpKind::kReshape,
                                {y_rows, int64_constant(graph, name + "/shape", y_shape)}, y));
    }
    ++stats->matmuls_made_gemms;
    rewritten = true;
  }
  if (!rewritten) return Status::ok();
  graph.nodes = std::move(nodes);
  graph.prune();  // renumbers the producers; drops the old biases no node reads
  return Status::ok();
}

}  // namespace ucudnn::optimizer
