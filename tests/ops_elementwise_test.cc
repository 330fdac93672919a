// Table-driven tests of the elementwise, data-movement, shape and reduction ops:
// each case builds an ir::Node, runs the descriptor's shape rule, fills random
// (or given) inputs, runs the CPU kernel and compares shape, dtype and values
// with the naive reference (tests/reference/elementwise_reference.h); float
// tolerance 1e-5 relative, everything else exact. A second table checks that
// bad models fail with the right status code and a message naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ops/op_descriptor.h"
#include "tests/reference/elementwise_reference.h"

namespace ucudnn {
namespace {

// One input of a case: dtype and shape, optional explicit values (else random),
// and whether the shape rule sees it as a constant.
struct InputSpec {
  DType dtype = DType::kUndefined;  // kUndefined: absent optional input
  Shape shape;
  std::vector<double> values;
  bool constant = false;
};

InputSpec F(Shape s) { return {DType::kFloat32, std::move(s), {}, false}; }
InputSpec FV(Shape s, std::vector<double> v) { return {DType::kFloat32, std::move(s), std::move(v), false}; }
InputSpec T(DType d, Shape s) { return {d, std::move(s), {}, false}; }
InputSpec TV(DType d, Shape s, std::vector<double> v) { return {d, std::move(s), std::move(v), false}; }
// A constant int64 1-D input (shape-like: axes, starts, pads, ...).
InputSpec C(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return {DType::kInt64, {n}, std::move(v), true};
}
InputSpec Absent() { return {}; }

struct Case {
  std::string name;
  OpKind op;
  int opset;
  std::vector<InputSpec> inputs;
  std::vector<std::pair<std::string, ir::AttrValue>> attrs;
  int outputs = 1;
};

// gtest prints a parameter on failure; the case name is what helps.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

using A = std::vector<std::pair<std::string, ir::AttrValue>>;
using I = std::vector<int64_t>;
constexpr double kInt64Max = 9007199254740992.0;  // 2^53: the largest double-exact int64 in tables

ir::Node make_node(const Case& c) {
  ir::Node node;
  node.name = c.name;
  node.op = c.op;
  node.opset = c.opset;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    node.inputs.push_back(c.inputs[i].dtype == DType::kUndefined ? ir::kNoValue : static_cast<ir::ValueId>(i));
  for (int i = 0; i < c.outputs; ++i) node.outputs.push_back(static_cast<ir::ValueId>(100 + i));
  for (const auto& [name, value] : c.attrs) node.attrs.set(name, value);
  // Fill spec defaults as the importer does.
  for (const AttrSpec& spec : op_descriptor(c.op).attrs)
    if (spec.presence == AttrPresence::kDefault && !node.attrs.has(spec.name)) node.attrs.set(spec.name, *spec.default_value);
  return node;
}

void set_value(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DType::kFloat32: t.data<float>()[i] = static_cast<float>(v); break;
    case DType::kFloat64: t.data<double>()[i] = v; break;
    case DType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::kInt64: t.data<int64_t>()[i] = static_cast<int64_t>(v); break;
    case DType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(v); break;
    case DType::kUInt8: t.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
    case DType::kBool: t.data<bool>()[i] = v != 0; break;
    default: break;
  }
}

Tensor make_input(const InputSpec& spec, std::mt19937& rng) {
  Tensor t = std::move(Tensor::allocate(spec.dtype, spec.shape)).value();
  std::uniform_real_distribution<double> real(-3.0, 3.0);
  std::uniform_int_distribution<int> small(-20, 20), byte(0, 255), bit(0, 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v;
    if (!spec.values.empty()) v = spec.values[static_cast<size_t>(i) % spec.values.size()];
    else if (spec.dtype == DType::kFloat32 || spec.dtype == DType::kFloat64) v = real(rng);
    else if (spec.dtype == DType::kUInt8) v = byte(rng);
    else if (spec.dtype == DType::kInt8) v = byte(rng) - 128;
    else if (spec.dtype == DType::kBool) v = bit(rng);
    else v = small(rng);
    set_value(t, i, v);
  }
  return t;
}

// Everything a case needs to run: the node, its input tensors, and the shape rule's view.
struct Prepared {
  ir::Node node;
  std::vector<Tensor> storage;
  std::vector<const Tensor*> src;
  std::vector<ValueInfo> infos;
};

Prepared prepare(const Case& c, uint32_t seed) {
  Prepared p;
  p.node = make_node(c);
  std::mt19937 rng(seed);
  p.storage.reserve(c.inputs.size());
  for (const InputSpec& spec : c.inputs) {
    if (spec.dtype == DType::kUndefined) {
      p.storage.emplace_back();
      continue;
    }
    p.storage.push_back(make_input(spec, rng));
  }
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const bool present = c.inputs[i].dtype != DType::kUndefined;
    p.src.push_back(present ? &p.storage[i] : nullptr);
    p.infos.push_back(present ? ValueInfo{c.inputs[i].dtype, c.inputs[i].shape,
                                          c.inputs[i].constant ? &p.storage[i] : nullptr}
                              : ValueInfo{});
  }
  return p;
}

// Runs the shape rule and the CPU kernel; fills `outputs`.
Status run_case(Prepared& p, std::vector<Tensor>* outputs) {
  InferContext ctx(p.node, p.infos);
  UCUDNN_RETURN_IF_ERROR(op_descriptor(p.node.op).infer(ctx));
  std::vector<Tensor*> dst;
  outputs->clear();
  outputs->reserve(ctx.num_outputs());
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    UCUDNN_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(ctx.output(i).dtype, ctx.output(i).shape));
    // Poison float outputs so a kernel that skips elements cannot pass.
    if (t.dtype() == DType::kFloat32)
      for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = std::numeric_limits<float>::quiet_NaN();
    outputs->push_back(std::move(t));
  }
  for (Tensor& t : *outputs) dst.push_back(&t);
  const cpu::CpuKernel& kernel = cpu::cpu_kernel(p.node.op);
  if (kernel.run == nullptr) return unsupported(p.node.describe() + ": no CPU kernel");
  cpu::KernelArgs args{.node = p.node, .src = p.src, .dst = dst};
  return kernel.run(args);
}

std::vector<Case> cases() {
  const DType i64 = DType::kInt64, i32 = DType::kInt32, u8 = DType::kUInt8, i8 = DType::kInt8, b = DType::kBool,
              f64 = DType::kFloat64;
  return {
      // activations
      {"relu", OpKind::kRelu, 13, {F({2, 3, 4})}, {}},
      {"leaky_relu_default", OpKind::kLeakyRelu, 16, {F({5, 7})}, {}},
      {"leaky_relu_alpha", OpKind::kLeakyRelu, 16, {F({5, 7})}, A{{"alpha", 0.3f}}},
      {"prelu_scalar", OpKind::kPRelu, 16, {F({2, 3, 4, 4}), F({1})}, {}},
      {"prelu_channel", OpKind::kPRelu, 16, {F({2, 3, 4, 4}), F({3, 1, 1})}, {}},
      {"prelu_last_dim", OpKind::kPRelu, 16, {F({2, 3, 5}), F({5})}, {}},
      {"sigmoid", OpKind::kSigmoid, 13, {FV({6}, {-100, -3, -0.5, 0, 2, 100})}, {}},
      {"sigmoid_random", OpKind::kSigmoid, 13, {F({3, 11})}, {}},
      {"tanh", OpKind::kTanh, 13, {F({4, 9})}, {}},
      {"hard_sigmoid", OpKind::kHardSigmoid, 6, {F({40})}, A{{"alpha", 0.25f}, {"beta", 0.4f}}},
      {"hard_swish", OpKind::kHardSwish, 14, {FV({8}, {-4, -3, -1.5, 0, 1, 2.9, 3, 5})}, {}},
      {"clip_both", OpKind::kClip, 13, {F({30}), FV({}, {-0.5}), FV({}, {1.25})}, {}},
      {"clip_min_only", OpKind::kClip, 13, {F({30}), FV({}, {0}), Absent()}, {}},
      {"clip_max_only", OpKind::kClip, 13, {F({30}), Absent(), FV({1}, {0.5})}, {}},
      {"clip_min_above_max", OpKind::kClip, 13, {F({10}), FV({}, {2}), FV({}, {1})}, {}},
      {"elu", OpKind::kElu, 6, {F({3, 8})}, A{{"alpha", 0.7f}}},
      // broadcasting binary
      {"add_same", OpKind::kAdd, 14, {F({2, 3, 4}), F({2, 3, 4})}, {}},
      {"add_scalar", OpKind::kAdd, 14, {F({2, 3, 4}), F({})}, {}},
      {"add_scalar_left", OpKind::kSub, 14, {F({1}), F({2, 3, 4})}, {}},
      {"add_channel", OpKind::kAdd, 14, {F({2, 3, 4, 5}), F({3, 1, 1})}, {}},
      {"mul_both_broadcast", OpKind::kMul, 14, {F({2, 1, 4}), F({3, 1})}, {}},
      {"sub_middle", OpKind::kSub, 14, {F({4, 1, 6}), F({4, 5, 1})}, {}},
      {"div_row", OpKind::kDiv, 14, {F({3, 7}), FV({7}, {1, -2, 3, 0.5, -0.25, 4, 8})}, {}},
      {"add_int64", OpKind::kAdd, 14, {T(i64, {2, 3}), T(i64, {3})}, {}},
      {"add_int64_large", OpKind::kAdd, 14, {TV(i64, {2}, {kInt64Max / 2, -5}), TV(i64, {2}, {kInt64Max / 2, 7})}, {}},
      {"mul_int64_scalar", OpKind::kMul, 14, {T(i64, {4}), TV(i64, {}, {-3})}, {}},
      {"div_int64_truncates", OpKind::kDiv, 14, {TV(i64, {4}, {7, -7, 7, -7}), TV(i64, {4}, {2, 2, -2, -2})}, {}},
      {"sub_int32", OpKind::kSub, 14, {T(i32, {3, 1}), T(i32, {1, 4})}, {}},
      // shape ops
      {"flatten_default", OpKind::kFlatten, 13, {F({2, 3, 4})}, {}},
      {"flatten_0", OpKind::kFlatten, 13, {F({2, 3, 4})}, A{{"axis", int64_t{0}}}},
      {"flatten_negative", OpKind::kFlatten, 13, {T(i64, {2, 3, 4})}, A{{"axis", int64_t{-1}}}},
      {"reshape_minus_one", OpKind::kReshape, 14, {F({2, 3, 4}), C({-1, 4})}, {}},
      {"reshape_zero_copies", OpKind::kReshape, 14, {F({2, 3, 4}), C({0, -1})}, {}},
      {"reshape_allowzero", OpKind::kReshape, 14, {F({0, 3}), C({3, 0})}, A{{"allowzero", int64_t{1}}}},
      {"reshape_int64", OpKind::kReshape, 14, {T(i64, {6}), C({3, 2})}, {}},
      {"squeeze_all", OpKind::kSqueeze, 13, {F({1, 3, 1, 2})}, {}},
      {"squeeze_axes", OpKind::kSqueeze, 13, {F({1, 3, 1, 2}), C({-2})}, {}},
      {"unsqueeze", OpKind::kUnsqueeze, 13, {F({3, 2}), C({0, -1})}, {}},
      {"unsqueeze_middle", OpKind::kUnsqueeze, 13, {T(i64, {3}), C({1, 0})}, {}},
      {"shape", OpKind::kShape, 15, {F({2, 3, 4, 5})}, {}},
      {"shape_start_end", OpKind::kShape, 15, {F({2, 3, 4, 5})}, A{{"start", int64_t{1}}, {"end", int64_t{-1}}}},
      {"shape_clamped", OpKind::kShape, 15, {F({2, 3})}, A{{"start", int64_t{-10}}, {"end", int64_t{10}}}},
      {"identity_bool", OpKind::kIdentity, 16, {T(b, {7})}, {}},
      {"dropout", OpKind::kDropout, 13, {F({3, 4})}, {}},
      {"dropout_mask", OpKind::kDropout, 13, {F({3, 4}), FV({}, {0.5}), {b, {}, {0}, true}}, {}, 2},
      {"constant", OpKind::kConstant, 13, {}, A{{"value", Tensor::from_int64s({3}, std::vector<int64_t>{4, -1, 2})}}},
      {"cast_float_to_int64", OpKind::kCast, 13, {FV({8}, {-2.7, -0.5, 0.5, 2.7, 3.999, -3.999, 0, 100.2})},
       A{{"to", int64_t{7}}}},
      {"cast_float_to_int32", OpKind::kCast, 13, {FV({4}, {-1.9, 1.9, -0.1, 7.5})}, A{{"to", int64_t{6}}}},
      {"cast_float_to_uint8", OpKind::kCast, 13, {FV({4}, {0.9, 1.5, 254.7, 3})}, A{{"to", int64_t{2}}}},
      {"cast_float_to_int8", OpKind::kCast, 13, {FV({4}, {-127.9, 126.9, -0.9, 3})}, A{{"to", int64_t{3}}}},
      {"cast_float_to_bool", OpKind::kCast, 13, {FV({4}, {0, -0.0, 0.1, -3})}, A{{"to", int64_t{9}}}},
      {"cast_int64_to_float", OpKind::kCast, 13, {T(i64, {5})}, A{{"to", int64_t{1}}}},
      {"cast_int32_to_int8_wraps", OpKind::kCast, 13, {TV(i32, {3}, {300, -129, 5})}, A{{"to", int64_t{3}}}},
      {"cast_bool_to_float64", OpKind::kCast, 13, {T(b, {6})}, A{{"to", int64_t{11}}}},
      {"cast_uint8_to_int64", OpKind::kCast, 13, {T(u8, {6})}, A{{"to", int64_t{7}}}},
      {"cast_int8_to_float", OpKind::kCast, 13, {T(i8, {6})}, A{{"to", int64_t{1}}}},
      {"cast_float64_to_float", OpKind::kCast, 13, {T(f64, {6})}, A{{"to", int64_t{1}}}},
      // data movement
      {"concat_axis1", OpKind::kConcat, 13, {F({2, 3, 4}), F({2, 1, 4}), F({2, 2, 4})}, A{{"axis", int64_t{1}}}},
      {"concat_negative_axis", OpKind::kConcat, 13, {F({2, 3}), F({2, 5})}, A{{"axis", int64_t{-1}}}},
      {"concat_int64_shapes", OpKind::kConcat, 13, {T(i64, {1}), T(i64, {2}), T(i64, {0})}, A{{"axis", int64_t{0}}}},
      {"split_equal", OpKind::kSplit, 13, {F({2, 6})}, A{{"axis", int64_t{1}}}, 3},
      {"split_sizes", OpKind::kSplit, 13, {F({5, 2}), C({1, 4})}, {}, 2},
      {"split_negative_axis", OpKind::kSplit, 13, {T(i64, {2, 3, 4}), C({1, 0, 3})}, A{{"axis", int64_t{-1}}}, 3},
      {"split_num_outputs_uneven", OpKind::kSplit, 18, {F({7, 2})}, A{{"num_outputs", int64_t{3}}}, 3},
      {"slice_basic", OpKind::kSlice, 13, {F({4, 5}), C({1, 0}), C({3, 5})}, {}},
      {"slice_axes_steps", OpKind::kSlice, 13, {F({4, 5, 6}), C({0, 1}), C({6, 5}), C({-1, 1}), C({2, 3})}, {}},
      {"slice_negative_step", OpKind::kSlice, 13, {F({4, 6}), C({-1}), C({-7}), C({1}), C({-1})}, {}},
      {"slice_negative_step_2", OpKind::kSlice, 13, {F({3, 7}), C({5, 2}), C({0, 0}), C({1, 0}), C({-2, -1})}, {}},
      {"slice_clamp_large", OpKind::kSlice, 13, {F({3, 4}), C({-100, 1}), C({100, kInt64Max}), Absent(), Absent()},
       {}},
      {"slice_empty", OpKind::kSlice, 13, {F({3, 4}), C({3}), C({1}), C({1})}, {}},
      {"slice_int64", OpKind::kSlice, 13, {T(i64, {4}), C({-2}), C({kInt64Max})}, {}},
      {"transpose_default", OpKind::kTranspose, 13, {F({2, 3, 4})}, {}},
      {"transpose_perm", OpKind::kTranspose, 13, {F({2, 3, 4, 5})}, A{{"perm", I{0, 2, 3, 1}}}},
      {"transpose_bool", OpKind::kTranspose, 13, {T(b, {3, 5})}, A{{"perm", I{1, 0}}}},
      {"pad_zero", OpKind::kPad, 13, {F({2, 3}), C({1, 0, 2, 3})}, {}},
      {"pad_value", OpKind::kPad, 13, {F({2, 3, 4}), C({0, 1, 1, 0, 2, 0}), FV({}, {1.5})}, {}},
      {"pad_negative", OpKind::kPad, 13, {F({4, 5}), C({-1, 2, 0, -3})}, {}},
      {"pad_all_zero", OpKind::kPad, 13, {F({2, 3}), C({0, 0, 0, 0})}, {}},
      {"pad_axes", OpKind::kPad, 18, {F({2, 3, 4}), C({1, 2, 3, 0}), Absent(), C({-1, 0})}, {}},
      {"pad_int64", OpKind::kPad, 13, {T(i64, {3}), C({1, 1}), TV(i64, {}, {-9})}, {}},
      {"gather_axis0", OpKind::kGather, 13, {F({5, 3}), TV(i64, {2, 2}, {0, 4, -1, 2})}, {}},
      {"gather_axis1_int32", OpKind::kGather, 13, {F({2, 4, 3}), TV(i32, {3}, {3, -4, 1})}, A{{"axis", int64_t{1}}}},
      {"gather_scalar_index", OpKind::kGather, 13, {T(i64, {4}), TV(i64, {}, {-1})}, {}},
      {"gather_negative_axis", OpKind::kGather, 13, {F({2, 3, 4}), TV(i64, {2}, {0, -1})}, A{{"axis", int64_t{-1}}}},
      // reductions
      {"reduce_mean_axes", OpKind::kReduceMean, 18, {F({2, 3, 4, 5}), C({2, 3})}, {}},
      {"reduce_mean_negative_nokeep", OpKind::kReduceMean, 18, {F({2, 3, 4}), C({-2, 0})}, A{{"keepdims", int64_t{0}}}},
      {"reduce_mean_all", OpKind::kReduceMean, 18, {F({3, 4})}, {}},
      {"reduce_mean_all_nokeep", OpKind::kReduceMean, 18, {F({3, 4})}, A{{"keepdims", int64_t{0}}}},
      {"reduce_mean_noop", OpKind::kReduceMean, 18, {F({3, 4}), C({})}, A{{"noop_with_empty_axes", int64_t{1}}}},
      {"softmax_opset11_default", OpKind::kSoftmax, 11, {F({2, 3, 4})}, {}},
      {"softmax_opset11_axis0", OpKind::kSoftmax, 11, {F({2, 3, 4})}, A{{"axis", int64_t{0}}}},
      {"softmax_opset13_default", OpKind::kSoftmax, 13, {F({2, 3, 4})}, {}},
      {"softmax_opset13_axis1", OpKind::kSoftmax, 13, {F({2, 3, 4})}, A{{"axis", int64_t{1}}}},
      {"softmax_large_values", OpKind::kSoftmax, 13, {FV({2, 3}, {1000, 1001, 1002, -1000, 0, 1000})}, {}},
      {"log_softmax_opset11", OpKind::kLogSoftmax, 11, {F({2, 3, 4})}, {}},
      {"log_softmax_opset13_axis0", OpKind::kLogSoftmax, 13, {F({2, 3, 4})}, A{{"axis", int64_t{-3}}}},
  };
}

class ElementwiseOp : public ::testing::TestWithParam<Case> {};

TEST_P(ElementwiseOp, MatchesReference) {
  const Case& c = GetParam();
  Prepared p = prepare(c, static_cast<uint32_t>(std::hash<std::string>{}(c.name)));
  std::vector<Tensor> got;
  const Status s = run_case(p, &got);
  ASSERT_TRUE(s.is_ok()) << s.to_string();
  auto want = reference::elementwise_reference(p.node, p.src);
  ASSERT_TRUE(want.has_value()) << want.status().to_string();
  ASSERT_EQ(got.size(), want->size());
  for (size_t o = 0; o < got.size(); ++o) {
    const Tensor& g = got[o];
    const Tensor& w = (*want)[o];
    ASSERT_EQ(g.dtype(), w.dtype()) << "output " << o;
    ASSERT_EQ(g.shape(), w.shape()) << "output " << o << ": " << shape_to_string(g.shape()) << " vs reference "
                                    << shape_to_string(w.shape());
    for (int64_t i = 0; i < g.numel(); ++i) {
      if (g.dtype() == DType::kInt64) {
        ASSERT_EQ(g.data<int64_t>()[i], w.data<int64_t>()[i]) << "output " << o << " element " << i;
      } else if (g.dtype() == DType::kFloat32 || g.dtype() == DType::kFloat64) {
        const double a = reference::element_as_double(g, i), e = reference::element_as_double(w, i);
        ASSERT_LE(std::fabs(a - e), 1e-5 * std::max(1.0, std::fabs(e)))
            << "output " << o << " element " << i << ": got " << a << ", reference " << e;
      } else {
        ASSERT_EQ(reference::element_as_double(g, i), reference::element_as_double(w, i))
            << "output " << o << " element " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Table, ElementwiseOp, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// --- errors -------------------------------------------------------------------

struct ErrorCase {
  Case c;
  StatusCode code;
  bool at_run = false;  // the shape rule accepts it; the kernel must reject it
};

std::vector<ErrorCase> error_cases() {
  const DType i64 = DType::kInt64;
  InputSpec runtime_ints = T(i64, {2});  // not constant: a runtime value
  return {
      {{"add_not_broadcastable", OpKind::kAdd, 14, {F({2, 3}), F({4})}, {}}, StatusCode::kInvalidModel},
      {{"add_mixed_dtypes", OpKind::kAdd, 14, {F({2}), T(i64, {2})}, {}}, StatusCode::kInvalidModel},
      {{"sigmoid_int64", OpKind::kSigmoid, 13, {T(i64, {2})}, {}}, StatusCode::kUnsupported},
      {{"prelu_bad_slope", OpKind::kPRelu, 16, {F({2, 3}), F({2})}, {}}, StatusCode::kInvalidModel},
      {{"clip_min_not_scalar", OpKind::kClip, 13, {F({4}), F({2})}, {}}, StatusCode::kInvalidModel},
      {{"concat_rank_mismatch", OpKind::kConcat, 13, {F({2, 3}), F({2, 3, 1})}, A{{"axis", int64_t{0}}}},
       StatusCode::kInvalidModel},
      {{"concat_dim_mismatch", OpKind::kConcat, 13, {F({2, 3}), F({3, 3})}, A{{"axis", int64_t{1}}}},
       StatusCode::kInvalidModel},
      {{"concat_bad_axis", OpKind::kConcat, 13, {F({2, 3}), F({2, 3})}, A{{"axis", int64_t{2}}}},
       StatusCode::kInvalidModel},
      {{"reshape_size_mismatch", OpKind::kReshape, 14, {F({2, 3}), C({4, 2})}, {}}, StatusCode::kInvalidModel},
      {{"reshape_two_minus_one", OpKind::kReshape, 14, {F({2, 3}), C({-1, -1})}, {}}, StatusCode::kInvalidModel},
      {{"reshape_allowzero_and_minus_one", OpKind::kReshape, 14, {F({2, 3}), C({0, -1})},
        A{{"allowzero", int64_t{1}}}},
       StatusCode::kInvalidModel},
      {{"reshape_runtime_shape", OpKind::kReshape, 14, {F({2, 3}), runtime_ints}, {}}, StatusCode::kUnsupported},
      {{"flatten_bad_axis", OpKind::kFlatten, 13, {F({2, 3})}, A{{"axis", int64_t{3}}}}, StatusCode::kInvalidModel},
      {{"squeeze_not_one", OpKind::kSqueeze, 13, {F({1, 3}), C({1})}, {}}, StatusCode::kInvalidModel},
      {{"unsqueeze_repeated", OpKind::kUnsqueeze, 13, {F({3}), C({0, 0})}, {}}, StatusCode::kInvalidModel},
      {{"unsqueeze_out_of_range", OpKind::kUnsqueeze, 13, {F({3}), C({2})}, {}}, StatusCode::kInvalidModel},
      {{"slice_step_zero", OpKind::kSlice, 13, {F({4}), C({0}), C({4}), C({0}), C({0})}, {}},
       StatusCode::kInvalidModel},
      {{"slice_runtime_starts", OpKind::kSlice, 13, {F({4, 4}), runtime_ints, C({4, 4})}, {}},
       StatusCode::kUnsupported},
      {{"slice_length_mismatch", OpKind::kSlice, 13, {F({4, 4}), C({0}), C({4, 4})}, {}}, StatusCode::kInvalidModel},
      {{"transpose_bad_perm", OpKind::kTranspose, 13, {F({2, 3})}, A{{"perm", I{0, 0}}}}, StatusCode::kInvalidModel},
      {{"pad_reflect", OpKind::kPad, 13, {F({2, 3}), C({1, 1, 1, 1})}, A{{"mode", std::string("reflect")}}},
       StatusCode::kUnsupported},
      {{"pad_crop_below_zero", OpKind::kPad, 13, {F({2, 3}), C({-2, 0, -1, 0})}, {}}, StatusCode::kInvalidModel},
      {{"pad_wrong_length", OpKind::kPad, 13, {F({2, 3}), C({1, 1})}, {}}, StatusCode::kInvalidModel},
      {{"gather_constant_index_out_of_range", OpKind::kGather, 13, {F({3, 2}), {i64, {1}, {3}, true}}, {}},
       StatusCode::kInvalidModel},
      {{"gather_runtime_index_out_of_range", OpKind::kGather, 13, {F({3, 2}), TV(i64, {2}, {0, -4})}, {}},
       StatusCode::kInvalidArgument, true},
      {{"div_int64_by_zero", OpKind::kDiv, 14, {T(i64, {2}), TV(i64, {2}, {1, 0})}, {}},
       StatusCode::kInvalidArgument, true},
      {{"cast_to_float16", OpKind::kCast, 13, {F({2})}, A{{"to", int64_t{10}}}}, StatusCode::kUnsupported},
      {{"split_uneven", OpKind::kSplit, 13, {F({5})}, {}, 2}, StatusCode::kInvalidModel},
      {{"split_bad_sum", OpKind::kSplit, 13, {F({5}), C({2, 2})}, {}, 2}, StatusCode::kInvalidModel},
      {{"split_num_outputs_mismatch", OpKind::kSplit, 18, {F({6})}, A{{"num_outputs", int64_t{3}}}, 2},
       StatusCode::kInvalidModel},
      {{"softmax_bad_axis", OpKind::kSoftmax, 13, {F({2, 3})}, A{{"axis", int64_t{2}}}}, StatusCode::kInvalidModel},
      {{"reduce_mean_repeated_axis", OpKind::kReduceMean, 18, {F({2, 3}), C({1, -1})}, {}},
       StatusCode::kInvalidModel},
      {{"dropout_training", OpKind::kDropout, 13, {F({2}), FV({}, {0.5}), {DType::kBool, {}, {1}, true}}, {}},
       StatusCode::kUnsupported},
  };
}

void PrintTo(const ErrorCase& e, std::ostream* os) { *os << e.c.name; }

class ElementwiseError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ElementwiseError, FailsWithCodeAndNodeName) {
  const ErrorCase& e = GetParam();
  Prepared p = prepare(e.c, 7);
  InferContext ctx(p.node, p.infos);
  const Status inferred = op_descriptor(p.node.op).infer(ctx);
  Status s = inferred;
  if (e.at_run) {
    ASSERT_TRUE(inferred.is_ok()) << "shape rule should accept it: " << inferred.to_string();
    std::vector<Tensor> outputs;
    s = run_case(p, &outputs);
  }
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), e.code) << s.to_string();
  EXPECT_NE(s.message().find("'" + e.c.name + "'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(op_name(e.c.op)), std::string::npos) << s.message();
}

INSTANTIATE_TEST_SUITE_P(Table, ElementwiseError, ::testing::ValuesIn(error_cases()),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.c.name; });

// Kernel behaviour the spec leaves undefined, pinned so it stays deliberate:
// float → integer Cast saturates at the target's range and maps NaN to 0.
TEST(ElementwiseCast, FloatToIntegerSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Case c{"cast_saturate", OpKind::kCast, 13, {F({4})}, A{{"to", int64_t{2}}}};
  Prepared p = prepare(c, 1);
  const float values[] = {-5.0f, 300.0f, nan, 255.9f};
  std::memcpy(p.storage[0].data<float>(), values, sizeof(values));
  std::vector<Tensor> got;
  ASSERT_TRUE(run_case(p, &got).is_ok());
  const uint8_t* y = got[0].data<uint8_t>();
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(y[1], 255);
  EXPECT_EQ(y[2], 0);
  EXPECT_EQ(y[3], 255);
}

// A large broadcast Add runs the threaded row path; compare with the reference.
TEST(ElementwiseBinary, LargeBroadcastUsesThreadedPath) {
  Case c{"add_large", OpKind::kAdd, 14, {F({4, 64, 130}), F({64, 1})}, {}};
  Prepared p = prepare(c, 3);
  std::vector<Tensor> got;
  ASSERT_TRUE(run_case(p, &got).is_ok());
  auto want = reference::elementwise_reference(p.node, p.src);
  ASSERT_TRUE(want.has_value());
  for (int64_t i = 0; i < got[0].numel(); ++i)
    ASSERT_NEAR(got[0].data<float>()[i], (*want)[0].data<float>()[i], 1e-5) << i;
}

}  // namespace
}  // namespace ucudnn
