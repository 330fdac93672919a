// The CUDA kernel table, generated from op_list.h, and PrepareArgs helpers.
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/ops/lowered_ops.h"

namespace ucudnn::cuda {

#define UCUDNN_DECLARE_CUDA_KERNEL(name) const CudaKernel& cuda_kernel_##name();
UCUDNN_FOR_EACH_OP(UCUDNN_DECLARE_CUDA_KERNEL)
#undef UCUDNN_DECLARE_CUDA_KERNEL

// None for the ops the importer lowers (Note [lowered ops], runtime/ops/lowered_ops.h).
#define UCUDNN_NO_CUDA_KERNEL(name)          \
  const CudaKernel& cuda_kernel_##name() { \
    static const CudaKernel k{};           \
    return k;                              \
  }
UCUDNN_FOR_EACH_LOWERED_OP(UCUDNN_NO_CUDA_KERNEL)
#undef UCUDNN_NO_CUDA_KERNEL

const CudaKernel& cuda_kernel(OpKind kind) {
  using Get = const CudaKernel& (*)();
  static const Get table[] = {
#define UCUDNN_CUDA_KERNEL_ENTRY(name) &cuda_kernel_##name,
      UCUDNN_FOR_EACH_OP(UCUDNN_CUDA_KERNEL_ENTRY)
#undef UCUDNN_CUDA_KERNEL_ENTRY
  };
  return table[static_cast<int>(kind)]();
}

size_t cuda_step_workspace(const ir::Graph& graph, const ir::Node& node) {
  switch (node.op) {
    case OpKind::kBatchNormTrain: case OpKind::kBatchNormGrad: return batch_norm_step_workspace(graph, node);
    case OpKind::kMaxPoolGrad: return pool_grad_step_workspace(graph, node);
    default: return reduce_step_workspace(graph, node);
  }
}

const Tensor* PrepareArgs::constant(size_t i) const {
  if (!has_src(i)) return nullptr;
  const ir::Value& v = graph.value(node.inputs[i]);
  return v.constant ? &*v.constant : nullptr;
}

DType PrepareArgs::src_dtype(size_t i) const {
  return has_src(i) ? graph.value(node.inputs[i]).dtype : DType::kUndefined;
}

std::string PrepareArgs::describe() const {
  std::string text = node.describe() + ", inputs";
  for (size_t i = 0; i < src_shapes.size(); ++i) {
    text.append(" ");  // append, not operator+: GCC 12 warns falsely (-Wrestrict) on " " + string
    if (!has_src(i)) {
      text.append("(absent)");
      continue;
    }
    text.append(dtype_name(src_dtype(i)));
    text.append(shape_to_string(src_shapes[i]));
  }
  return text;
}

Status PrepareArgs::unsupported_error(const std::string& message) const {
  return unsupported(describe() + ": " + message + " (CUDA backend)");
}

}  // namespace ucudnn::cuda
