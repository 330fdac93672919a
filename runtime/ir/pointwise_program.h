// Note [pointwise programs]: what a FusedPointwise node computes, as plain data.
//
// optimizer/passes/fuse_pointwise.cc turns a tree of elementwise nodes (activations, Add/Sub/Mul/Div
// with broadcasting, Clip, inference BatchNormalization as scale-shift, ...) whose inner values no
// one else reads into one FusedPointwise node; its kernels (runtime/cpu, runtime/cuda) read each
// input once and write the output once.
//
// Attributes of a FusedPointwise node:
//   program   (ints)   instructions, kInstructionWidth ints each: {opcode, a, b, k}
//   constants (floats) immediate parameters the instructions read (alpha, min/max, a literal)
//   concat_axis, concat_count (ints, default -1 / 0): see "leaves" below
//   pattern   (string) what the program is, for the report: "SiLU", "HardSwish", "ReLU6", "GELU",
//                      "BN+ReLU", ..., or the ops joined by '+'.
//
// Registers. Registers 0 .. L-1 hold the L leaves at the output element's (broadcast) index;
// instruction i writes register L + i; the last register is the output. Leaves are the node's inputs
// in order, except that with concat_count = c > 0 the first c inputs are concatenated along
// concat_axis into leaf 0 (a Concat the pass absorbed: DenseNet's concat → BN → ReLU reads the
// pieces where they lie and writes once), and input c + j is leaf 1 + j. So L = inputs - c + 1
// with a concat, L = inputs without.
//
// Shapes. Every leaf has the output's rank (the pass reshapes constants to it) and broadcasts to
// the output shape numpy-style (each dim equal or 1); the concat leaf has exactly the output's
// shape (its pieces are the output's shape but along concat_axis). The output is float32, as
// every leaf.
//
// Instruction {opcode, a, b, k}: a and b are registers (b unused for unary ops), k the index of the
// first immediate in `constants` (unused by ops without one). The semantics of each opcode are
// eval_pointwise below: one definition for the CPU kernel, the CUDA kernel and the tests.
//
// Note [one formula per op]
// PointwiseOp lists every elementwise op once and eval_pointwise is its one scalar formula, for every
// path that computes one: FusedPointwise on both devices (NVRTC compiles this file too), the lone
// nodes' kernels of both devices (through eval_unary_node: Note [lone-node forms]), the Conv
// epilogues (an ir::ConvActivation is a PointwiseOp: runtime/ir/conv_activation.h) and the kinds
// ActivationGrad differentiates (runtime/ops/activation_grad.h). runtime/ir/unary_ops.h maps OpKind
// to PointwiseOp, in one place. The CPU alone has vector forms beside it, written where they run and
// documented there: the loops of runtime/cpu/fused_pointwise.cc (Note [CPU vector forms]) and the
// SiLU/sigmoid of runtime/cpu/vector_activations.h (Note [vector activations]), which its Conv
// epilogues share.
// Adding a unary op ONNX names X touches: op_list.h (X) and its descriptor (runtime/ops/, attributes
// and gradient rule); here, PointwiseOp::kX (after kCount, unless programs may hold it), its formula
// in eval_pointwise and X in UCUDNN_FOR_EACH_UNARY_NODE_OP (which gives it its CPU and CUDA kernels);
// pointwise_parameters (runtime/ir/unary_ops.h) if it has attributes; activation_derivative
// (runtime/ops/activation_grad.h) if ActivationGrad differentiates it; its reference
// (tests/reference/elementwise_reference.cc) and an op-table case.
#pragma once

// NVRTC compiles this file too (Note [generated pointwise kernels]): its standard headers are the
// generated source's own typedefs there.
#if !defined(__CUDACC_RTC__)
#include <cmath>
#include <cstdint>
#endif

#if defined(__CUDACC__)
#define UCUDNN_HOST_DEVICE __host__ __device__
#else
#define UCUDNN_HOST_DEVICE
#endif

namespace ucudnn::ir {

inline constexpr const char* kPointwiseProgramAttr = "program";
inline constexpr const char* kPointwiseConstantsAttr = "constants";
inline constexpr const char* kPointwiseConcatAxisAttr = "concat_axis";
inline constexpr const char* kPointwiseConcatCountAttr = "concat_count";
inline constexpr const char* kPointwisePatternAttr = "pattern";
inline constexpr int kInstructionWidth = 4;

// Limits every FusedPointwise node keeps (its shape rule refuses more; the pass creates no more): the
// CUDA kernel takes the whole program, each leaf's broadcast strides and each concat piece as one
// by-value kernel parameter (under CUDA's 4 KiB), and keeps the registers in a local array.
inline constexpr int kMaxPointwiseRegisters = 32;  // leaves + instructions
inline constexpr int kMaxPointwiseLeaves = 16;
inline constexpr int kMaxPointwiseRank = 6;        // rank of the output and of every leaf
inline constexpr int kMaxConcatPieces = 64;        // concat_count

// Opcodes (stable numbers: they are stored in plans' graphs only through fingerprints, but keep
// them append-only anyway). The comment says what register L+i becomes; p0, p1 = constants[k], [k+1].
enum class PointwiseOp : int64_t {
  kAdd = 0,          // a + b
  kSub = 1,          // a - b
  kMul = 2,          // a * b
  kDiv = 3,          // a / b
  kRelu = 4,         // a < 0 ? 0 : a   (std::max(a, 0): a NaN passes, as cuDNN's)
  kLeakyRelu = 5,    // a >= 0 ? a : p0 * a
  kPRelu = 6,        // a >= 0 ? a : b * a   (b: the slope leaf)
  kSigmoid = 7,      // 1 / (1 + exp(-a)), written stable on both tails
  kTanh = 8,         // tanh(a)
  kHardSigmoid = 9,  // clamp(p0 * a + p1, 0, 1)
  kHardSwish = 10,   // a * max(0, min(1, a * (1/6) + 1/2))
  kClip = 11,        // min(max(a, p0), p1)
  kElu = 12,         // a > 0 ? a : p0 * expm1(a)
  kErf = 13,         // erf(a)
  kConstant = 14,    // p0
  kMax = 15,         // max(a, b)
  kMin = 16,         // min(a, b)
  kSqrt = 17,        // sqrt(a)
  kNeg = 18,         // -a
  kExp = 19,         // exp(a)
  kLog = 20,         // log(a)
  kAbs = 21,         // |a|
  kReciprocal = 22,  // 1 / a
  kSoftplus = 23,    // log(1 + exp(a))
  kPow = 24,         // a ^ b
  // A FusedPointwise program holds opcodes 0 .. kCount - 1 (its decoder refuses the others; the CPU
  // kernel has a loop per opcode below kCount). The ops after kCount are computed by lone nodes and
  // Conv epilogues only: letting a program hold one means moving kCount past it (and naming it in
  // optimizer/passes/fuse_pointwise.cc's op_label).
  kCount = 25,
  kIdentity = 26,         // a (a Conv without an activation: ConvActivation's default)
  kSiLU = 27,             // a * sigmoid(a)
  kSoftsign = 28,         // a / (1 + |a|)
  kCelu = 29,             // a > 0 ? a : p0 * expm1(a / p0)
  kSelu = 30,             // p1 * (a > 0 ? a : p0 * expm1(a))   (p0 alpha, p1 gamma)
  kThresholdedRelu = 31,  // a > p0 ? a : 0
  kShrink = 32,           // a < -p0 ? a + p1 : a > p0 ? a - p1 : 0   (p0 lambd, p1 bias)
  kFloor = 33,
  kCeil = 34,
  kRound = 35,            // halves to even
  kSign = 36,             // -1, 0 or 1; NaN stays NaN
  kSin = 37,
  kCos = 38,
  kTan = 39,
  kAsin = 40,
  kAcos = 41,
  kAtan = 42,
  kSinh = 43,
  kCosh = 44,
  kAsinh = 45,
  kAcosh = 46,
  kAtanh = 47,
  kEnd = 48,  // one past the last op
};

// The unary ops a lone node of the same ONNX name computes (X(name): OpKind::k##name and
// PointwiseOp::k##name): the one list runtime/ir/unary_ops.h maps OpKind by and both backends
// generate their unary kernels from. Clip is apart (its bounds are inputs), PRelu is binary.
// clang-format off
#define UCUDNN_FOR_EACH_UNARY_NODE_OP(X)                                                          \
  X(Relu) X(LeakyRelu) X(Sigmoid) X(Tanh) X(HardSigmoid) X(HardSwish) X(Elu) X(Erf) X(Softplus)  \
  X(Sqrt) X(Exp) X(Log) X(Abs) X(Neg) X(Reciprocal) X(Softsign) X(Celu) X(Selu)                 \
  X(ThresholdedRelu) X(Shrink) X(Floor) X(Ceil) X(Round) X(Sign) X(Sin) X(Cos) X(Tan) X(Asin)    \
  X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh) X(Acosh) X(Atanh)
// clang-format on

// Whether the opcode reads register b.
inline constexpr bool pointwise_op_is_binary(PointwiseOp op) {
  return op == PointwiseOp::kAdd || op == PointwiseOp::kSub || op == PointwiseOp::kMul || op == PointwiseOp::kDiv ||
         op == PointwiseOp::kPRelu || op == PointwiseOp::kMax || op == PointwiseOp::kMin || op == PointwiseOp::kPow;
}
// How many immediates the opcode reads from constants[k].
inline constexpr int pointwise_op_immediates(PointwiseOp op) {
  switch (op) {
    case PointwiseOp::kLeakyRelu: case PointwiseOp::kElu: case PointwiseOp::kConstant: case PointwiseOp::kCelu:
    case PointwiseOp::kThresholdedRelu: return 1;
    case PointwiseOp::kHardSigmoid: case PointwiseOp::kClip: case PointwiseOp::kSelu: case PointwiseOp::kShrink:
      return 2;
    default: return 0;
  }
}

// The logistic function, stable on both tails: exp of a non-positive number never overflows. One expf
// for either sign (a GPU warp with mixed signs computes it once), then 1 / (1 + e) or e / (1 + e).
UCUDNN_HOST_DEVICE inline float pointwise_sigmoid(float a) {
  const float e = expf(-fabsf(a));
  return a >= 0.f ? 1.f / (1.f + e) : e / (1.f + e);
}

// One instruction on scalars (float32, as ONNX's float ops): the one formula of every elementwise op
// (Note [one formula per op]).
UCUDNN_HOST_DEVICE inline float eval_pointwise(PointwiseOp op, float a, float b, float p0, float p1) {
  switch (op) {
    case PointwiseOp::kAdd: return a + b;
    case PointwiseOp::kSub: return a - b;
    case PointwiseOp::kMul: return a * b;
    case PointwiseOp::kDiv: return a / b;
    case PointwiseOp::kRelu: return a < 0.f ? 0.f : a;
    case PointwiseOp::kLeakyRelu: return a >= 0.f ? a : p0 * a;
    case PointwiseOp::kPRelu: return a >= 0.f ? a : b * a;
    case PointwiseOp::kSigmoid: return pointwise_sigmoid(a);
    case PointwiseOp::kTanh: return tanhf(a);
    case PointwiseOp::kHardSigmoid: {
      const float t = p0 * a + p1;
      return t < 0.f ? 0.f : 1.f < t ? 1.f : t;  // std::clamp: a NaN passes
    }
    case PointwiseOp::kHardSwish: return a * fmaxf(0.f, fminf(1.f, a * (1.f / 6.f) + 0.5f));
    case PointwiseOp::kClip: return fminf(fmaxf(a, p0), p1);
    case PointwiseOp::kElu: return a > 0.f ? a : p0 * expm1f(a);
    case PointwiseOp::kErf: return erff(a);
    case PointwiseOp::kConstant: return p0;
    case PointwiseOp::kMax: return fmaxf(a, b);
    case PointwiseOp::kMin: return fminf(a, b);
    case PointwiseOp::kSqrt: return sqrtf(a);
    case PointwiseOp::kNeg: return -a;
    case PointwiseOp::kExp: return expf(a);
    case PointwiseOp::kLog: return logf(a);
    case PointwiseOp::kAbs: return fabsf(a);
    case PointwiseOp::kReciprocal: return 1.f / a;
    case PointwiseOp::kSoftplus: return a > 0.f ? a + log1pf(expf(-a)) : log1pf(expf(a));  // no overflow
    case PointwiseOp::kPow: return powf(a, b);
    case PointwiseOp::kIdentity: return a;
    case PointwiseOp::kSiLU: return a * pointwise_sigmoid(a);
    case PointwiseOp::kSoftsign: return a / (1.f + fabsf(a));
    case PointwiseOp::kCelu: return a > 0.f ? a : p0 * expm1f(a / p0);
    case PointwiseOp::kSelu: return p1 * (a > 0.f ? a : p0 * expm1f(a));
    case PointwiseOp::kThresholdedRelu: return a > p0 ? a : 0.f;
    case PointwiseOp::kShrink: return a < -p0 ? a + p1 : a > p0 ? a - p1 : 0.f;
    case PointwiseOp::kFloor: return floorf(a);
    case PointwiseOp::kCeil: return ceilf(a);
    case PointwiseOp::kRound: return rintf(a);  // halves to even (the default rounding mode), as nearbyint
    case PointwiseOp::kSign: return a > 0.f ? 1.f : a < 0.f ? -1.f : a == 0.f ? 0.f : a;
    case PointwiseOp::kSin: return sinf(a);
    case PointwiseOp::kCos: return cosf(a);
    case PointwiseOp::kTan: return tanf(a);
    case PointwiseOp::kAsin: return asinf(a);
    case PointwiseOp::kAcos: return acosf(a);
    case PointwiseOp::kAtan: return atanf(a);
    case PointwiseOp::kSinh: return sinhf(a);
    case PointwiseOp::kCosh: return coshf(a);
    case PointwiseOp::kAsinh: return asinhf(a);
    case PointwiseOp::kAcosh: return acoshf(a);
    case PointwiseOp::kAtanh: return atanhf(a);
    case PointwiseOp::kCount: case PointwiseOp::kEnd: break;
  }
  return a;
}

// Note [lone-node forms]
// A lone node's kernel (runtime/cpu/activations.cc, runtime/cuda/kernels.cu) computes
// eval_unary_node: eval_pointwise, except for two ops whose lone kernels have always computed their
// own way, kept so that no output changes:
//  - HardSwish: a · clamp(a / 6 + 1/2, 0, 1), dividing by 6 where eval_pointwise (ONNX's formula, the
//    same operations as a · HardSigmoid(a; 1/6, 1/2): what FusedPointwise and the Conv epilogues
//    compute) multiplies by the rounded 1/6, with an FMA where the CPU has one. About a quarter of
//    the inputs in [-4, 4] round differently: by an ulp or two of the result, and by up to 8e5 ulp
//    next to -3, where the result is near 0 (the two are ~1e-8 apart there).
//  - Clip: std::min(std::max(a, p0), p1), where a NaN passes and a -0 above a +0 bound stays -0;
//    fmaxf/fminf give the bound. Only a NaN or a signed zero tells them apart.
// Deleting a case makes lone nodes compute as FusedPointwise does, and changes those lone outputs.
UCUDNN_HOST_DEVICE inline float eval_unary_node(PointwiseOp op, float a, float p0, float p1) {
  switch (op) {
    case PointwiseOp::kHardSwish: {
      const float t = a / 6.f + 0.5f;
      return a * (t < 0.f ? 0.f : 1.f < t ? 1.f : t);
    }
    case PointwiseOp::kClip: {
      const float t = a < p0 ? p0 : a;
      return p1 < t ? p1 : t;
    }
    default: return eval_pointwise(op, a, 0.f, p0, p1);
  }
}

}  // namespace ucudnn::ir
