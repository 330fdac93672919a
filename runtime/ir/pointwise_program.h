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
  kRelu = 4,         // max(a, 0)
  kLeakyRelu = 5,    // a >= 0 ? a : p0 * a
  kPRelu = 6,        // a >= 0 ? a : b * a   (b: the slope leaf)
  kSigmoid = 7,      // 1 / (1 + exp(-a))
  kTanh = 8,         // tanh(a)
  kHardSigmoid = 9,  // max(0, min(1, p0 * a + p1))
  kHardSwish = 10,   // a * max(0, min(1, a / 6 + 1/2))
  kClip = 11,        // min(max(a, p0), p1)
  kElu = 12,         // a >= 0 ? a : p0 * (exp(a) - 1)
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
  kCount = 25,
};

// Whether the opcode reads register b.
inline constexpr bool pointwise_op_is_binary(PointwiseOp op) {
  return op == PointwiseOp::kAdd || op == PointwiseOp::kSub || op == PointwiseOp::kMul || op == PointwiseOp::kDiv ||
         op == PointwiseOp::kPRelu || op == PointwiseOp::kMax || op == PointwiseOp::kMin || op == PointwiseOp::kPow;
}
// How many immediates the opcode reads from constants[k].
inline constexpr int pointwise_op_immediates(PointwiseOp op) {
  switch (op) {
    case PointwiseOp::kLeakyRelu: case PointwiseOp::kElu: case PointwiseOp::kConstant: return 1;
    case PointwiseOp::kHardSigmoid: case PointwiseOp::kClip: return 2;
    default: return 0;
  }
}

// One instruction on scalars (float32, as ONNX's float ops).
UCUDNN_HOST_DEVICE inline float eval_pointwise(PointwiseOp op, float a, float b, float p0, float p1) {
  switch (op) {
    case PointwiseOp::kAdd: return a + b;
    case PointwiseOp::kSub: return a - b;
    case PointwiseOp::kMul: return a * b;
    case PointwiseOp::kDiv: return a / b;
    case PointwiseOp::kRelu: return a > 0.f ? a : 0.f;
    case PointwiseOp::kLeakyRelu: return a >= 0.f ? a : p0 * a;
    case PointwiseOp::kPRelu: return a >= 0.f ? a : b * a;
    case PointwiseOp::kSigmoid: return 1.f / (1.f + expf(-a));
    case PointwiseOp::kTanh: return tanhf(a);
    case PointwiseOp::kHardSigmoid: return fmaxf(0.f, fminf(1.f, p0 * a + p1));
    case PointwiseOp::kHardSwish: return a * fmaxf(0.f, fminf(1.f, a * (1.f / 6.f) + 0.5f));
    case PointwiseOp::kClip: return fminf(fmaxf(a, p0), p1);
    case PointwiseOp::kElu: return a >= 0.f ? a : p0 * (expf(a) - 1.f);
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
    case PointwiseOp::kCount: break;
  }
  return a;
}

}  // namespace ucudnn::ir
