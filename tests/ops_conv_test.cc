// Table-driven tests of the compute-heavy ops (Conv, BatchNormalization, LRN, the
// pools, Gemm, MatMul): for every case, build a node, infer its shapes with the
// descriptor, fill random inputs, run the CPU kernel (for Conv: every algorithm
// that applies, and the default) and compare with the naive reference. Also:
// Conv run as micro-batches (views of slices) equals the whole-batch run, the
// algorithms' workspace contract, and shape-rule errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <utility>

#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ops/op_descriptor.h"
#include "tests/reference/conv_reference.h"

namespace ucudnn {
namespace {

using Ints = std::vector<int64_t>;
using AttrList = std::vector<std::pair<std::string, ir::AttrValue>>;

struct OpCase {
  std::string name;
  OpKind op;
  AttrList attrs;
  std::vector<Shape> inputs;  // present inputs only (absent optional ones are left off the end)
  Shape expected_output;      // checked against the shape rule
  int num_outputs = 1;
};

// A node like the importer builds it: declared attributes, spec defaults filled.
ir::Node make_node(const std::string& name, OpKind op, const AttrList& attrs, size_t num_inputs, int num_outputs = 1) {
  ir::Node node;
  node.name = name;
  node.op = op;
  node.opset = 17;
  for (size_t i = 0; i < num_inputs; ++i) node.inputs.push_back(static_cast<ir::ValueId>(i));
  for (int i = 0; i < num_outputs; ++i) node.outputs.push_back(static_cast<ir::ValueId>(num_inputs + i));
  for (const AttrSpec& spec : op_descriptor(op).attrs)
    if (spec.presence == AttrPresence::kDefault) node.attrs.set(spec.name, *spec.default_value);
  for (const auto& [key, value] : attrs) node.attrs.set(key, value);
  return node;
}

Expected<std::vector<ValueInfo>> infer(const ir::Node& node, const std::vector<Shape>& shapes) {
  std::vector<ValueInfo> inputs;
  for (const Shape& s : shapes) inputs.push_back({DType::kFloat32, s, nullptr});
  InferContext ctx(node, std::move(inputs));
  UCUDNN_RETURN_IF_ERROR(op_descriptor(node.op).infer(ctx));
  std::vector<ValueInfo> outputs;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) outputs.push_back(ctx.output(i));
  return outputs;
}

Tensor random_tensor(const Shape& shape, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  Tensor t = std::move(Tensor::allocate(DType::kFloat32, shape)).value();
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// Length of the longest sum behind one output element (scales the tolerance).
int64_t reduction_length(const OpCase& c) {
  switch (c.op) {
    case OpKind::kConv: return shape_numel(Shape(c.inputs[1].begin() + 1, c.inputs[1].end()));
    case OpKind::kGemm: return std::max(c.inputs[0][0], c.inputs[0][1]);
    case OpKind::kMatMul: return c.inputs[0].back();
    default: return 16;
  }
}

// Compares element-wise: |got - want| <= atol + rtol·|want|.
void expect_close(const Tensor& got, const Tensor& want, double atol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  int reported = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.data<float>()[i], w = want.data<float>()[i];
    const bool close = (std::isinf(w) && g == w) || std::abs(g - w) <= atol + 1e-4 * std::abs(w);
    if (!close && reported++ < 5) ADD_FAILURE() << what << ": element " << i << " is " << g << ", expected " << w;
  }
}

std::vector<Tensor> make_inputs(const OpCase& c, std::mt19937& rng) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const bool variance = c.op == OpKind::kBatchNormalization && i == 4;
    inputs.push_back(random_tensor(c.inputs[i], rng, variance ? 0.1f : -1.0f, variance ? 2.0f : 1.0f));
  }
  return inputs;
}

AttrList attrs(AttrList list) { return list; }

const std::vector<OpCase>& cases() {
  static const std::vector<OpCase> table = {
      // --- Conv ---
      {"conv_3x3_pad1", OpKind::kConv, attrs({{"pads", Ints{1, 1, 1, 1}}}), {{2, 3, 7, 6}, {4, 3, 3, 3}, {4}}, {2, 4, 7, 6}},
      {"conv_no_bias_stride2", OpKind::kConv, attrs({{"strides", Ints{2, 2}}}), {{3, 4, 9, 8}, {5, 4, 3, 3}}, {3, 5, 4, 3}},
      {"conv_1x1", OpKind::kConv, {}, {{2, 8, 5, 5}, {6, 8, 1, 1}, {6}}, {2, 6, 5, 5}},
      {"conv_1x1_stride2", OpKind::kConv, attrs({{"strides", Ints{2, 2}}}), {{2, 8, 5, 5}, {6, 8, 1, 1}}, {2, 6, 3, 3}},
      {"conv_1x1_groups", OpKind::kConv, attrs({{"group", int64_t{2}}}), {{2, 8, 3, 4}, {6, 4, 1, 1}, {6}}, {2, 6, 3, 4}},
      {"conv_groups", OpKind::kConv, attrs({{"group", int64_t{3}}, {"pads", Ints{1, 0, 1, 0}}}),
       {{2, 6, 6, 5}, {9, 2, 3, 2}, {9}}, {2, 9, 6, 4}},
      {"conv_depthwise", OpKind::kConv, attrs({{"group", int64_t{4}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 1}}}),
       {{2, 4, 7, 7}, {4, 1, 3, 3}, {4}}, {2, 4, 4, 7}},
      {"conv_depthwise_multiplier", OpKind::kConv, attrs({{"group", int64_t{3}}, {"pads", Ints{1, 1, 1, 1}}}),
       {{1, 3, 5, 5}, {6, 1, 3, 3}}, {1, 6, 5, 5}},
      {"conv_dilation", OpKind::kConv, attrs({{"dilations", Ints{2, 3}}, {"pads", Ints{2, 1, 2, 1}}}),
       {{2, 3, 9, 10}, {4, 3, 3, 3}, {4}}, {2, 4, 9, 6}},
      {"conv_asymmetric_pads", OpKind::kConv, attrs({{"pads", Ints{0, 2, 1, 0}}, {"strides", Ints{1, 2}}}),
       {{1, 2, 5, 6}, {3, 2, 3, 2}, {3}}, {1, 3, 4, 4}},
      {"conv_same_upper", OpKind::kConv, attrs({{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}),
       {{2, 3, 8, 7}, {2, 3, 4, 4}, {2}}, {2, 2, 4, 4}},
      {"conv_same_lower", OpKind::kConv, attrs({{"auto_pad", std::string("SAME_LOWER")}}),
       {{2, 3, 6, 5}, {2, 3, 2, 4}, {2}}, {2, 2, 6, 5}},
      {"conv_valid", OpKind::kConv, attrs({{"auto_pad", std::string("VALID")}, {"strides", Ints{2, 3}}}),
       {{1, 2, 9, 11}, {3, 2, 3, 3}}, {1, 3, 4, 3}},
      {"conv_kernel_shape_attr", OpKind::kConv, attrs({{"kernel_shape", Ints{5, 5}}, {"pads", Ints{2, 2, 2, 2}}}),
       {{1, 16, 12, 12}, {8, 16, 5, 5}, {8}}, {1, 8, 12, 12}},
      {"conv_1d", OpKind::kConv, attrs({{"pads", Ints{1, 2}}, {"strides", Ints{2}}}), {{3, 4, 11}, {5, 4, 3}, {5}}, {3, 5, 6}},
      {"conv_1d_dilated_groups", OpKind::kConv, attrs({{"dilations", Ints{2}}, {"group", int64_t{2}}}),
       {{2, 4, 10}, {4, 2, 3}}, {2, 4, 6}},
      {"conv_1d_1x1", OpKind::kConv, {}, {{2, 4, 10}, {3, 4, 1}}, {2, 3, 10}},
      {"conv_resnet_stem", OpKind::kConv, attrs({{"pads", Ints{3, 3, 3, 3}}, {"strides", Ints{2, 2}}}),
       {{2, 3, 32, 32}, {8, 3, 7, 7}, {8}}, {2, 8, 16, 16}},
      // --- BatchNormalization, LRN ---
      {"batch_norm", OpKind::kBatchNormalization, attrs({{"epsilon", 1e-3f}}),
       {{3, 4, 5, 6}, {4}, {4}, {4}, {4}}, {3, 4, 5, 6}},
      {"batch_norm_2d_input", OpKind::kBatchNormalization, {}, {{5, 3}, {3}, {3}, {3}, {3}}, {5, 3}},
      {"lrn", OpKind::kLRN, attrs({{"size", int64_t{3}}, {"alpha", 0.01f}, {"beta", 0.5f}, {"bias", 2.0f}}),
       {{2, 7, 4, 3}}, {2, 7, 4, 3}},
      {"lrn_even_size", OpKind::kLRN, attrs({{"size", int64_t{4}}, {"alpha", 0.1f}}), {{1, 6, 3, 3}}, {1, 6, 3, 3}},
      // --- MaxPool ---
      {"maxpool_3x3_s2_p1", OpKind::kMaxPool,
       attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}), {{2, 3, 9, 8}},
       {2, 3, 5, 4}},
      {"maxpool_ceil_mode", OpKind::kMaxPool,
       attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}), {{1, 2, 8, 7}},
       {1, 2, 4, 3}},
      {"maxpool_ceil_mode_dropped_window", OpKind::kMaxPool,
       attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"ceil_mode", int64_t{1}}}),
       {{1, 2, 4, 5}}, {1, 2, 3, 3}},
      {"maxpool_dilation", OpKind::kMaxPool, attrs({{"kernel_shape", Ints{2, 3}}, {"dilations", Ints{2, 2}}}),
       {{2, 2, 7, 8}}, {2, 2, 5, 4}},
      {"maxpool_same_upper", OpKind::kMaxPool,
       attrs({{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}),
       {{1, 3, 7, 6}}, {1, 3, 4, 3}},
      {"maxpool_1d", OpKind::kMaxPool, attrs({{"kernel_shape", Ints{3}}, {"strides", Ints{2}}, {"pads", Ints{1, 0}}}),
       {{2, 3, 10}}, {2, 3, 5}},
      // --- AveragePool ---
      {"avgpool_exclude_pad", OpKind::kAveragePool,
       attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}), {{2, 3, 7, 6}},
       {2, 3, 4, 3}},
      {"avgpool_include_pad", OpKind::kAveragePool,
       attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"count_include_pad", int64_t{1}}}),
       {{2, 3, 7, 6}}, {2, 3, 4, 3}},
      {"avgpool_ceil_include_pad", OpKind::kAveragePool,
       attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{0, 1, 1, 0}}, {"ceil_mode", int64_t{1}},
              {"count_include_pad", int64_t{1}}}),
       {{1, 2, 8, 9}}, {1, 2, 4, 5}},
      {"avgpool_asymmetric_valid", OpKind::kAveragePool,
       attrs({{"kernel_shape", Ints{2, 3}}, {"auto_pad", std::string("VALID")}, {"strides", Ints{1, 2}}}), {{1, 2, 5, 8}},
       {1, 2, 4, 3}},
      {"avgpool_same_lower", OpKind::kAveragePool,
       attrs({{"kernel_shape", Ints{3, 3}}, {"auto_pad", std::string("SAME_LOWER")}, {"count_include_pad", int64_t{1}}}),
       {{1, 2, 5, 4}}, {1, 2, 5, 4}},
      {"avgpool_1d", OpKind::kAveragePool, attrs({{"kernel_shape", Ints{4}}, {"strides", Ints{3}}, {"pads", Ints{2, 2}}}),
       {{2, 2, 11}}, {2, 2, 4}},
      // --- global pools ---
      {"global_avgpool", OpKind::kGlobalAveragePool, {}, {{2, 5, 7, 3}}, {2, 5, 1, 1}},
      {"global_maxpool", OpKind::kGlobalMaxPool, {}, {{2, 5, 7, 3}}, {2, 5, 1, 1}},
      {"global_avgpool_1d", OpKind::kGlobalAveragePool, {}, {{3, 4, 9}}, {3, 4, 1}},
      // --- Gemm ---
      {"gemm_plain", OpKind::kGemm, {}, {{5, 7}, {7, 4}, {5, 4}}, {5, 4}},
      {"gemm_trans_b_bias_row", OpKind::kGemm, attrs({{"transB", int64_t{1}}}), {{3, 16}, {10, 16}, {10}}, {3, 10}},
      {"gemm_trans_a", OpKind::kGemm, attrs({{"transA", int64_t{1}}, {"alpha", 0.5f}}), {{6, 3}, {6, 4}, {1, 4}}, {3, 4}},
      {"gemm_trans_both_column_c", OpKind::kGemm, attrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"beta", 2.0f}}),
       {{6, 3}, {4, 6}, {3, 1}}, {3, 4}},
      {"gemm_scalar_c", OpKind::kGemm, attrs({{"alpha", 2.0f}, {"beta", -1.0f}}), {{2, 3}, {3, 5}, {}}, {2, 5}},
      {"gemm_no_c", OpKind::kGemm, {}, {{4, 3}, {3, 2}}, {4, 2}},
      // --- MatMul ---
      {"matmul_2d", OpKind::kMatMul, {}, {{4, 5}, {5, 3}}, {4, 3}},
      {"matmul_vector_matrix", OpKind::kMatMul, {}, {{5}, {5, 3}}, {3}},
      {"matmul_matrix_vector", OpKind::kMatMul, {}, {{4, 5}, {5}}, {4}},
      {"matmul_vector_vector", OpKind::kMatMul, {}, {{6}, {6}}, {}},
      {"matmul_batched_b_2d", OpKind::kMatMul, {}, {{2, 3, 4, 5}, {5, 6}}, {2, 3, 4, 6}},
      {"matmul_batch_broadcast", OpKind::kMatMul, {}, {{2, 1, 4, 5}, {3, 5, 2}}, {2, 3, 4, 2}},
      {"matmul_a_2d_b_batched", OpKind::kMatMul, {}, {{4, 5}, {3, 5, 2}}, {3, 4, 2}},
      {"matmul_batched_vector", OpKind::kMatMul, {}, {{5}, {2, 5, 3}}, {2, 3}},
  };
  return table;
}

void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

class OpsConvTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpsConvTest, MatchesReference) {
  const OpCase& c = GetParam();
  const ir::Node node = make_node(c.name, c.op, c.attrs, c.inputs.size(), c.num_outputs);
  auto outputs = infer(node, c.inputs);
  ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_EQ((*outputs)[0].shape, c.expected_output) << "shape rule of " << c.name;
  EXPECT_EQ((*outputs)[0].dtype, DType::kFloat32);

  std::mt19937 rng(1234);
  std::vector<Tensor> inputs = make_inputs(c, rng);
  std::vector<const Tensor*> src;
  std::vector<Shape> src_shapes;
  for (const Tensor& t : inputs) {
    src.push_back(&t);
    src_shapes.push_back(t.shape());
  }
  const Tensor want = reference::reference_for(node, src);
  ASSERT_EQ(want.shape(), c.expected_output) << "reference shape of " << c.name;
  const double atol = 2e-5 * std::sqrt(static_cast<double>(reduction_length(c)));

  const cpu::CpuKernel& kernel = cpu::cpu_kernel(c.op);
  ASSERT_NE(kernel.run, nullptr);
  std::vector<int> algorithms = {-1};
  if (c.op == OpKind::kConv)
    for (int a = 0; a < cpu::kNumCpuConvAlgorithms; ++a) algorithms.push_back(a);
  int ran = 0;
  for (int algorithm : algorithms) {
    const std::string what = c.name + " algorithm " + std::to_string(algorithm) + " (" +
                             cpu::cpu_conv_algorithm_name(algorithm) + ")";
    const size_t bytes = kernel.workspace_bytes ? kernel.workspace_bytes(node, src_shapes, algorithm) : 0;
    Tensor got = std::move(Tensor::allocate(DType::kFloat32, (*outputs)[0].shape)).value();
    // NaN-fill so an output element the kernel forgets to write cannot pass.
    for (int64_t i = 0; i < got.numel(); ++i) got.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
    if (bytes == std::numeric_limits<size_t>::max()) {
      // Not applicable: run must say so instead of computing something wrong.
      const Status s = kernel.run({node, src, {&got}, nullptr, 0, algorithm});
      EXPECT_EQ(s.code(), StatusCode::kUnsupported) << what << ": " << s.to_string();
      EXPECT_NE(s.message().find(c.name), std::string::npos) << s.message();
      continue;
    }
    std::vector<float> workspace(bytes / sizeof(float) + 1);
    const Status s = kernel.run({node, src, {&got}, workspace.data(), bytes, algorithm});
    ASSERT_TRUE(s.is_ok()) << what << ": " << s.to_string();
    expect_close(got, want, atol, what);
    ++ran;
  }
  EXPECT_GE(ran, c.op == OpKind::kConv ? 3 : 1) << "too few algorithms ran for " << c.name;
}

INSTANTIATE_TEST_SUITE_P(Cases, OpsConvTest, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

// --- Conv algorithms: applicability and workspace contract --------------------

TEST(ConvAlgorithms, WorkspaceDependsOnTheMicroBatch) {
  const ir::Node node = make_node("conv", OpKind::kConv, attrs({{"pads", Ints{1, 1, 1, 1}}}), 2);
  auto small = cpu::conv_problem(node, {1, 16, 14, 14}, {32, 16, 3, 3});
  auto large = cpu::conv_problem(node, {8, 16, 14, 14}, {32, 16, 3, 3});
  ASSERT_TRUE(small.has_value() && large.has_value());
  using A = cpu::CpuConvAlgorithm;
  const int batched = static_cast<int>(A::kIm2colGemm), per_sample = static_cast<int>(A::kIm2colGemmPerSample);
  // im2col of the whole micro-batch: K·N·P floats plus the [M, N·P] scatter buffer when N > 1.
  EXPECT_EQ(cpu::conv_workspace_bytes(*small, batched), size_t{16 * 9 * 196} * 4);
  EXPECT_EQ(cpu::conv_workspace_bytes(*large, batched), size_t{16 * 9 * 8 * 196 + 8 * 32 * 196} * 4);
  EXPECT_EQ(cpu::conv_workspace_bytes(*large, per_sample), cpu::conv_workspace_bytes(*small, per_sample));
  EXPECT_EQ(cpu::conv_workspace_bytes(*large, static_cast<int>(A::kDirect)), 0u);
  EXPECT_EQ(cpu::conv_workspace_bytes(*large, static_cast<int>(A::kGemm1x1)), std::numeric_limits<size_t>::max());
  EXPECT_EQ(cpu::conv_workspace_bytes(*large, 99), std::numeric_limits<size_t>::max());
  EXPECT_STREQ(cpu::cpu_conv_algorithm_name(batched), "im2col_gemm");
  EXPECT_STREQ(cpu::cpu_conv_algorithm_name(99), "?");
}

TEST(ConvAlgorithms, DefaultChoices) {
  using A = cpu::CpuConvAlgorithm;
  const ir::Node plain = make_node("conv", OpKind::kConv, {}, 2);
  auto one_by_one = cpu::conv_problem(plain, {4, 64, 28, 28}, {128, 64, 1, 1});
  ASSERT_TRUE(one_by_one.has_value());
  EXPECT_EQ(cpu::conv_default_algorithm(*one_by_one), static_cast<int>(A::kGemm1x1));
  EXPECT_EQ(cpu::conv_workspace_bytes(*one_by_one, -1), 0u);
  const ir::Node depthwise = make_node("dw", OpKind::kConv, attrs({{"group", int64_t{32}}}), 2);
  auto dw = cpu::conv_problem(depthwise, {4, 32, 28, 28}, {32, 1, 3, 3});
  ASSERT_TRUE(dw.has_value());
  EXPECT_EQ(cpu::conv_default_algorithm(*dw), static_cast<int>(A::kDirect));
  // A large 3x3 layer at batch 16 does not get the whole-batch im2col by default.
  auto big = cpu::conv_problem(plain, {16, 64, 58, 58}, {64, 64, 3, 3});
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(cpu::conv_default_algorithm(*big), static_cast<int>(A::kIm2colGemmPerSample));
  EXPECT_LE(cpu::conv_workspace_bytes(*big, -1), cpu::kDefaultWorkspaceLimit);
  // A deep layer (small output plane) at batch 16 gets one whole-batch GEMM; at batch 1 it does not.
  const ir::Node padded = make_node("deep", OpKind::kConv, attrs({{"pads", Ints{1, 1, 1, 1}}}), 2);
  auto deep = cpu::conv_problem(padded, {16, 512, 7, 7}, {512, 512, 3, 3});
  auto deep_single = cpu::conv_problem(padded, {1, 512, 7, 7}, {512, 512, 3, 3});
  ASSERT_TRUE(deep.has_value() && deep_single.has_value());
  EXPECT_EQ(cpu::conv_default_algorithm(*deep), static_cast<int>(A::kIm2colGemm));
  EXPECT_EQ(cpu::conv_default_algorithm(*deep_single), static_cast<int>(A::kIm2colGemmPerSample));
}

TEST(ConvAlgorithms, RejectsATooSmallWorkspace) {
  const ir::Node node = make_node("conv_ws", OpKind::kConv, {}, 2);
  std::mt19937 rng(7);
  Tensor x = random_tensor({2, 3, 6, 6}, rng), w = random_tensor({4, 3, 3, 3}, rng);
  Tensor y = std::move(Tensor::allocate(DType::kFloat32, {2, 4, 4, 4})).value();
  const Status s = cpu::cpu_kernel(OpKind::kConv).run({node, {&x, &w}, {&y}, nullptr, 0, 0});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_NE(s.message().find("conv_ws"), std::string::npos) << s.message();
}

// --- micro-batching: one kernel call per slice equals the whole batch ---------

TEST(ConvMicroBatch, SlicesEqualTheWholeBatch) {
  const ir::Node node = make_node("conv_micro", OpKind::kConv,
                                  attrs({{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{1, 2}}}), 3);
  std::mt19937 rng(42);
  const Shape x_shape = {8, 6, 9, 10}, w_shape = {5, 6, 3, 3};
  Tensor x = random_tensor(x_shape, rng), w = random_tensor(w_shape, rng), b = random_tensor({5}, rng);
  auto outputs = infer(node, {x_shape, w_shape, {5}});
  ASSERT_TRUE(outputs.has_value()) << outputs.status().to_string();
  const Shape y_shape = (*outputs)[0].shape;
  const cpu::CpuKernel& kernel = cpu::cpu_kernel(OpKind::kConv);
  const int64_t x_sample = shape_numel(x_shape) / 8, y_sample = shape_numel(y_shape) / 8;

  for (int algorithm = -1; algorithm < cpu::kNumCpuConvAlgorithms; ++algorithm) {
    const size_t whole_bytes = kernel.workspace_bytes(node, {x_shape, w_shape, {5}}, algorithm);
    if (whole_bytes == std::numeric_limits<size_t>::max()) continue;
    std::vector<float> workspace(whole_bytes / 4 + 1);
    Tensor whole = std::move(Tensor::allocate(DType::kFloat32, y_shape)).value();
    ASSERT_TRUE(kernel.run({node, {&x, &w, &b}, {&whole}, workspace.data(), whole_bytes, algorithm}).is_ok());

    Tensor sliced = std::move(Tensor::allocate(DType::kFloat32, y_shape)).value();
    int64_t offset = 0;
    for (int64_t size : {3, 1, 4}) {
      Shape xs = x_shape, ys = y_shape;
      xs[0] = ys[0] = size;
      Tensor xv = Tensor::view(DType::kFloat32, xs, x.data<float>() + offset * x_sample);
      Tensor yv = Tensor::view(DType::kFloat32, ys, sliced.data<float>() + offset * y_sample);
      const size_t bytes = kernel.workspace_bytes(node, {xs, w_shape, {5}}, algorithm);
      ASSERT_NE(bytes, std::numeric_limits<size_t>::max());
      std::vector<float> slice_workspace(bytes / 4 + 1);
      const Status s = kernel.run({node, {&xv, &w, &b}, {&yv}, slice_workspace.data(), bytes, algorithm});
      ASSERT_TRUE(s.is_ok()) << s.to_string();
      offset += size;
    }
    expect_close(sliced, whole, 1e-5, "micro-batches {3,1,4} with algorithm " + std::to_string(algorithm));
    const Tensor want = reference::reference_conv(node, {&x, &w, &b});
    expect_close(whole, want, 1e-4, "whole batch with algorithm " + std::to_string(algorithm));
  }
}

// --- shape-rule errors ---------------------------------------------------------

struct BadCase {
  std::string name;
  OpKind op;
  AttrList attrs;
  std::vector<Shape> inputs;
  StatusCode code;
  std::string mentions;  // a phrase the message must contain
  int num_outputs = 1;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class OpsConvErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(OpsConvErrorTest, ShapeRuleRejects) {
  const BadCase& c = GetParam();
  const ir::Node node = make_node(c.name, c.op, c.attrs, c.inputs.size(), c.num_outputs);
  auto outputs = infer(node, c.inputs);
  ASSERT_FALSE(outputs.has_value()) << c.name << " was accepted";
  EXPECT_EQ(outputs.status().code(), c.code) << outputs.status().to_string();
  EXPECT_NE(outputs.status().message().find("node '" + c.name + "'"), std::string::npos) << outputs.status().message();
  EXPECT_NE(outputs.status().message().find(c.mentions), std::string::npos) << outputs.status().message();
}

const std::vector<BadCase>& bad_cases() {
  static const std::vector<BadCase> table = {
      {"conv_channel_mismatch", OpKind::kConv, {}, {{1, 3, 5, 5}, {4, 2, 3, 3}}, StatusCode::kInvalidModel, "channel mismatch"},
      {"conv_group_not_dividing", OpKind::kConv, attrs({{"group", int64_t{2}}}), {{1, 3, 5, 5}, {4, 1, 3, 3}},
       StatusCode::kInvalidModel, "does not divide"},
      {"conv_filters_not_dividing", OpKind::kConv, attrs({{"group", int64_t{2}}}), {{1, 4, 5, 5}, {3, 2, 3, 3}},
       StatusCode::kInvalidModel, "output channels"},
      {"conv_3d", OpKind::kConv, {}, {{1, 2, 4, 4, 4}, {2, 2, 3, 3, 3}}, StatusCode::kUnsupported, "3-D"},
      {"conv_rank_mismatch", OpKind::kConv, {}, {{1, 2, 4, 4}, {2, 2, 3}}, StatusCode::kInvalidModel, "rank"},
      {"conv_rank_2_input", OpKind::kConv, {}, {{1, 2}, {2, 2}}, StatusCode::kInvalidModel, "rank >= 3"},
      {"conv_kernel_too_large", OpKind::kConv, {}, {{1, 2, 4, 4}, {2, 2, 5, 3}}, StatusCode::kInvalidModel, "empty"},
      {"conv_kernel_shape_mismatch", OpKind::kConv, attrs({{"kernel_shape", Ints{3, 3}}}), {{1, 2, 6, 6}, {2, 2, 3, 2}},
       StatusCode::kInvalidModel, "kernel_shape"},
      {"conv_strides_length", OpKind::kConv, attrs({{"strides", Ints{1, 1, 1}}}), {{1, 2, 6, 6}, {2, 2, 3, 3}},
       StatusCode::kInvalidModel, "strides"},
      {"conv_zero_stride", OpKind::kConv, attrs({{"strides", Ints{0, 1}}}), {{1, 2, 6, 6}, {2, 2, 3, 3}},
       StatusCode::kInvalidModel, "stride"},
      {"conv_negative_pad", OpKind::kConv, attrs({{"pads", Ints{-1, 0, 0, 0}}}), {{1, 2, 6, 6}, {2, 2, 3, 3}},
       StatusCode::kInvalidModel, "pads"},
      {"conv_bad_bias", OpKind::kConv, {}, {{1, 2, 6, 6}, {4, 2, 3, 3}, {3}}, StatusCode::kInvalidModel, "B must"},
      {"conv_bad_auto_pad", OpKind::kConv, attrs({{"auto_pad", std::string("SAME")}}), {{1, 2, 6, 6}, {2, 2, 3, 3}},
       StatusCode::kInvalidModel, "auto_pad"},
      {"conv_pads_with_auto_pad", OpKind::kConv,
       attrs({{"auto_pad", std::string("VALID")}, {"pads", Ints{1, 1, 1, 1}}}), {{1, 2, 6, 6}, {2, 2, 3, 3}},
       StatusCode::kInvalidModel, "auto_pad"},
      {"maxpool_indices", OpKind::kMaxPool, attrs({{"kernel_shape", Ints{2, 2}}}), {{1, 2, 4, 4}},
       StatusCode::kUnsupported, "Indices", 2},
      {"maxpool_kernel_rank", OpKind::kMaxPool, attrs({{"kernel_shape", Ints{2}}}), {{1, 2, 4, 4}},
       StatusCode::kInvalidModel, "kernel_shape"},
      {"maxpool_3d", OpKind::kMaxPool, attrs({{"kernel_shape", Ints{2, 2, 2}}}), {{1, 2, 4, 4, 4}},
       StatusCode::kUnsupported, "3-D"},
      {"avgpool_window_too_large", OpKind::kAveragePool, attrs({{"kernel_shape", Ints{5, 2}}}), {{1, 2, 4, 4}},
       StatusCode::kInvalidModel, "empty"},
      {"global_pool_rank_2", OpKind::kGlobalAveragePool, {}, {{3, 4}}, StatusCode::kInvalidModel, "rank >= 3"},
      {"batch_norm_training", OpKind::kBatchNormalization, attrs({{"training_mode", int64_t{1}}}),
       {{1, 2, 3, 3}, {2}, {2}, {2}, {2}}, StatusCode::kUnsupported, "training_mode"},
      {"batch_norm_wrong_scale", OpKind::kBatchNormalization, {}, {{1, 2, 3, 3}, {3}, {2}, {2}, {2}},
       StatusCode::kInvalidModel, "scale"},
      {"lrn_zero_size", OpKind::kLRN, attrs({{"size", int64_t{0}}}), {{1, 2, 3, 3}}, StatusCode::kInvalidModel, "size"},
      {"gemm_inner_mismatch", OpKind::kGemm, attrs({{"transB", int64_t{1}}}), {{3, 4}, {4, 5}},
       StatusCode::kInvalidModel, "inner dimensions"},
      {"gemm_bad_c", OpKind::kGemm, {}, {{3, 4}, {4, 5}, {3}}, StatusCode::kInvalidModel, "cannot be broadcast"},
      {"gemm_rank_3", OpKind::kGemm, {}, {{1, 3, 4}, {4, 5}}, StatusCode::kInvalidModel, "2-D"},
      {"matmul_inner_mismatch", OpKind::kMatMul, {}, {{3, 4}, {5, 2}}, StatusCode::kInvalidModel, "inner dimensions"},
      {"matmul_batch_mismatch", OpKind::kMatMul, {}, {{2, 3, 4}, {3, 4, 2}}, StatusCode::kInvalidModel, "batch dims"},
      {"matmul_scalar", OpKind::kMatMul, {}, {{}, {3}}, StatusCode::kInvalidModel, "rank >= 1"},
  };
  return table;
}

INSTANTIATE_TEST_SUITE_P(Cases, OpsConvErrorTest, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(OpsConvDescriptors, Flops) {
  const ir::Node conv = make_node("conv", OpKind::kConv, attrs({{"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}}), 2);
  InferContext conv_ctx(conv, {{DType::kFloat32, {2, 4, 5, 5}, nullptr}, {DType::kFloat32, {6, 2, 3, 3}, nullptr}});
  ASSERT_TRUE(op_descriptor(OpKind::kConv).infer(conv_ctx).is_ok());
  EXPECT_EQ(op_descriptor(OpKind::kConv).flops(conv_ctx), 2 * (2 * 6 * 5 * 5) * (2 * 3 * 3));

  const ir::Node gemm = make_node("gemm", OpKind::kGemm, attrs({{"transA", int64_t{1}}}), 2);
  InferContext gemm_ctx(gemm, {{DType::kFloat32, {7, 3}, nullptr}, {DType::kFloat32, {7, 4}, nullptr}});
  ASSERT_TRUE(op_descriptor(OpKind::kGemm).infer(gemm_ctx).is_ok());
  EXPECT_EQ(op_descriptor(OpKind::kGemm).flops(gemm_ctx), 2 * 3 * 4 * 7);

  const ir::Node matmul = make_node("matmul", OpKind::kMatMul, {}, 2);
  InferContext matmul_ctx(matmul, {{DType::kFloat32, {2, 1, 4, 5}, nullptr}, {DType::kFloat32, {3, 5, 6}, nullptr}});
  ASSERT_TRUE(op_descriptor(OpKind::kMatMul).infer(matmul_ctx).is_ok());
  EXPECT_EQ(op_descriptor(OpKind::kMatMul).flops(matmul_ctx), 2 * (2 * 3) * 4 * 6 * 5);
}

TEST(OpsConvDescriptors, DefaultsAndRequiredAttributes) {
  const OpDescriptor& pool = op_descriptor(OpKind::kMaxPool);
  bool kernel_required = false;
  for (const AttrSpec& a : pool.attrs)
    if (std::string(a.name) == "kernel_shape") kernel_required = a.presence == AttrPresence::kRequired;
  EXPECT_TRUE(kernel_required);
  const ir::Node bn = make_node("bn", OpKind::kBatchNormalization, {}, 5);
  EXPECT_FLOAT_EQ(bn.attrs.get_float("epsilon"), 1e-5f);
  EXPECT_FLOAT_EQ(bn.attrs.get_float("momentum"), 0.9f);
  const ir::Node lrn = make_node("lrn", OpKind::kLRN, attrs({{"size", int64_t{5}}}), 1);
  EXPECT_FLOAT_EQ(lrn.attrs.get_float("alpha"), 1e-4f);
  EXPECT_FLOAT_EQ(lrn.attrs.get_float("beta"), 0.75f);
  EXPECT_FLOAT_EQ(lrn.attrs.get_float("bias"), 1.0f);
  const ir::Node conv = make_node("conv", OpKind::kConv, {}, 2);
  EXPECT_EQ(conv.attrs.get_string("auto_pad"), "NOTSET");
  EXPECT_EQ(conv.attrs.get_int("group"), 1);
  EXPECT_FALSE(conv.attrs.has("strides"));  // rank-dependent: optional, no default
}

}  // namespace
}  // namespace ucudnn
