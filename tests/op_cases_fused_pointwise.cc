// Op-table cases of FusedPointwise (Note [pointwise programs], runtime/ir/pointwise_program.h) and
// Erf: every opcode; leaves with the output's shape, scalar, per-channel [1, C, 1, 1], an SE gate
// [N, C, 1, 1], a channels-last bias [1, 1, 1, C], leaves broadcast both ways, and shapes CUDA reads
// four elements at a time; the concat leaf with 2 to 33 pieces on axis 1 and on the last axis, with
// leaves after it; outputs spanning many blocks and threads on the CPU; gates the CPU hoists out
// of its blocks. Also the programs the shape rule refuses.
#include "tests/op_cases.h"

#include "runtime/ir/pointwise_program.h"

namespace ucudnn_test {

namespace {

using ucudnn::OpKind;
using ucudnn::Shape;
using ucudnn::StatusCode;
using Op = ucudnn::ir::PointwiseOp;

constexpr OpKind kFused = OpKind::kFusedPointwise;

// One instruction {opcode, a, b, k}.
struct Ins {
  Op op;
  int64_t a = 0, b = 0, k = 0;
};

// The attributes of a program; concat_count > 0 joins the first inputs along concat_axis.
AttrList program(const std::vector<Ins>& code, const std::vector<float>& constants = {}, int64_t concat_count = 0,
                 int64_t concat_axis = -1) {
  std::vector<int64_t> words;
  for (const Ins& i : code) words.insert(words.end(), {static_cast<int64_t>(i.op), i.a, i.b, i.k});
  AttrList attrs = {{ucudnn::ir::kPointwiseProgramAttr, words},
                    {ucudnn::ir::kPointwisePatternAttr, std::string("test")}};
  if (!constants.empty()) attrs.push_back({ucudnn::ir::kPointwiseConstantsAttr, constants});
  if (concat_count > 0) {
    attrs.push_back({ucudnn::ir::kPointwiseConcatCountAttr, concat_count});
    attrs.push_back({ucudnn::ir::kPointwiseConcatAxisAttr, concat_axis});
  }
  return attrs;
}

// BN+ReLU on leaf 0 with per-channel scale (leaf 1) and shift (leaf 2): relu(x * s + t).
const std::vector<Ins> kScaleShiftRelu = {{Op::kMul, 0, 1}, {Op::kAdd, 3, 2}, {Op::kRelu, 4}};

// Pieces of `shape` whose `axis` dims are `sizes`.
std::vector<InputSpec> pieces(Shape shape, size_t axis, const std::vector<int64_t>& sizes) {
  std::vector<InputSpec> inputs;
  for (int64_t size : sizes) {
    shape[axis] = size;
    inputs.push_back(input(shape, -2, 2));
  }
  return inputs;
}

std::vector<InputSpec> with(std::vector<InputSpec> inputs, const std::vector<InputSpec>& more) {
  inputs.insert(inputs.end(), more.begin(), more.end());
  return inputs;
}

std::vector<OpCase> program_cases() {
  const Shape image = {2, 3, 5, 6};
  // Every unary opcode of x, summed: registers 1 .. 9 the activations, 10 .. 17 the sums.
  const std::vector<Ins> unary = {
      {Op::kRelu, 0},  {Op::kLeakyRelu, 0, 0, 0}, {Op::kSigmoid, 0}, {Op::kTanh, 0},  {Op::kHardSigmoid, 0, 0, 1},
      {Op::kHardSwish, 0}, {Op::kClip, 0, 0, 3},  {Op::kElu, 0, 0, 5}, {Op::kNeg, 0},  {Op::kAdd, 1, 2},
      {Op::kAdd, 10, 3}, {Op::kAdd, 11, 4}, {Op::kAdd, 12, 5}, {Op::kAdd, 13, 6}, {Op::kAdd, 14, 7},
      {Op::kAdd, 15, 8}, {Op::kAdd, 16, 9}};
  const std::vector<float> unary_constants = {0.1f, 0.2f, 0.5f, -0.5f, 0.75f, 0.8f};
  // Every binary opcode of a and b (b positive), and Sqrt: registers 2 .. 7, then the sums.
  const std::vector<Ins> binary = {{Op::kSub, 0, 1}, {Op::kDiv, 0, 1}, {Op::kMax, 0, 1}, {Op::kMin, 0, 1},
                                   {Op::kPRelu, 0, 1}, {Op::kSqrt, 1}, {Op::kAdd, 2, 3}, {Op::kAdd, 8, 4},
                                   {Op::kAdd, 9, 5}, {Op::kAdd, 10, 6}, {Op::kMul, 11, 7}};
  // GELU's exact form: x · 0.5 · (1 + erf(x / √2)), the literals from Constant.
  const std::vector<Ins> gelu = {{Op::kConstant, 0, 0, 0}, {Op::kMul, 0, 1}, {Op::kErf, 2}, {Op::kConstant, 0, 0, 1},
                                 {Op::kAdd, 3, 4}, {Op::kMul, 0, 5}, {Op::kConstant, 0, 0, 2}, {Op::kMul, 6, 7}};
  const std::vector<Ins> silu = {{Op::kSigmoid, 0}, {Op::kMul, 0, 1}};
  // The math opcodes of x > 0 (leaf 0) and y (leaf 1): exp(y), log x, |y|, 1/x, softplus(y), x^y, summed.
  const std::vector<Ins> math = {{Op::kExp, 1},      {Op::kLog, 0},     {Op::kAbs, 1},     {Op::kReciprocal, 0},
                                 {Op::kSoftplus, 1}, {Op::kPow, 0, 1},  {Op::kAdd, 2, 3},  {Op::kAdd, 8, 4},
                                 {Op::kAdd, 9, 5},   {Op::kAdd, 10, 6}, {Op::kAdd, 11, 7}};
  return {
      {"fused_pointwise_every_unary", kFused, 1, {input({3, 7, 9}, -4, 4)}, program(unary, unary_constants), 1,
       {{3, 7, 9}}},
      {"fused_pointwise_every_binary", kFused, 1, {input(image, -2, 2), input(image, 0.5, 2)}, program(binary), 1,
       {image}},
      {"fused_pointwise_math", kFused, 1, {input(image, 0.25, 4), input(image, -3, 3)}, program(math), 1, {image}},
      {"fused_pointwise_gelu", kFused, 1, {input(image, -4, 4)}, program(gelu, {0.70710678f, 1.0f, 0.5f}), 1, {image}},
      // The CPU's vectorised erf (a rational function on [-4, 4], ±1 beyond) at its edges, past them, at the
      // extremes, and NaN; 40 elements, so the vector loop runs and its remainder too.
      {"fused_pointwise_erf_edges", kFused, 1,
       {input_values({40}, {-1e30, -1e4, -10, -4.5, -4.0001, -4, -3.9999, -2, -1, -0.5, -1e-3, -1e-30, 0, 1e-30, 1e-3, 0.1,
                            0.5, 1, 1.5, 2, 3, 3.9999, 4, 4.0001, 4.5, 10, 1e4, 1e30, INFINITY, -INFINITY, NAN, 0.25,
                            -0.25, 0.75, -0.75, 2.5, -2.5, 3.5, -3.5, 0.05})},
       program({{Op::kErf, 0}}), 1, {{40}}},
      {"fused_pointwise_silu_one_leaf_twice", kFused, 1, {input({1000}, -6, 6)}, program(silu), 1, {{1000}}},
      {"fused_pointwise_bn_relu_per_channel", kFused, 1,
       {input({2, 4, 5, 6}), weight({1, 4, 1, 1}), weight({1, 4, 1, 1})},
       program(kScaleShiftRelu), 1, {{2, 4, 5, 6}}},
      {"fused_pointwise_scalar_leaf", kFused, 1, {input({2, 3, 4, 4}), input({1, 1, 1, 1}, 0.5, 2)},
       program({{Op::kMul, 0, 1}, {Op::kAdd, 2, 1}, {Op::kHardSwish, 3}}), 1, {{2, 3, 4, 4}}},
      {"fused_pointwise_se_gate", kFused, 1, {input({2, 8, 5, 5}), input({2, 8, 1, 1}, -3, 3)},
       program({{Op::kSigmoid, 1}, {Op::kMul, 0, 2}}), 1, {{2, 8, 5, 5}}},
      {"fused_pointwise_se_gate_first", kFused, 1, {input({2, 8, 1, 1}, -3, 3), input({2, 8, 5, 5})},
       program({{Op::kHardSigmoid, 0, 0, 0}, {Op::kMul, 2, 1}}, {0.2f, 0.5f}), 1, {{2, 8, 5, 5}}},
      {"fused_pointwise_channels_last_bias", kFused, 1, {input({2, 4, 4, 6}), weight({1, 1, 1, 6})},
       program({{Op::kAdd, 0, 1}, {Op::kClip, 2, 0, 0}}, {0.0f, 6.0f}), 1, {{2, 4, 4, 6}}},
      // Four elements a CUDA thread: a gate constant over four (NCHW, H·W % 4 == 0) and leaves read four
      // at a time (channels-last, C % 4 == 0).
      {"fused_pointwise_se_gate_by_four", kFused, 1, {input({3, 16, 20, 20}), input({3, 16, 1, 1}, -3, 3)},
       program({{Op::kSigmoid, 1}, {Op::kMul, 0, 2}}), 1, {{3, 16, 20, 20}}},
      {"fused_pointwise_channels_last_se_gate_by_four", kFused, 1, {input({2, 3, 5, 8}), input({2, 1, 1, 8}, -3, 3)},
       program({{Op::kSigmoid, 1}, {Op::kMul, 0, 2}}), 1, {{2, 3, 5, 8}}},
      {"fused_pointwise_channels_last_bias_by_four", kFused, 1,
       {input({2, 4, 4, 12}), weight({1, 1, 1, 12}), input({1, 1, 1, 1}, 0.5, 2)},
       program({{Op::kAdd, 0, 1}, {Op::kMul, 3, 2}, {Op::kHardSwish, 4}}), 1, {{2, 4, 4, 12}}},
      {"fused_pointwise_broadcast_both", kFused, 1, {input({2, 1, 4, 1}), input({1, 3, 1, 5})},
       program({{Op::kMul, 0, 1}, {Op::kTanh, 2}}), 1, {{2, 3, 4, 5}}},
      {"fused_pointwise_rank_6", kFused, 1, {input({2, 1, 3, 2, 1, 5}), input({1, 2, 3, 1, 4, 5})},
       program({{Op::kSub, 0, 1}, {Op::kElu, 2, 0, 0}}, {1.0f}), 1, {{2, 2, 3, 2, 4, 5}}},
      // 19152 elements: many blocks (not a multiple of their size) over several threads on the CPU.
      {"fused_pointwise_many_blocks", kFused, 1, {input({3, 16, 19, 21}), weight({1, 16, 1, 1}), weight({1, 16, 1, 1})},
       program(kScaleShiftRelu), 1, {{3, 16, 19, 21}}},
      {"fused_pointwise_many_blocks_se_gate", kFused, 1, {input({3, 16, 19, 21}), input({3, 16, 1, 1})},
       program({{Op::kSigmoid, 1}, {Op::kMul, 0, 2}}), 1, {{3, 16, 19, 21}}},
      // Note [hoisted broadcasts] (CPU), 32256 elements (past the threading threshold; a gate of 48
      // is hoisted up to 672 threads): sigmoid(s · c + t) runs once over the gate's [N, 1, 1, C] shape
      // (c a scalar leaf; s, t two leaves of that shape; registers 5 and 6 only hoisted instructions
      // read); times u [1, 1, 1, C] mixes shapes and runs per output element; the blocks read the
      // hoisted Sigmoid (register 7) twice.
      {"fused_pointwise_channels_last_hoisted_gate", kFused, 1,
       {input({2, 24, 28, 24}), input({2, 1, 1, 24}, -2, 2), input({2, 1, 1, 24}, -1, 1),
        input({1, 1, 1, 1}, 0.5, 2), weight({1, 1, 1, 24})},
       program({{Op::kMul, 1, 3}, {Op::kAdd, 5, 2}, {Op::kSigmoid, 6}, {Op::kMul, 7, 4}, {Op::kMul, 0, 8},
                {Op::kAdd, 9, 7}}),
       1, {{2, 24, 28, 24}}},
      // A hard-sigmoid gate as exported, relu6(g + 3) / 6 with Constant instructions: the Constants
      // become scalar leaves and the gate's ops are hoisted over them; its leaf 0 is read only by
      // hoisted instructions (and by the last Relu as its unused operand b: a pointer still).
      {"fused_pointwise_hoisted_gate_of_constants", kFused, 1, {input({2, 24, 1, 1}, -5, 5), input({2, 24, 20, 20})},
       program({{Op::kConstant, 0, 0, 0}, {Op::kAdd, 0, 2}, {Op::kClip, 3, 0, 1}, {Op::kConstant, 0, 0, 2},
                {Op::kDiv, 4, 5}, {Op::kNeg, 6}, {Op::kMul, 1, 7}, {Op::kRelu, 8}},
               {3.0f, 0.0f, 6.0f}),
       1, {{2, 24, 20, 20}}},
  };
}

// Piece sizes 38, then 32 of 1..7 (one 0): 154 channels.
std::vector<int64_t> dense_growth() {
  std::vector<int64_t> sizes = {38};
  for (int64_t i = 0; i < 32; ++i) sizes.push_back(i == 5 ? 0 : 1 + i % 7);
  return sizes;
}

std::vector<OpCase> concat_cases() {
  const std::vector<InputSpec> channel = {weight({1, 8, 1, 1}), weight({1, 8, 1, 1})};
  return {
      // DenseNet: concat → BN → ReLU, the concat read where its pieces lie.
      {"fused_pointwise_concat_2_axis_1", kFused, 1, with(pieces({2, 0, 5, 7}, 1, {3, 5}), channel),
       program(kScaleShiftRelu, {}, 2, 1), 1, {{2, 8, 5, 7}}},
      {"fused_pointwise_concat_5_axis_1", kFused, 1,
       with(pieces({2, 0, 7, 9}, 1, {1, 2, 3, 4, 6}), {weight({1, 16, 1, 1}), weight({1, 16, 1, 1})}),
       program(kScaleShiftRelu, {}, 5, 1), 1, {{2, 16, 7, 9}}},
      // 16 × 16 planes: a CPU block of 256 lies in one piece's channel.
      {"fused_pointwise_concat_2_axis_1_planes", kFused, 1, with(pieces({2, 0, 16, 16}, 1, {3, 5}), channel),
       program(kScaleShiftRelu, {}, 2, -3), 1, {{2, 8, 16, 16}}},
      {"fused_pointwise_concat_5_axis_1_many_blocks", kFused, 1,
       with(pieces({3, 0, 20, 20}, 1, {4, 1, 7, 2, 2}), {weight({1, 16, 1, 1}), weight({1, 16, 1, 1})}),
       program(kScaleShiftRelu, {}, 5, 1), 1, {{3, 16, 20, 20}}},
      {"fused_pointwise_concat_2_last_axis", kFused, 1,
       with(pieces({3, 4, 0}, 2, {5, 2}), {input({3, 4, 7}), weight({1, 1, 7})}),
       program({{Op::kAdd, 0, 1}, {Op::kMul, 3, 2}}, {}, 2, -1), 1, {{3, 4, 7}}},
      // Channels-last DenseNet: 33 pieces on the last axis, per-channel [1, 1, 1, C] leaves; the first
      // piece spans several 32-column tiles of the CUDA kernel, one piece is empty.
      {"fused_pointwise_concat_33_last_axis_per_channel", kFused, 1,
       with(pieces({2, 5, 7, 0}, 3, dense_growth()), {weight({1, 1, 1, 154}), weight({1, 1, 1, 154})}),
       program(kScaleShiftRelu, {}, 33, 3), 1, {{2, 5, 7, 154}}},
      // A scalar leaf beside a per-channel one, pieces whose columns are not a multiple of 32.
      {"fused_pointwise_concat_3_axis_1_scalar", kFused, 1,
       with(pieces({3, 0, 3, 11}, 1, {5, 1, 9}), {input({1, 1, 1, 1}, 0.5, 2), weight({1, 15, 1, 1})}),
       program({{Op::kMul, 0, 1}, {Op::kAdd, 3, 2}, {Op::kClip, 4, 0, 0}}, {0.0f, 6.0f}, 3, 1), 1, {{3, 15, 3, 11}}},
      {"fused_pointwise_concat_5_last_axis", kFused, 1,
       with(pieces({2, 3, 0}, 2, {1, 3, 2, 5, 4}), {input({2, 3, 1})}),
       program({{Op::kMax, 0, 1}, {Op::kSigmoid, 2}}, {}, 5, 2), 1, {{2, 3, 15}}},
  };
}

}  // namespace

std::vector<OpCase> fused_pointwise_cases() {
  std::vector<OpCase> cases = program_cases();
  for (OpCase& c : concat_cases()) cases.push_back(std::move(c));
  cases.push_back({"erf", OpKind::kErf, 13, {input_values({9}, {-5, -2, -1, -0.5, 0, 0.3, 1, 2.5, 6})}});
  cases.push_back({"erf_random", OpKind::kErf, 9, {input({2, 3, 5, 6}, -3, 3)}});
  // Gelu (opset 20), lowered at import into the ops above (onnx_import/lowering/gelu.h): both forms.
  cases.push_back({"gelu", OpKind::kGelu, 20, {input({2, 3, 5, 6}, -4, 4)}});
  cases.push_back({"gelu_tanh", OpKind::kGelu, 20, {input({2, 3, 5, 6}, -4, 4)},
                   {{"approximate", std::string("tanh")}}});
  return cases;
}

std::vector<ErrorCase> fused_pointwise_error_cases() {
  const StatusCode invalid = StatusCode::kInvalidModel;
  return {
      {{"fused_pointwise_register_out_of_range", kFused, 1, {input({2, 3}), input({2, 3})},
        program({{Op::kAdd, 0, 5}})},
       invalid, "reads register 5"},
      {{"fused_pointwise_register_not_yet_written", kFused, 1, {input({4})}, program({{Op::kRelu, 0}, {Op::kTanh, 2}})},
       invalid, "reads register 2"},
      {{"fused_pointwise_unknown_opcode", kFused, 1, {input({4})}, program({{Op::kCount, 0}})}, invalid,
       "unknown opcode " + std::to_string(static_cast<int>(Op::kCount))},
      {{"fused_pointwise_constant_missing", kFused, 1, {input({4})}, program({{Op::kClip, 0, 0, 1}}, {0.0f, 1.0f})},
       invalid, "constants[1]"},
      {{"fused_pointwise_leaves_not_broadcastable", kFused, 1, {input({2, 3}), input({2, 4})},
        program({{Op::kAdd, 0, 1}})},
       invalid, "does not broadcast"},
      {{"fused_pointwise_concat_pieces_disagree", kFused, 1, {input({2, 3, 4}), input({2, 3, 5})},
        program({{Op::kRelu, 0}}, {}, 2, 1)},
       invalid, "concat piece 1"},
      {{"fused_pointwise_too_many_pieces", kFused, 1, std::vector<InputSpec>(65, input({1, 1, 2})),
        program({{Op::kRelu, 0}}, {}, 65, 1)},
       StatusCode::kUnsupported, "limit of 64 pieces"},
      {{"fused_pointwise_too_many_registers", kFused, 1, {input({4})}, program(std::vector<Ins>(32, {Op::kNeg, 0}))},
       StatusCode::kUnsupported, "registers"},
  };
}

}  // namespace ucudnn_test
