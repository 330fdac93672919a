// Constant folding at import: a node whose present inputs are all constant is
// evaluated by a CPU backend (Note [folding through the backend]) and its outputs become constants; Shape and Size
// are evaluated from their input's static shape alone, ConstantOfShape from its
// value. Folded nodes are then removed and the graph pruned (shape_resolution.cc). Nodes whose kernel is not
// available, whose kernel reports Unsupported for these inputs, or whose
// outputs exceed kMaxFoldBytes are left to run at run time.
#include <algorithm>
#include <cstring>
#include <memory>

#include "onnx_import/internal.h"
#include "onnx_import/lowering/constant_of_shape.h"
#include "runtime/backend/backend.h"
#include "runtime/cpu/cpu_backend.h"

namespace ucudnn::onnx_import {

namespace {

// Shape-15's start/end: clamped slice of the input's dims.
Expected<bool> fold_shape(ir::Graph& graph, ir::Node& node) {
  if (node.inputs.empty() || node.inputs[0] == ir::kNoValue || node.outputs.empty() ||
      node.outputs[0] == ir::kNoValue)
    return false;
  const Shape& dims = graph.value(node.inputs[0]).shape;
  const auto rank = static_cast<int64_t>(dims.size());
  int64_t start = node.attrs.has("start") ? node.attrs.get_int("start") : 0;
  int64_t end = node.attrs.has("end") ? node.attrs.get_int("end") : rank;
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> values(dims.begin() + start, dims.begin() + std::max(start, end));
  Tensor t = int64_vector_tensor(values);
  ir::Value& out = graph.value(node.outputs[0]);
  if (out.dtype != DType::kInt64 || out.shape != t.shape())
    return internal_error(node.describe() + ": shape rule gives " + std::string(dtype_name(out.dtype)) +
                          shape_to_string(out.shape) + " but the folded value is " + t.describe());
  out.constant = std::move(t);
  return true;
}

// Size: the element count of its input's static shape.
Expected<bool> fold_size(ir::Graph& graph, ir::Node& node) {
  if (node.inputs.empty() || node.inputs[0] == ir::kNoValue || node.outputs.empty() ||
      node.outputs[0] == ir::kNoValue)
    return false;
  const int64_t numel = shape_numel(graph.value(node.inputs[0]).shape);
  graph.value(node.outputs[0]).constant = Tensor::from_int64s({}, std::span<const int64_t>(&numel, 1));
  return true;
}

// ConstantOfShape: its output filled with its value (constant_of_shape_value) when that output is at most
// kMaxFoldBytes; a larger one is lowered into an Expand that runs (lowering/constant_of_shape.h).
Expected<bool> fold_constant_of_shape(ir::Graph& graph, ir::Node& node) {
  ir::Value& out = graph.value(node.outputs[0]);
  const size_t element = dtype_size(out.dtype);
  if (static_cast<size_t>(shape_numel(out.shape)) > kMaxFoldBytes / element) return false;
  const Tensor value = constant_of_shape_value(node);
  if (value.dtype() != out.dtype || value.raw() == nullptr)
    return internal_error(node.describe() + ": its value " + value.describe() + " does not match its output " +
                          std::string(dtype_name(out.dtype)));
  UCUDNN_ASSIGN_OR_RETURN(Tensor filled, Tensor::allocate(out.dtype, out.shape));
  auto* bytes = static_cast<unsigned char*>(filled.raw());
  for (int64_t i = 0; i < filled.numel(); ++i)
    std::memcpy(bytes + static_cast<size_t>(i) * element, value.raw(), element);
  out.constant = std::move(filled);
  return true;
}

// Note [folding through the backend]
// Every other node is evaluated as the executor runs a step, through the Backend interface
// (runtime/backend/backend.h): prepare a kernel for the node at the graph's shapes, then run it on views of
// the constants into outputs allocated here. The backend is the CPU's with plain calls (cpu::CpuCalls::kPlain):
// each op's kernel-table `run`, never a prepared oneDNN Conv or Gemm primitive, which is what folding has
// always computed, so folded values do not change with the build's oneDNN.
runtime::Backend& folding_backend() {
  static const std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend(cpu::CpuCalls::kPlain);
  return *backend;
}

// A view of host tensor `t` for a kernel.
runtime::TensorRef tensor_ref(const Tensor& t) {
  return runtime::TensorRef{t.dtype(), t.shape(), const_cast<void*>(t.raw())};
}

}  // namespace

Expected<bool> fold_node(ir::Graph& graph, ir::NodeId id) {
  ir::Node& node = graph.nodes[static_cast<size_t>(id)];
  if (node.op == OpKind::kShape) return fold_shape(graph, node);
  if (node.op == OpKind::kSize) return fold_size(graph, node);
  if (node.op == OpKind::kConstantOfShape) return fold_constant_of_shape(graph, node);

  std::vector<runtime::TensorRef> src(node.inputs.size());  // an absent input: dtype kUndefined
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == ir::kNoValue) continue;
    const ir::Value& v = graph.value(node.inputs[i]);
    if (!v.constant) return false;
    src[i] = tensor_ref(*v.constant);
  }
  // Note [folding through the backend]
  Expected<std::unique_ptr<runtime::Kernel>> kernel =
      folding_backend().prepare(runtime::kernel_request(graph, node, /*micro_batch=*/0, /*algorithm=*/-1));
  if (!kernel) {
    if (kernel.status().code() == StatusCode::kUnsupported) return false;  // no CPU kernel (yet)
    return kernel.status().with_context("evaluating constant " + node.describe() + " at load time");
  }

  std::vector<Tensor> dst_tensors(node.outputs.size());
  std::vector<runtime::TensorRef> dst(node.outputs.size());  // an absent output: dtype kUndefined
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) continue;
    const ir::Value& v = graph.value(node.outputs[i]);
    if (static_cast<size_t>(shape_numel(v.shape)) * dtype_size(v.dtype) > kMaxFoldBytes) return false;
    UCUDNN_ASSIGN_OR_RETURN(dst_tensors[i], Tensor::allocate(v.dtype, v.shape));
    dst[i] = tensor_ref(dst_tensors[i]);
  }
  const size_t ws_bytes = (*kernel)->workspace_bytes();
  Tensor workspace;
  if (ws_bytes > 0) {
    if (ws_bytes > kMaxFoldBytes) return false;
    UCUDNN_ASSIGN_OR_RETURN(workspace, Tensor::allocate(DType::kUInt8, {static_cast<int64_t>(ws_bytes)}));
  }
  const Status status = (*kernel)->run(runtime::KernelIo{.src = src,
                                                         .dst = dst,
                                                         .workspace = ws_bytes ? workspace.raw() : nullptr,
                                                         .workspace_bytes = ws_bytes,
                                                         .stream = 0});
  if (status.code() == StatusCode::kUnsupported) return false;  // leave it to run time
  if (!status.is_ok()) return status.with_context("evaluating constant " + node.describe() + " at load time");
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.outputs[i] != ir::kNoValue) graph.value(node.outputs[i]).constant = std::move(dst_tensors[i]);
  return true;
}

void remove_folded_nodes(ir::Graph& graph) {
  std::vector<ir::Node> kept;
  for (ir::Node& node : graph.nodes) {
    bool folded = false;
    for (ir::ValueId out : node.outputs)
      if (out != ir::kNoValue) folded = graph.value(out).constant.has_value();
    for (ir::ValueId out : node.outputs)
      if (out != ir::kNoValue && !graph.value(out).constant) folded = false;
    const ir::NodeId new_id = folded ? -1 : static_cast<ir::NodeId>(kept.size());
    for (ir::ValueId out : node.outputs)
      if (out != ir::kNoValue) graph.value(out).producer = new_id;
    if (!folded) kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);
}

}  // namespace ucudnn::onnx_import
