// TEMPORARY: weak placeholders so the library links while ops are written.
// Each real descriptor/kernel overrides its placeholder. Deleted once every op exists.
#include "runtime/ops/op_descriptor.h"
#include "runtime/cpu/cpu_kernel.h"
namespace ucudnn {
namespace { Status pending(InferContext& c) { return c.unsupported_error("op not implemented yet"); } }
__attribute__((weak)) const OpDescriptor& describe_Conv() { static const OpDescriptor d{.kind = OpKind::kConv, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_BatchNormalization() { static const OpDescriptor d{.kind = OpKind::kBatchNormalization, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_LRN() { static const OpDescriptor d{.kind = OpKind::kLRN, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Relu() { static const OpDescriptor d{.kind = OpKind::kRelu, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_LeakyRelu() { static const OpDescriptor d{.kind = OpKind::kLeakyRelu, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_PRelu() { static const OpDescriptor d{.kind = OpKind::kPRelu, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Sigmoid() { static const OpDescriptor d{.kind = OpKind::kSigmoid, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Tanh() { static const OpDescriptor d{.kind = OpKind::kTanh, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_HardSigmoid() { static const OpDescriptor d{.kind = OpKind::kHardSigmoid, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_HardSwish() { static const OpDescriptor d{.kind = OpKind::kHardSwish, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Clip() { static const OpDescriptor d{.kind = OpKind::kClip, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Elu() { static const OpDescriptor d{.kind = OpKind::kElu, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_MaxPool() { static const OpDescriptor d{.kind = OpKind::kMaxPool, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_AveragePool() { static const OpDescriptor d{.kind = OpKind::kAveragePool, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_GlobalAveragePool() { static const OpDescriptor d{.kind = OpKind::kGlobalAveragePool, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_GlobalMaxPool() { static const OpDescriptor d{.kind = OpKind::kGlobalMaxPool, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Gemm() { static const OpDescriptor d{.kind = OpKind::kGemm, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_MatMul() { static const OpDescriptor d{.kind = OpKind::kMatMul, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Add() { static const OpDescriptor d{.kind = OpKind::kAdd, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Sub() { static const OpDescriptor d{.kind = OpKind::kSub, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Mul() { static const OpDescriptor d{.kind = OpKind::kMul, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Div() { static const OpDescriptor d{.kind = OpKind::kDiv, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Concat() { static const OpDescriptor d{.kind = OpKind::kConcat, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Split() { static const OpDescriptor d{.kind = OpKind::kSplit, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Slice() { static const OpDescriptor d{.kind = OpKind::kSlice, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Flatten() { static const OpDescriptor d{.kind = OpKind::kFlatten, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Reshape() { static const OpDescriptor d{.kind = OpKind::kReshape, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Transpose() { static const OpDescriptor d{.kind = OpKind::kTranspose, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Squeeze() { static const OpDescriptor d{.kind = OpKind::kSqueeze, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Unsqueeze() { static const OpDescriptor d{.kind = OpKind::kUnsqueeze, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Pad() { static const OpDescriptor d{.kind = OpKind::kPad, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Gather() { static const OpDescriptor d{.kind = OpKind::kGather, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Cast() { static const OpDescriptor d{.kind = OpKind::kCast, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Shape() { static const OpDescriptor d{.kind = OpKind::kShape, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Identity() { static const OpDescriptor d{.kind = OpKind::kIdentity, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Dropout() { static const OpDescriptor d{.kind = OpKind::kDropout, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Constant() { static const OpDescriptor d{.kind = OpKind::kConstant, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_ReduceMean() { static const OpDescriptor d{.kind = OpKind::kReduceMean, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_Softmax() { static const OpDescriptor d{.kind = OpKind::kSoftmax, .infer = pending}; return d; }
__attribute__((weak)) const OpDescriptor& describe_LogSoftmax() { static const OpDescriptor d{.kind = OpKind::kLogSoftmax, .infer = pending}; return d; }
namespace cpu {
__attribute__((weak)) const CpuKernel& cpu_kernel_Conv() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_BatchNormalization() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_LRN() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Relu() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_LeakyRelu() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_PRelu() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Sigmoid() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Tanh() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_HardSigmoid() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_HardSwish() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Clip() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Elu() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_MaxPool() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_AveragePool() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_GlobalAveragePool() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_GlobalMaxPool() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Gemm() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_MatMul() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Add() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Sub() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Mul() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Div() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Concat() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Split() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Slice() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Flatten() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Reshape() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Transpose() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Squeeze() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Unsqueeze() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Pad() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Gather() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Cast() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Shape() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Identity() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Dropout() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Constant() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_ReduceMean() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_Softmax() { static const CpuKernel k{}; return k; }
__attribute__((weak)) const CpuKernel& cpu_kernel_LogSoftmax() { static const CpuKernel k{}; return k; }
}  // namespace cpu
}  // namespace ucudnn
