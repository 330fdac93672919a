// UCUDNN_DEPTHWISE, Conv's own forward algorithm on the GPU (runtime/cuda/depthwise_conv.h):
//  - on many depthwise shapes (3×3, 5×5, 7×7 and other windows; strides 1, 2, 3; pads, also
//    unequal ones and pads wider than the window; dilation 2; C from 1 to 960; batch 1 and 5;
//    odd and even sizes; channel multiplier 2; with and without bias, residual z and Relu), in
//    NCHW and NHWC, whole and as micro-batches, it matches the double-precision reference
//    (tests/reference/conv_reference.h, computed NCHW) and cuDNN's IMPLICIT_GEMM (algorithm 0);
//  - prepared for a Conv that is not depthwise (or not 2-D), it answers Unsupported naming the
//    node and the algorithm, as cuDNN's algorithms answer for problems they do not have.
// Every test skips, saying so, without a GPU (the strict-FP32 backend of the op table).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/depthwise_conv.h"
#include "tests/reference/conv_reference.h"
#include "tests/support/backend_runner.h"
#include "tests/support/channels_last_graph.h"
#include "tests/support/one_node_graph.h"
#include "tests/support/tensor_checks.h"

namespace ucudnn_test {
namespace {

using ucudnn::OpKind;
using ucudnn::StatusCode;
using ucudnn::Tensor;
using IntList = std::vector<int64_t>;
namespace cuda = ucudnn::cuda;
namespace runtime = ucudnn::runtime;

constexpr int kDepthwise = cuda::kDepthwiseForwardAlgorithm;
constexpr int kImplicitGemm = 0;  // CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM

bool have_gpu() { return cuda::device_count() > 0; }

// The strict-FP32 GPU backend shared with the op table; nullptr (after a failure) when it did not start.
runtime::Backend* gpu_fp32() {
  const SharedBackend shared = shared_backend(backend_config("cuda_fp32"));
  EXPECT_TRUE(shared.error.is_ok()) << shared.error.to_string();
  return shared.backend;
}

// A depthwise Conv: X [n, c, h, w], W [c·multiplier, 1, r, s]; pads (top, left, bottom, right).
struct DwCase {
  const char* name;
  int64_t n, c, multiplier, h, w, r, s;
  IntList pads, strides, dilations;
  bool bias, z, relu;
};

void PrintTo(const DwCase& c, std::ostream* os) { *os << c.name; }

int64_t output_size(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pads) {
  return (in + pads - ((kernel - 1) * dilation + 1)) / stride + 1;
}

// The columns are: name; n, c, multiplier, h, w, r, s; pads; strides; dilations; bias, z, relu.
const std::vector<DwCase>& cases() {
  static const std::vector<DwCase> all = {
      // Tiled 3×3 (stride 1 and 2 along W), float4 channels (C % 4 == 0) and scalar ones.
      {"k3_s1_c16", 5, 16, 1, 12, 11, 3, 3, {1, 1, 1, 1}, {1, 1}, {1, 1}, true, true, true},
      {"k3_s2_c96", 5, 96, 1, 14, 13, 3, 3, {1, 1, 1, 1}, {2, 2}, {1, 1}, true, false, true},
      {"k3_s1_c3_odd", 1, 3, 1, 9, 7, 3, 3, {1, 1, 1, 1}, {1, 1}, {1, 1}, false, true, false},
      {"k3_s2_c1_no_pads", 5, 1, 1, 10, 8, 3, 3, {0, 0, 0, 0}, {2, 2}, {1, 1}, true, false, false},
      {"k3_s1_c960", 5, 960, 1, 7, 7, 3, 3, {1, 1, 1, 1}, {1, 1}, {1, 1}, true, true, true},
      {"k3_stride_2x1_c96", 1, 96, 1, 8, 9, 3, 3, {1, 1, 1, 1}, {2, 1}, {1, 1}, true, true, true},
      {"k3_dilation_2x1_c16", 5, 16, 1, 10, 9, 3, 3, {2, 1, 2, 1}, {1, 1}, {2, 1}, true, true, false},
      {"k3_c4_wide_row", 1, 4, 1, 3, 37, 3, 3, {1, 1, 1, 1}, {1, 1}, {1, 1}, true, true, true},
      {"k3_pads_past_window", 1, 16, 1, 4, 4, 3, 3, {3, 3, 3, 3}, {1, 1}, {1, 1}, true, true, true},
      // Tiled 5×5.
      {"k5_s1_c16", 1, 16, 1, 10, 10, 5, 5, {2, 2, 2, 2}, {1, 1}, {1, 1}, true, true, true},
      {"k5_s2_c96", 5, 96, 1, 15, 16, 5, 5, {2, 2, 2, 2}, {2, 2}, {1, 1}, true, false, true},
      {"k5_s2_c3_unequal_pads", 5, 3, 1, 11, 12, 5, 5, {1, 2, 2, 1}, {2, 2}, {1, 1}, false, true, true},
      {"k5_s2_c960", 1, 960, 1, 9, 9, 5, 5, {2, 2, 2, 2}, {2, 2}, {1, 1}, true, false, true},
      {"k5_s1_c16_begin_pads_only", 5, 16, 1, 8, 9, 5, 5, {2, 2, 0, 0}, {1, 1}, {1, 1}, true, true, false},
      // The plain kernel: other windows, strides, dilations along W.
      {"k7_s1_c16", 1, 16, 1, 9, 10, 7, 7, {3, 3, 3, 3}, {1, 1}, {1, 1}, true, true, true},
      {"k7_s2_c3", 5, 3, 1, 12, 11, 7, 7, {3, 3, 3, 3}, {2, 2}, {1, 1}, false, false, true},
      {"k3_dilation2_c16", 5, 16, 1, 11, 12, 3, 3, {2, 2, 2, 2}, {1, 1}, {2, 2}, true, true, true},
      {"k5_dilation2_s2_c3", 1, 3, 1, 13, 14, 5, 5, {4, 4, 4, 4}, {2, 2}, {2, 2}, true, false, false},
      {"k3_s3_c16", 5, 16, 1, 13, 14, 3, 3, {1, 1, 1, 1}, {3, 3}, {1, 1}, false, false, false},
      {"k3x5_c16", 5, 16, 1, 8, 10, 3, 5, {1, 2, 1, 2}, {1, 1}, {1, 1}, true, true, true},
      {"k1_c16", 5, 16, 1, 6, 7, 1, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}, true, false, false},
      // Channel multiplier 2: output channel k reads input channel k / 2.
      {"k3_multiplier2_c3", 5, 3, 2, 8, 9, 3, 3, {1, 1, 1, 1}, {1, 1}, {1, 1}, true, true, true},
      {"k5_s2_multiplier2_c16", 1, 16, 2, 10, 11, 5, 5, {2, 2, 2, 2}, {2, 2}, {1, 1}, false, true, false},
      {"k7_multiplier2_c3", 5, 3, 2, 9, 8, 7, 7, {3, 3, 3, 3}, {1, 1}, {1, 1}, true, false, true},
  };
  return all;
}

// The NCHW graph of case `c` (Note [fused nodes]: bias, residual z, the Relu as the passes fuse them).
OneNodeGraph build(const DwCase& c) {
  const int64_t k = c.c * c.multiplier;
  const int64_t oh = output_size(c.h, c.r, c.strides[0], c.dilations[0], c.pads[0] + c.pads[2]);
  const int64_t ow = output_size(c.w, c.s, c.strides[1], c.dilations[1], c.pads[1] + c.pads[3]);
  std::vector<InputSpec> inputs = {input({c.n, c.c, c.h, c.w}), weight({k, 1, c.r, c.s})};
  if (c.bias || c.z) inputs.push_back(c.bias ? weight({k}) : absent());
  if (c.z) inputs.push_back(input({c.n, k, oh, ow}));
  AttrList attrs = {{"group", c.c}, {"pads", c.pads}, {"strides", c.strides}, {"dilations", c.dilations}};
  if (c.relu) attrs.push_back({"activation", std::string("Relu")});
  auto built = make_one_node_graph(c.name, OpKind::kConv, 18, inputs, attrs, 1, seed_for(c.name));
  EXPECT_TRUE(built.has_value()) << built.status().to_string();
  return built ? std::move(*built) : OneNodeGraph{};
}

// Y of `graph` on the GPU with `algorithm`, whole or as `micro_batches`, in NCHW whatever the graph's layout.
ucudnn::Expected<Tensor> run_gpu(runtime::Backend& backend, const OneNodeGraph& graph, bool nhwc, int algorithm,
                                 const IntList& micro_batches = {}) {
  RunOptions options;
  options.conv_algorithm = algorithm;
  for (int64_t size : micro_batches) options.micro_batches.push_back({size, algorithm});
  UCUDNN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, run_on_backend(backend, graph.graph, graph.feeds, options));
  return nhwc ? to_nchw(outputs[0]) : std::move(outputs[0]);
}

class DepthwiseConv : public ::testing::TestWithParam<DwCase> {};

TEST_P(DepthwiseConv, MatchesReferenceAndCudnnInBothLayouts) {
  if (!have_gpu()) GTEST_SKIP() << kNoCudaDevice;
  runtime::Backend* backend = gpu_fp32();
  ASSERT_NE(backend, nullptr);
  const DwCase& c = GetParam();
  const OneNodeGraph built = build(c);
  ASSERT_FALSE(built.graph.nodes.empty());
  const Tensor want = ucudnn::reference::reference_conv(built.node(), built.node_inputs());
  // The op table's FP32 product tolerance, the absolute part scaled by √(taps of a window).
  const Tolerance base = backend_config("cuda_fp32").product_tolerance;
  const Tolerance tolerance{base.atol * std::sqrt(static_cast<double>(c.r * c.s)), base.rtol};
  for (bool nhwc : {false, true}) {
    const std::string layout = nhwc ? "nhwc" : "nchw";
    SCOPED_TRACE(layout);
    const OneNodeGraph graph = nhwc ? to_channels_last(built) : built;
    auto ours = run_gpu(*backend, graph, nhwc, kDepthwise);
    ASSERT_TRUE(ours.has_value()) << ours.status().to_string();
    expect_close(*ours, want, tolerance, std::string(c.name) + " " + layout + " UCUDNN_DEPTHWISE vs reference");
    if (c.n >= 4) {  // the executor's calls on slices of X, z and Y
      auto divided = run_gpu(*backend, graph, nhwc, kDepthwise, {2, c.n - 3, 1});
      ASSERT_TRUE(divided.has_value()) << divided.status().to_string();
      expect_close(*divided, *ours, {0, 0}, std::string(c.name) + " " + layout + " micro-batches vs whole");
    }
    auto cudnn = run_gpu(*backend, graph, nhwc, kImplicitGemm);
    ASSERT_TRUE(cudnn.has_value()) << cudnn.status().to_string();
    expect_close(*ours, *cudnn, {2 * tolerance.atol, tolerance.rtol},
                 std::string(c.name) + " " + layout + " UCUDNN_DEPTHWISE vs IMPLICIT_GEMM");
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, DepthwiseConv, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<DwCase>& info) { return std::string(info.param.name); });

// The cases cover what the kernels distinguish.
TEST(DepthwiseConvCases, CoverTheShapesTheKernelsDistinguish) {
  bool k3 = false, k5 = false, k7 = false, stride2 = false, dilation2 = false, multiplier2 = false, batch1 = false,
       batch5 = false, c1 = false, c960 = false, odd = false, epilogue_all = false, epilogue_none = false;
  for (const DwCase& c : cases()) {
    k3 |= c.r == 3 && c.s == 3;
    k5 |= c.r == 5 && c.s == 5;
    k7 |= c.r == 7 && c.s == 7;
    stride2 |= c.strides == IntList{2, 2};
    dilation2 |= c.dilations == IntList{2, 2};
    multiplier2 |= c.multiplier == 2;
    batch1 |= c.n == 1;
    batch5 |= c.n == 5;
    c1 |= c.c == 1;
    c960 |= c.c == 960;
    odd |= c.h % 2 == 1 && c.w % 2 == 1;
    epilogue_all |= c.bias && c.z && c.relu;
    epilogue_none |= !c.bias && !c.z && !c.relu;
  }
  for (bool covered : {k3, k5, k7, stride2, dilation2, multiplier2, batch1, batch5, c1, c960, odd, epilogue_all,
                       epilogue_none})
    EXPECT_TRUE(covered);
}

// Prepared for a Conv it does not apply to, the algorithm is Unsupported (the benchmarker then
// marks it unavailable), the message naming the node and the algorithm.
TEST(DepthwiseConvErrors, NotDepthwiseIsUnsupported) {
  if (!have_gpu()) GTEST_SKIP() << kNoCudaDevice;
  runtime::Backend* backend = gpu_fp32();
  ASSERT_NE(backend, nullptr);
  struct Refused {
    const char* name;
    std::vector<InputSpec> inputs;
    AttrList attrs;
  };
  const std::vector<Refused> refused = {
      {"dense", {input({2, 4, 6, 6}), weight({4, 4, 3, 3})}, {}},
      {"two_channels_a_group", {input({2, 4, 6, 6}), weight({4, 2, 3, 3})}, {{"group", int64_t{2}}}},
      {"depthwise_1d", {input({2, 4, 9}), weight({4, 1, 3})}, {{"group", int64_t{4}}}},
  };
  for (const Refused& r : refused) {
    auto built = make_one_node_graph(r.name, OpKind::kConv, 18, r.inputs, r.attrs, 1, seed_for(r.name));
    ASSERT_TRUE(built.has_value()) << built.status().to_string();
    RunOptions options;
    options.conv_algorithm = kDepthwise;
    auto plan = make_plan(*backend, built->graph, options);
    ASSERT_FALSE(plan.has_value()) << r.name << " was prepared";
    EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported) << plan.status().to_string();
    EXPECT_NE(plan.status().message().find("node '" + std::string(r.name) + "'"), std::string::npos)
        << plan.status().message();
    EXPECT_NE(plan.status().message().find("UCUDNN_DEPTHWISE"), std::string::npos) << plan.status().message();
  }
}

}  // namespace
}  // namespace ucudnn_test
