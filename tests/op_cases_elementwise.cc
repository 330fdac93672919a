// The op table's activations, broadcasting binary ops, shape and
// data-movement ops and reductions (see op_cases.h): from the former
// ops_elementwise_test and cuda_ops_test, each case once. Integer cases run
// on every backend too (the GPU has int32/int64 Add/Sub/Mul/Div kernels).
#include "tests/op_cases.h"

namespace ucudnn_test {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Tensor;
using IntList = std::vector<int64_t>;

namespace {

constexpr double kLargestExactInt64 = 9007199254740992.0;  // 2^53: the largest int64 a double table holds exactly
const std::string kRelu = "Relu";                           // the fused activation (runtime/ir/fusion.h)

std::vector<OpCase> activation_and_binary_cases() {
  const DType int64 = DType::kInt64, int32 = DType::kInt32;
  const ucudnn::Shape image = {2, 3, 5, 6};
  return {
      // --- activations ---
      {"relu", OpKind::kRelu, 13, {input({2, 3, 4})}},
      {"relu_image", OpKind::kRelu, 14, {input(image)}},
      {"leaky_relu_default", OpKind::kLeakyRelu, 16, {input({5, 7})}},
      {"leaky_relu_alpha", OpKind::kLeakyRelu, 16, {input({5, 7})}, {{"alpha", 0.3f}}},
      {"prelu_scalar", OpKind::kPRelu, 16, {input({2, 3, 4, 4}), weight({1})}},
      {"prelu_channel", OpKind::kPRelu, 16, {input({2, 3, 4, 4}), weight({3, 1, 1})}},
      {"prelu_last_dim", OpKind::kPRelu, 16, {input({2, 3, 5}), weight({5})}},
      {"prelu_runtime_slope", OpKind::kPRelu, 16, {input({2, 3, 5}), input({5})}},
      {"sigmoid", OpKind::kSigmoid, 13, {input_values({6}, {-100, -3, -0.5, 0, 2, 100})}},
      {"sigmoid_random", OpKind::kSigmoid, 13, {input(image, -8, 8)}},
      {"tanh", OpKind::kTanh, 13, {input({4, 9}, -3, 3)}},
      {"hard_sigmoid", OpKind::kHardSigmoid, 6, {input({40}, -4, 4)}, {{"alpha", 0.25f}, {"beta", 0.4f}}},
      {"hard_sigmoid_default", OpKind::kHardSigmoid, 6, {input(image, -4, 4)}},
      {"hard_swish", OpKind::kHardSwish, 14, {input_values({8}, {-4, -3, -1.5, 0, 1, 2.9, 3, 5})}},
      {"hard_swish_random", OpKind::kHardSwish, 14, {input(image, -5, 5)}},
      {"clip_both", OpKind::kClip, 13, {input({30}), weight_values({}, {-0.5}), weight_values({}, {1.25})}},
      {"clip_min_only", OpKind::kClip, 13, {input({30}), weight_values({}, {0}), absent()}},
      {"clip_max_only", OpKind::kClip, 13, {input({30}), absent(), weight_values({1}, {0.5})}},
      {"clip_min_above_max", OpKind::kClip, 13, {input({10}), weight_values({}, {2}), weight_values({}, {1})}},
      {"clip_runtime_bounds", OpKind::kClip, 13, {input({30}), input_values({}, {-0.5}), input_values({}, {0.25})}},
      {"clip_runtime_min_only", OpKind::kClip, 13, {input({30}), input_values({}, {-0.2}), absent()}},
      {"clip_constant_min_runtime_max", OpKind::kClip, 13,
       {input({2, 15}), weight_values({}, {-0.5}), input_values({1}, {0.3})}},
      {"clip_runtime_min_above_max", OpKind::kClip, 13,
       {input({10}), input_values({}, {0.5}), input_values({}, {0.1})}},
      {"elu", OpKind::kElu, 6, {input({3, 8}, -3, 3)}, {{"alpha", 0.7f}}},
      // Softplus on both tails (no overflow at 100), and the math functions.
      {"softplus", OpKind::kSoftplus, 1, {input_values({7}, {-100, -20, -1, 0, 0.5, 20, 100})}},
      {"softplus_random", OpKind::kSoftplus, 1, {input(image, -6, 6)}},
      {"sqrt", OpKind::kSqrt, 13, {input(image, 0, 9)}},
      {"exp", OpKind::kExp, 13, {input(image, -8, 8)}},
      {"log", OpKind::kLog, 13, {input(image, 0.01, 50)}},
      {"abs", OpKind::kAbs, 13, {input(image, -4, 4)}},
      {"neg", OpKind::kNeg, 13, {input(image)}},
      {"reciprocal", OpKind::kReciprocal, 13, {input_values({6}, {-4, -0.5, 0.25, 1, 3, 1000})}},
      // --- LayerNormalization (lowered at import: Note [lowered ops]) ---
      {"layer_norm_last_axis", OpKind::kLayerNormalization, 17, {input(image, -3, 3), weight({6}), weight({6})}},
      {"layer_norm_axis_1_no_bias", OpKind::kLayerNormalization, 17, {input({2, 3, 4}), weight({3, 4})},
       {{"axis", int64_t{1}}, {"epsilon", 1e-3f}}},
      {"layer_norm_statistics", OpKind::kLayerNormalization, 17, {input({2, 3, 4, 5}), weight({4, 5}), weight({5})},
       {{"axis", int64_t{-2}}}, 3},
      {"layer_norm_scale_broadcast", OpKind::kLayerNormalization, 17, {input({4, 8}, 5, 7), weight({1}), weight({8})}},
      // --- InstanceNormalization (lowered at import: Note [lowered ops]) ---
      {"instance_norm_image", OpKind::kInstanceNormalization, 6,
       {input({2, 3, 5, 6}, -3, 3), weight({3}), weight({3})}},
      {"instance_norm_1d_epsilon", OpKind::kInstanceNormalization, 6, {input({2, 4, 7}), weight({4}), weight({4})},
       {{"epsilon", 1e-3f}}},
      // --- GroupNormalization (lowered at import): Scale and B per group at opset 18, per channel from 21 ---
      {"group_norm_18_per_group", OpKind::kGroupNormalization, 18,
       {input({2, 6, 3, 4}, -3, 3), weight({3}), weight({3})}, {{"num_groups", int64_t{3}}}},
      {"group_norm_21_per_channel", OpKind::kGroupNormalization, 21,
       {input({2, 6, 3, 4}, 5, 7), weight({6}), weight({6})}, {{"num_groups", int64_t{2}}, {"epsilon", 1e-3f}}},
      {"group_norm_21_one_group_1d", OpKind::kGroupNormalization, 21, {input({3, 4, 5}), weight({4}), weight({4})},
       {{"num_groups", int64_t{1}}}},
      {"instance_norm_offset_3d", OpKind::kInstanceNormalization, 6, {input({1, 2, 3, 4, 4}, 5, 7), weight({2}),
                                                                     weight({2})}},
      // --- broadcasting binary ---
      {"add_same", OpKind::kAdd, 14, {input({2, 3, 4}), input({2, 3, 4})}},
      {"add_scalar", OpKind::kAdd, 14, {input({2, 3, 4}), input({})}},
      {"sub_scalar_left", OpKind::kSub, 14, {input({1}), input({2, 3, 4})}},
      {"add_channel", OpKind::kAdd, 14, {input({2, 3, 4, 5}), input({3, 1, 1})}},
      {"add_channel_weight", OpKind::kAdd, 14, {input(image), weight({3, 1, 1})}},
      // Relu fused into Add by optimizer/passes (residual joins): max(a + b, 0).
      {"add_fused_relu", OpKind::kAdd, 14, {input(image), input(image)}, {{"activation", kRelu}}},
      {"add_fused_relu_broadcast", OpKind::kAdd, 14, {input(image), weight({3, 1, 1})}, {{"activation", kRelu}}},
      {"mul_both_broadcast", OpKind::kMul, 14, {input({2, 1, 4}), input({3, 1})}},
      // Squeeze-Excite scales (merged to [N·C, H·W] rows on the CPU), either side, and past the threads' threshold.
      {"mul_squeeze_excite", OpKind::kMul, 14, {input({2, 6, 5, 7}), input({2, 6, 1, 1})}},
      {"mul_squeeze_excite_left", OpKind::kMul, 14, {input({2, 6, 1, 1}), input({2, 6, 5, 7})}},
      {"mul_squeeze_excite_threaded", OpKind::kMul, 14, {input({2, 16, 32, 33}), input({2, 16, 1, 1})}},
      {"mul_row_weight", OpKind::kMul, 14, {input(image), weight({6})}},
      {"sub_middle", OpKind::kSub, 14, {input({4, 1, 6}), input({4, 5, 1})}},
      {"sub_rank_broadcast", OpKind::kSub, 14, {input({1, 6}), input({2, 3, 5, 1})}},
      {"div_row", OpKind::kDiv, 14, {input({3, 7}), input_values({7}, {1, -2, 3, 0.5, -0.25, 4, 8})}},
      {"div_same", OpKind::kDiv, 14, {input(image), input(image, 0.5, 2.0)}},
      // Pow: a variance's square (exponent the constant 2), a runtime exponent, broadcasting both ways.
      {"pow_square", OpKind::kPow, 15, {input(image), weight_values({}, {2})}},
      {"pow_same", OpKind::kPow, 15, {input(image, 0.1, 3), input(image, -2, 2)}},
      {"pow_row_exponent", OpKind::kPow, 15, {input({3, 5}, 0.5, 2), input_values({5}, {0, 0.5, 1, 2.5, -1})}},
      {"pow_scalar_base", OpKind::kPow, 15, {input_values({}, {2}), input({2, 3, 4}, -3, 3)}},
      {"add_int64", OpKind::kAdd, 14, {typed_input(int64, {2, 3}), typed_input(int64, {3})}},
      {"add_int64_large", OpKind::kAdd, 14,
       {typed_input(int64, {2}, {kLargestExactInt64 / 2, -5}), typed_input(int64, {2}, {kLargestExactInt64 / 2, 7})}},
      {"mul_int64_scalar", OpKind::kMul, 14, {typed_input(int64, {4}), typed_input(int64, {}, {-3})}},
      {"div_int64_truncates", OpKind::kDiv, 14,
       {typed_input(int64, {4}, {7, -7, 7, -7}), typed_input(int64, {4}, {2, 2, -2, -2})}},
      {"sub_int32", OpKind::kSub, 14, {typed_input(int32, {3, 1}), typed_input(int32, {1, 4})}},
      {"add_int64_channel", OpKind::kAdd, 14, {typed_input(int64, {2, 3, 4}), typed_input(int64, {3, 1})}},
      // int32 wraps as on the CPU: INT_MIN / -1 = INT_MIN, 65536 · 65536 = 0; Div truncates, broadcast rows.
      {"div_int32_broadcast_wraps", OpKind::kDiv, 14,
       {typed_input(int32, {2, 3}, {-2147483648.0, 7, -7, 9, -9, 100}), typed_input(int32, {3}, {-1, 2, -3})}},
      {"mul_int32_wraps", OpKind::kMul, 14,
       {typed_input(int32, {3}, {65536, -65536, 3}), typed_input(int32, {1}, {65536})}},
      {"div_int64_constant_divisor", OpKind::kDiv, 14,
       {typed_input(int64, {2, 2}, {-9, 9, 10, -10}), typed_constant(int64, {2}, {4, -3})}},
  };
}

std::vector<OpCase> shape_and_cast_cases() {
  const DType int64 = DType::kInt64, int32 = DType::kInt32, uint8 = DType::kUInt8, int8 = DType::kInt8,
              boolean = DType::kBool, float64 = DType::kFloat64;
  const ucudnn::Shape image = {2, 3, 5, 6};
  return {
      {"flatten_default", OpKind::kFlatten, 13, {input({2, 3, 4})}},
      {"flatten_image", OpKind::kFlatten, 13, {input(image)}},
      {"flatten_axis_0", OpKind::kFlatten, 13, {input({2, 3, 4})}, {{"axis", int64_t{0}}}},
      {"flatten_negative_axis", OpKind::kFlatten, 13, {typed_input(int64, {2, 3, 4})}, {{"axis", int64_t{-1}}}},
      {"reshape_minus_one", OpKind::kReshape, 14, {input({2, 3, 4}), ints({-1, 4})}},
      {"reshape_zero_copies", OpKind::kReshape, 14, {input({2, 3, 4}), ints({0, -1})}},
      {"reshape_allowzero", OpKind::kReshape, 14, {input({0, 3}), ints({3, 0})}, {{"allowzero", int64_t{1}}}},
      {"reshape_int64", OpKind::kReshape, 14, {typed_input(int64, {6}), ints({3, 2})}},
      {"squeeze_all", OpKind::kSqueeze, 13, {input({1, 3, 1, 2})}},
      {"squeeze_axes", OpKind::kSqueeze, 13, {input({1, 3, 1, 2}), ints({-2})}},
      {"unsqueeze", OpKind::kUnsqueeze, 13, {input({3, 2}), ints({0, -1})}},
      {"unsqueeze_middle", OpKind::kUnsqueeze, 13, {typed_input(int64, {3}), ints({1, 0})}},
      {"shape", OpKind::kShape, 15, {input({2, 3, 4, 5})}},
      {"shape_start_end", OpKind::kShape, 15, {input({2, 3, 4, 5})}, {{"start", int64_t{1}}, {"end", int64_t{-1}}}},
      {"shape_clamped", OpKind::kShape, 15, {input({2, 3})}, {{"start", int64_t{-10}}, {"end", int64_t{10}}}},
      {"identity", OpKind::kIdentity, 16, {input(image)}},
      {"identity_bool", OpKind::kIdentity, 16, {typed_input(boolean, {7})}},
      {"dropout", OpKind::kDropout, 13, {input({3, 4})}},
      {"dropout_mask", OpKind::kDropout, 13,
       {input({3, 4}), input_values({}, {0.5}), typed_constant(boolean, {}, {0})}, {}, 2},
      {"constant", OpKind::kConstant, 13, {},
       {{"value", Tensor::from_int64s({3}, std::vector<int64_t>{4, -1, 2})}}},
      {"cast_float_to_int64", OpKind::kCast, 13, {input_values({8}, {-2.7, -0.5, 0.5, 2.7, 3.999, -3.999, 0, 100.2})},
       {{"to", int64_t{7}}}},
      {"cast_float_to_int64_random", OpKind::kCast, 13, {input(image, -50, 50)}, {{"to", int64_t{7}}}},
      {"cast_float_to_int32", OpKind::kCast, 13, {input_values({4}, {-1.9, 1.9, -0.1, 7.5})}, {{"to", int64_t{6}}}},
      {"cast_float_to_uint8", OpKind::kCast, 13, {input_values({4}, {0.9, 1.5, 254.7, 3})}, {{"to", int64_t{2}}}},
      {"cast_float_to_int8", OpKind::kCast, 13, {input_values({4}, {-127.9, 126.9, -0.9, 3})}, {{"to", int64_t{3}}}},
      {"cast_float_to_bool", OpKind::kCast, 13, {input_values({4}, {0, -0.0, 0.1, -3})}, {{"to", int64_t{9}}}},
      {"cast_int64_to_float", OpKind::kCast, 13, {typed_input(int64, {5})}, {{"to", int64_t{1}}}},
      {"cast_int32_to_int8_wraps", OpKind::kCast, 13, {typed_input(int32, {3}, {300, -129, 5})}, {{"to", int64_t{3}}}},
      {"cast_bool_to_float64", OpKind::kCast, 13, {typed_input(boolean, {6})}, {{"to", int64_t{11}}}},
      {"cast_uint8_to_int64", OpKind::kCast, 13, {typed_input(uint8, {6})}, {{"to", int64_t{7}}}},
      {"cast_int8_to_float", OpKind::kCast, 13, {typed_input(int8, {6})}, {{"to", int64_t{1}}}},
      {"cast_float64_to_float", OpKind::kCast, 13, {typed_input(float64, {6})}, {{"to", int64_t{1}}}},
  };
}

std::vector<OpCase> data_movement_cases() {
  const DType int64 = DType::kInt64, int32 = DType::kInt32, boolean = DType::kBool;
  const ucudnn::Shape image = {2, 3, 5, 6};
  return {
      {"concat_axis_1", OpKind::kConcat, 13, {input({2, 3, 4}), input({2, 1, 4}), input({2, 2, 4})},
       {{"axis", int64_t{1}}}},
      {"concat_negative_axis", OpKind::kConcat, 13, {input({2, 3}), input({2, 5})}, {{"axis", int64_t{-1}}}},
      {"concat_int64_shapes", OpKind::kConcat, 13,
       {typed_input(int64, {1}), typed_input(int64, {2}), typed_input(int64, {0})}, {{"axis", int64_t{0}}}},
      {"split_equal", OpKind::kSplit, 13, {input({2, 6})}, {{"axis", int64_t{1}}}, 3},
      {"split_sizes", OpKind::kSplit, 13, {input({5, 2}), ints({1, 4})}, {}, 2},
      {"split_sizes_axis_1", OpKind::kSplit, 13, {input({2, 6, 4}), ints({2, 4})}, {{"axis", int64_t{1}}}, 2},
      {"split_negative_axis", OpKind::kSplit, 13, {typed_input(int64, {2, 3, 4}), ints({1, 0, 3})},
       {{"axis", int64_t{-1}}}, 3},
      {"split_num_outputs_uneven", OpKind::kSplit, 18, {input({7, 2})}, {{"num_outputs", int64_t{3}}}, 3},
      {"slice_basic", OpKind::kSlice, 13, {input({4, 5}), ints({1, 0}), ints({3, 5})}},
      {"slice_axes_steps", OpKind::kSlice, 13, {input({4, 5, 6}), ints({0, 1}), ints({6, 5}), ints({-1, 1}),
                                                 ints({2, 3})}},
      {"slice_steps_both_signs", OpKind::kSlice, 13,
       {input({4, 6, 5}), ints({1, -1}), ints({4, 0}), ints({0, 1}), ints({2, -2})}},
      {"slice_negative_step", OpKind::kSlice, 13, {input({4, 6}), ints({-1}), ints({-7}), ints({1}), ints({-1})}},
      {"slice_negative_step_2", OpKind::kSlice, 13,
       {input({3, 7}), ints({5, 2}), ints({0, 0}), ints({1, 0}), ints({-2, -1})}},
      {"slice_clamp_large", OpKind::kSlice, 13,
       {input({3, 4}), ints({-100, 1}), ints({100, kLargestExactInt64}), absent(), absent()}},
      {"slice_empty", OpKind::kSlice, 13, {input({3, 4}), ints({3}), ints({1}), ints({1})}},
      {"slice_int64", OpKind::kSlice, 13, {typed_input(int64, {4}), ints({-2}), ints({kLargestExactInt64})}},
      {"transpose_default", OpKind::kTranspose, 13, {input({2, 3, 4})}},
      {"transpose_perm", OpKind::kTranspose, 13, {input({2, 3, 4, 5})}, {{"perm", IntList{0, 2, 3, 1}}}},
      // NCHW ↔ NHWC take the tiled batched transpose (GPU and CPU): sizes not multiples of its 32×32 tile.
      {"transpose_to_nhwc_tiles", OpKind::kTranspose, 13, {input({3, 37, 9, 7})}, {{"perm", IntList{0, 2, 3, 1}}}},
      {"transpose_to_nchw_tiles", OpKind::kTranspose, 13, {input({3, 9, 7, 37})}, {{"perm", IntList{0, 3, 1, 2}}}},
      {"transpose_to_nhwc_narrow", OpKind::kTranspose, 13, {input({2, 3, 11, 13})},  // C = 3: an RGB input
       {{"perm", IntList{0, 2, 3, 1}}}},
      {"transpose_generic", OpKind::kTranspose, 13, {input(image)}, {{"perm", IntList{1, 0, 3, 2}}}},
      {"transpose_bool", OpKind::kTranspose, 13, {typed_input(boolean, {3, 5})}, {{"perm", IntList{1, 0}}}},
      // Lowered into Reshape, Transpose, Reshape at import (runtime/ops/depth_to_space.h).
      {"depth_to_space_dcr", OpKind::kDepthToSpace, 13, {input({2, 8, 3, 4})}, {{"blocksize", int64_t{2}}}, 1,
       {{2, 2, 6, 8}}},
      {"depth_to_space_crd", OpKind::kDepthToSpace, 13, {input({1, 18, 2, 3})},
       {{"blocksize", int64_t{3}}, {"mode", std::string("CRD")}}, 1, {{1, 2, 6, 9}}},
      {"depth_to_space_int64", OpKind::kDepthToSpace, 13, {typed_input(int64, {1, 4, 2, 2})},
       {{"blocksize", int64_t{2}}}},
      {"space_to_depth", OpKind::kSpaceToDepth, 13, {input({2, 3, 4, 6})}, {{"blocksize", int64_t{2}}}, 1,
       {{2, 12, 2, 3}}},
      // Mod: integers with the divisor's sign (Python) or the dividend's (fmod, C); floats as C's fmod.
      {"mod_int64_python_signs", OpKind::kMod, 13,
       {typed_input(int64, {6}, {7, -7, 7, -7, 0, 9}), typed_input(int64, {6}, {3, 3, -3, -3, 5, -1})}},
      {"mod_int64_fmod_broadcast", OpKind::kMod, 13,
       {typed_input(int64, {2, 3}, {7, -7, 8, -8, 5, -5}), typed_input(int64, {3}, {3, -3, 4})},
       {{"fmod", int64_t{1}}}},
      {"mod_int32", OpKind::kMod, 13,
       {typed_input(DType::kInt32, {4}, {5, -5, 6, -6}), typed_input(DType::kInt32, {4}, {-4, 4, 4, -4})}},
      {"mod_float_fmod", OpKind::kMod, 13, {input_values({4}, {5.5, -5.5, 2.25, -1}), input_values({4}, {2, 2, -1, 3})},
       {{"fmod", int64_t{1}}}},
      // Comparisons, logical ops and Where (runtime/ops/logic.cc): bool results, numpy broadcasting.
      {"equal_int64_broadcast", OpKind::kEqual, 13,
       {typed_input(int64, {2, 3}, {1, 2, 3, 3, 2, 1}), typed_input(int64, {3}, {1, 2, 1})}},
      {"equal_float", OpKind::kEqual, 13, {input_values({4}, {1, 2, 3, 4}), input_values({4}, {1, 0, 3, 5})}},
      {"equal_bool", OpKind::kEqual, 13,
       {typed_input(boolean, {4}, {0, 1, 1, 0}), typed_input(boolean, {4}, {0, 0, 1, 1})}},
      {"less_float_broadcast", OpKind::kLess, 13, {input({2, 3, 4}), input({4})}},
      {"greater_int32", OpKind::kGreater, 13,
       {typed_input(DType::kInt32, {3, 2}, {1, 5, -2, 0, 7, 7}), typed_input(DType::kInt32, {1, 2}, {1, 7})}},
      {"less_or_equal", OpKind::kLessOrEqual, 16, {input_values({2, 2}, {1, 2, 3, 4}), input_values({2}, {2, 2})}},
      {"greater_or_equal_int64", OpKind::kGreaterOrEqual, 16,
       {typed_input(int64, {2, 2}, {1, 2, 3, 4}), typed_input(int64, {}, {3})}},
      {"not", OpKind::kNot, 13, {typed_input(boolean, {5}, {0, 1, 1, 0, 1})}},
      {"and_broadcast", OpKind::kAnd, 13,
       {typed_input(boolean, {2, 2}, {0, 1, 1, 1}), typed_input(boolean, {2}, {1, 0})}},
      {"or", OpKind::kOr, 13, {typed_input(boolean, {4}, {0, 1, 0, 1}), typed_input(boolean, {4}, {0, 0, 1, 1})}},
      {"xor", OpKind::kXor, 13, {typed_input(boolean, {4}, {0, 1, 0, 1}), typed_input(boolean, {4}, {0, 0, 1, 1})}},
      {"where_float_broadcast", OpKind::kWhere, 16,
       {typed_input(boolean, {2, 1, 4}, {1, 0, 0, 1, 0, 1, 1, 0}), input({3, 1}), input({2, 3, 4})}},
      // A ViT's class-token shape: Where(Equal(shape, -1), ones, shape).
      {"where_int64_shape", OpKind::kWhere, 16,
       {typed_input(boolean, {3}, {0, 1, 0}), typed_input(int64, {3}, {1, 1, 1}),
        typed_input(int64, {3}, {1, -1, 768})}},
      // Lowered into Reshape, Expand, Reshape (runtime/ops/tile.h).
      {"tile_2d", OpKind::kTile, 13, {input({2, 3}), ints({2, 3})}, {}, 1, {{4, 9}}},
      {"tile_some_axes_int64", OpKind::kTile, 13, {typed_input(int64, {2, 1, 3}), ints({1, 4, 2})}, {}, 1,
       {{2, 4, 6}}},
      {"tile_zero_repeats", OpKind::kTile, 13, {input({2, 3}), ints({0, 1})}, {}, 1, {{0, 3}}},
      // Lowered into Adds and a Mul (runtime/ops/sum_mean.h).
      {"sum_three_broadcast", OpKind::kSum, 13, {input({2, 3, 4}), input({3, 1}), input({4})}, {}, 1, {{2, 3, 4}}},
      {"sum_one", OpKind::kSum, 13, {input({2, 3})}},
      {"mean_two", OpKind::kMean, 13, {input({2, 3}), input({2, 3})}},
      {"mean_four_broadcast", OpKind::kMean, 13, {input({1, 3}), input({2, 1}), input({2, 3}), input({3})}},
      // Lowered into a Resize with asymmetric coordinates (runtime/ops/upsample.h).
      {"upsample_nearest_opset9", OpKind::kUpsample, 9, {input({1, 2, 3, 4}), weight_values({4}, {1, 1, 2, 3})}, {},
       1, {{1, 2, 6, 12}}},
      {"upsample_nearest_opset7", OpKind::kUpsample, 7, {input({2, 3, 4, 2})},
       {{"scales", std::vector<float>{1, 1, 2, 2.5f}}}, 1, {{2, 3, 8, 5}}},
      {"upsample_linear_opset9", OpKind::kUpsample, 9, {input({1, 2, 3, 4}), weight_values({4}, {1, 1, 2, 2})},
       {{"mode", std::string("linear")}}, 1, {{1, 2, 6, 8}}},
      // Resize (runtime/ops/resize.h): X, roi, scales or sizes.
      {"resize_nearest_scales_2x", OpKind::kResize, 13,
       {input({2, 3, 4, 5}), absent(), weight_values({4}, {1, 1, 2, 2})}, {}, 1, {{2, 3, 8, 10}}},
      {"resize_linear_half_pixel_2x", OpKind::kResize, 13,
       {input({2, 3, 4, 5}), absent(), weight_values({4}, {1, 1, 2, 2})}, {{"mode", std::string("linear")}}, 1,
       {{2, 3, 8, 10}}},
      {"resize_linear_align_corners_sizes", OpKind::kResize, 13,
       {input({2, 3, 4, 5}), absent(), absent(), ints({2, 3, 7, 9})},
       {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}}, 1,
       {{2, 3, 7, 9}}},
      {"resize_linear_pytorch_half_pixel_shrink", OpKind::kResize, 13,
       {input({1, 2, 8, 8}), absent(), absent(), ints({1, 2, 3, 1})},
       {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("pytorch_half_pixel")}}, 1,
       {{1, 2, 3, 1}}},
      {"resize_nearest_asymmetric_floor", OpKind::kResize, 13,
       {input({1, 2, 4, 5}), absent(), weight_values({4}, {1, 1, 3, 1.5})},
       {{"coordinate_transformation_mode", std::string("asymmetric")}, {"nearest_mode", std::string("floor")}}, 1,
       {{1, 2, 12, 7}}},
      // Halving with half_pixel puts every source coordinate on a tie (2i + 0.5).
      {"resize_nearest_ties_prefer_ceil", OpKind::kResize, 13,
       {input({1, 2, 6, 8}), absent(), weight_values({4}, {1, 1, 0.5, 0.5})},
       {{"nearest_mode", std::string("round_prefer_ceil")}}, 1, {{1, 2, 3, 4}}},
      {"resize_nearest_ties_prefer_floor", OpKind::kResize, 13,
       {input({1, 2, 6, 8}), absent(), weight_values({4}, {1, 1, 0.5, 0.5})}, {}, 1, {{1, 2, 3, 4}}},
      {"resize_nearest_ceil_align_corners", OpKind::kResize, 13,
       {input({1, 3, 3, 4}), absent(), absent(), ints({1, 3, 8, 7})},
       {{"coordinate_transformation_mode", std::string("align_corners")}, {"nearest_mode", std::string("ceil")}},
       1, {{1, 3, 8, 7}}},
      // in · scale = 7.5 along H (output 7): half_pixel_symmetric's offset is not 0 there.
      {"resize_linear_half_pixel_symmetric", OpKind::kResize, 19,
       {input({2, 2, 5, 4}), absent(), weight_values({4}, {1, 1, 1.5, 2})},
       {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("half_pixel_symmetric")}},
       1, {{2, 2, 7, 8}}},
      {"resize_linear_1d", OpKind::kResize, 13, {input({2, 3, 5}), absent(), weight_values({3}, {1, 1, 2})},
       {{"mode", std::string("linear")}}, 1, {{2, 3, 10}}},
      {"pad_zero", OpKind::kPad, 13, {input({2, 3}), ints({1, 0, 2, 3})}},
      // ReflectionPad2d / ReplicationPad2d (style transfer, pix2pix).
      {"pad_reflect_spatial", OpKind::kPad, 13, {input({2, 3, 5, 4}), ints({0, 0, 2, 3, 0, 0, 1, 2})},
       {{"mode", std::string("reflect")}}},
      {"pad_reflect_up_to_the_size", OpKind::kPad, 13, {input({2, 4}), ints({1, 3, 0, 2})},
       {{"mode", std::string("reflect")}}},
      {"pad_edge", OpKind::kPad, 13, {input({2, 2, 3, 3}), ints({0, 0, 1, 2, 0, 0, 3, 0})},
       {{"mode", std::string("edge")}}},
      {"pad_reflect_int64", OpKind::kPad, 13, {typed_input(int64, {2, 4}), ints({1, 2, 0, 3})},
       {{"mode", std::string("reflect")}}},
      {"pad_edge_axes", OpKind::kPad, 18, {input({2, 3, 4}), ints({2, 1, 0, 3}), absent(), ints({1, 2})},
       {{"mode", std::string("edge")}}},
      {"pad_value", OpKind::kPad, 13, {input({2, 3, 4}), ints({0, 1, 1, 0, 2, 0}), weight_values({}, {1.5})}},
      {"pad_value_and_crop", OpKind::kPad, 13, {input({2, 3, 4}), ints({0, 1, -1, 0, 2, 1}), weight_values({}, {0.5})}},
      {"pad_runtime_value", OpKind::kPad, 13, {input({2, 3}), ints({1, 1, 0, 1}), input_values({}, {-2})}},
      {"pad_negative", OpKind::kPad, 13, {input({4, 5}), ints({-1, 2, 0, -3})}},
      {"pad_all_zero", OpKind::kPad, 13, {input({2, 3}), ints({0, 0, 0, 0})}},
      {"pad_axes", OpKind::kPad, 18, {input({2, 3, 4}), ints({1, 2, 3, 0}), absent(), ints({-1, 0})}},
      {"pad_int64", OpKind::kPad, 13, {typed_input(int64, {3}), ints({1, 1}), typed_constant(int64, {}, {-9})}},
      {"pad_int64_runtime_value", OpKind::kPad, 13,
       {typed_input(int64, {2, 3}), ints({0, 1, 1, 0}), typed_input(int64, {}, {-7})}},
      {"pad_uint8_default_value", OpKind::kPad, 13, {typed_input(DType::kUInt8, {4}), ints({2, 1})}},
      {"gather_axis_0", OpKind::kGather, 13, {input({5, 3}), typed_input(int64, {2, 2}, {0, 4, -1, 2})}},
      {"gather_axis_1_int32", OpKind::kGather, 13, {input({2, 4, 3}), typed_input(int32, {3}, {3, -4, 1})},
       {{"axis", int64_t{1}}}},
      {"gather_constant_indices", OpKind::kGather, 13, {input({5, 4, 3}), ints({3, 0, -1, 2})},
       {{"axis", int64_t{1}}}},
      {"gather_scalar_index", OpKind::kGather, 13, {typed_input(int64, {4}), typed_input(int64, {}, {-1})}},
      {"gather_negative_axis", OpKind::kGather, 13, {input({2, 3, 4}), typed_input(int64, {2}, {0, -1})},
       {{"axis", int64_t{-1}}}},
      // A channels-last channel shuffle: 4-byte elements gathered along the last axis, rows over the threads.
      {"gather_last_axis_shuffle", OpKind::kGather, 13, {input({4, 50, 30, 6}), ints({0, 3, 1, 4, 2, 5})},
       {{"axis", int64_t{3}}}},
  };
}

std::vector<OpCase> reduction_cases() {
  const ucudnn::Shape image = {2, 3, 5, 6};
  return {
      {"reduce_mean_axes", OpKind::kReduceMean, 18, {input({2, 3, 4, 5}), ints({2, 3})}},
      {"reduce_mean_channel_and_width", OpKind::kReduceMean, 18, {input(image), ints({1, 3})}},
      {"reduce_mean_negative_no_keepdims", OpKind::kReduceMean, 18, {input({2, 3, 4}), ints({-2, 0})},
       {{"keepdims", int64_t{0}}}},
      {"reduce_mean_all", OpKind::kReduceMean, 18, {input({3, 4})}},
      {"reduce_mean_all_no_keepdims", OpKind::kReduceMean, 18, {input(image)}, {{"keepdims", int64_t{0}}}},
      {"reduce_mean_noop", OpKind::kReduceMean, 18, {input({3, 4}), ints({})}, {{"noop_with_empty_axes", int64_t{1}}}},
      // Innermost axes longer than the CPU's float runs (runtime/cpu/float_sums.h), values far from zero.
      {"reduce_mean_long_innermost", OpKind::kReduceMean, 18, {input({2, 3, 17, 19}, 10.0, 12.0), ints({2, 3})}},
      // The rest of the Reduce* family: one kernel each backend, switching on the kind.
      {"reduce_max_axes", OpKind::kReduceMax, 18, {input(image), ints({2, 3})}},
      {"reduce_max_channels_long", OpKind::kReduceMax, 18, {input({2, 300, 3}), ints({1})}},
      {"reduce_min_no_keepdims", OpKind::kReduceMin, 18, {input({2, 3, 4}), ints({-1})}, {{"keepdims", int64_t{0}}}},
      {"reduce_min_all", OpKind::kReduceMin, 18, {input(image)}},
      {"reduce_prod_axis", OpKind::kReduceProd, 18, {input({3, 4, 5}, 0.5, 1.5), ints({1})}},
      {"reduce_l1_axes", OpKind::kReduceL1, 18, {input(image), ints({0, 2})}},
      {"reduce_l2_last", OpKind::kReduceL2, 18, {input({4, 6, 200}), ints({-1})}},
      {"reduce_l2_opset13_attribute", OpKind::kReduceL2, 13, {input({2, 3, 4})}, {{"axes", IntList{1}}}},
      {"reduce_sum_square_axes", OpKind::kReduceSumSquare, 18, {input(image), ints({1, 3})}},
      {"reduce_log_sum_axis", OpKind::kReduceLogSum, 18, {input({3, 4, 5}, 0.1, 2.0), ints({2})}},
      {"reduce_log_sum_exp_large", OpKind::kReduceLogSumExp, 18, {input({3, 4, 5}, 80.0, 100.0), ints({1})}},
      {"reduce_log_sum_exp_long", OpKind::kReduceLogSumExp, 18, {input({2, 3, 17, 19}, -5, 5), ints({2, 3})}},
      {"reduce_max_noop", OpKind::kReduceMax, 18, {input({3, 4}), ints({})}, {{"noop_with_empty_axes", int64_t{1}}}},
      {"argmax_axis_1", OpKind::kArgMax, 13, {input(image)}, {{"axis", int64_t{1}}}},
      {"argmax_no_keepdims_last_axis", OpKind::kArgMax, 13, {input({3, 4, 50})},
       {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}}},
      {"argmax_ties_first", OpKind::kArgMax, 13, {input_values({2, 3}, {1, 3, 3, 5, 5, 2})}, {{"axis", int64_t{1}}}},
      {"argmax_ties_last", OpKind::kArgMax, 13, {input_values({2, 3}, {1, 3, 3, 5, 5, 2})},
       {{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}},
      {"argmin_axis_0", OpKind::kArgMin, 13, {input({4, 3, 2})}},
      {"argmin_ties_last", OpKind::kArgMin, 13, {input_values({3, 2}, {0, 1, 0, 1, 2, 1})},
       {{"select_last_index", int64_t{1}}}},
      {"softmax_opset11_default", OpKind::kSoftmax, 11, {input({2, 3, 4})}},
      {"softmax_opset11_axis_0", OpKind::kSoftmax, 11, {input({2, 3, 4})}, {{"axis", int64_t{0}}}},
      {"softmax_opset13_default", OpKind::kSoftmax, 13, {input({2, 3, 4})}},
      {"softmax_opset13_axis_1", OpKind::kSoftmax, 13, {input(image, -5, 5)}, {{"axis", int64_t{1}}}},
      {"softmax_large_values", OpKind::kSoftmax, 13, {input_values({2, 3}, {1000, 1001, 1002, -1000, 0, 1000})}},
      {"log_softmax_opset11", OpKind::kLogSoftmax, 11, {input(image, -5, 5)}},
      {"log_softmax_opset13_axis_0", OpKind::kLogSoftmax, 13, {input({2, 3, 4})}, {{"axis", int64_t{-3}}}},
  };
}

}  // namespace

std::vector<OpCase> elementwise_cases() {
  std::vector<OpCase> all;
  for (auto part : {activation_and_binary_cases, shape_and_cast_cases, data_movement_cases, reduction_cases})
    for (OpCase& c : part()) all.push_back(std::move(c));
  return all;
}

}  // namespace ucudnn_test
