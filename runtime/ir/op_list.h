// The one list of op kinds. The OpKind enum, the name table, the descriptor
// registry and every backend's kernel table are generated from it; adding an op
// means one line here, one descriptor (runtime/ops/) and one kernel per backend.
#pragma once

// clang-format off
#define UCUDNN_FOR_EACH_OP(X)                                                      \
  /* convolution and normalization */                                               \
  X(Conv) X(ConvTranspose) X(BatchNormalization) X(LRN) X(LayerNormalization)      \
  X(InstanceNormalization) X(GroupNormalization) X(MeanVarianceNormalization)      \
  /* activations */                                                                 \
  X(Relu) X(LeakyRelu) X(PRelu) X(Sigmoid) X(Tanh) X(HardSigmoid) X(HardSwish)      \
  X(Clip) X(Elu) X(Erf) X(Gelu) X(Softplus) X(Softsign) X(Celu) X(Selu) X(ThresholdedRelu) X(Shrink) \
  /* elementwise math */                                                            \
  X(Sqrt) X(Exp) X(Log) X(Abs) X(Neg) X(Reciprocal)                                 \
  X(Floor) X(Ceil) X(Round) X(Sign)                                                 \
  X(Sin) X(Cos) X(Tan) X(Asin) X(Acos) X(Atan)                                      \
  X(Sinh) X(Cosh) X(Asinh) X(Acosh) X(Atanh)                                        \
  /* pooling */                                                                     \
  X(MaxPool) X(AveragePool) X(GlobalAveragePool) X(GlobalMaxPool) X(Resize)         \
  X(Upsample) X(GridSample) X(MaxUnpool)                                            \
  /* matrix products */                                                             \
  X(Gemm) X(MatMul)                                                                 \
  /* broadcasting binary */                                                         \
  X(Add) X(Sub) X(Mul) X(Div) X(Pow) X(Mod) X(Sum) X(Mean) X(Max) X(Min)           \
  /* comparisons and logic (bool results), and Where */                             \
  X(Equal) X(Less) X(Greater) X(LessOrEqual) X(GreaterOrEqual)                      \
  X(Not) X(And) X(Or) X(Xor) X(Where) X(IsNaN) X(IsInf)                             \
  /* data movement and shapes */                                                    \
  X(Concat) X(Split) X(Slice) X(Flatten) X(Reshape) X(Transpose) X(Squeeze)         \
  X(Unsqueeze) X(Pad) X(Gather) X(Cast) X(Shape) X(Identity) X(Dropout) X(Constant) \
  X(ConstantOfShape) X(Size) X(DepthToSpace) X(SpaceToDepth) X(Tile)               \
  X(CastLike) X(Range) X(EyeLike) X(GatherElements) X(ScatterElements) X(ScatterND) \
  X(Einsum) X(Trilu) X(CumSum) X(TopK) X(GatherND) X(OneHot)                        \
  /* reductions and normalizing exponentials */                                     \
  X(ReduceMean) X(Softmax) X(LogSoftmax) X(ReduceSum) X(Expand)                    \
  X(ReduceMax) X(ReduceMin) X(ReduceProd) X(ReduceL1) X(ReduceL2)                  \
  X(ReduceSumSquare) X(ReduceLogSum) X(ReduceLogSumExp) X(ArgMax) X(ArgMin)        \
  X(NegativeLogLikelihoodLoss) X(SoftmaxCrossEntropyLoss) X(Hardmax)               \
  /* training (docs/TRAINING.md): ucudnn-internal ops the training graph adds */    \
  X(ConvGradData) X(ConvGradFilter)                                                 \
  X(ActivationGrad) X(PReluGrad) X(DropoutTrain)                                    \
  X(MaxPoolGrad) X(AveragePoolGrad) X(BatchNormTrain) X(BatchNormGrad)              \
  X(SoftmaxGrad) X(LogSoftmaxGrad) X(SoftmaxCrossEntropyMean)                       \
  X(SoftmaxCrossEntropyMeanGrad) X(SgdUpdate) X(AdamWUpdate)                       \
  /* fusion (internal): Note [pointwise programs], runtime/ir/pointwise_program.h */ \
  X(FusedPointwise)
// clang-format on

namespace ucudnn {

enum class OpKind : int {
#define UCUDNN_OP_ENUM(name) k##name,
  UCUDNN_FOR_EACH_OP(UCUDNN_OP_ENUM)
#undef UCUDNN_OP_ENUM
      kCount
};

// Catches a half-added op: update this when the list changes.
static_assert(static_cast<int>(OpKind::kCount) == 144, "op list changed: update the count");

// "Conv", "Relu", ... (the ONNX op_type).
const char* op_name(OpKind kind);
// The OpKind for an ONNX op_type in the default domain; false when unknown.
bool op_from_name(const char* name, OpKind* kind);

}  // namespace ucudnn
