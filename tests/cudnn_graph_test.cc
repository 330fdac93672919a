// cuDNN graph-API engine configurations as Conv's forward algorithms kGraphEngineBase + position
// (runtime/cuda/cudnn_graph.h), on a real GPU:
//  - every engine configuration the graph API offers for several convolutions (1×1, 3×3, 7×7
//    stride 2; groups 1 and 32; N 1 and 8; samples of an odd number of floats, so micro-batch
//    pointers only 4-byte aligned; bias, residual z and Relu) matches the double-precision reference
//    (tests/reference/conv_reference.h, computed NCHW), in NCHW and NHWC, in strict FP32 (which must
//    leave the TF32 engines out: the FP32 tolerance catches them) and with TF32, whole and as
//    micro-batches; the positions offered are a prefix of the ids and include the first;
//  - a prepared graph id names its engine ("ENGINE_<global index>"), a legacy one does not;
//  - ids that are no algorithm (between UCUDNN_DEPTHWISE and the graph's, past the graph's) are
//    refused with an error, as are positions beyond what the graph API offers (Unsupported);
//  - UCUDNN_GRAPH_ENGINES=0 refuses every graph id (legacy ids still run), and unsetting it brings
//    them back.
// Every test skips, saying so, without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/cudnn_graph.h"
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

constexpr int kFirstGraphId = cuda::kGraphEngineBase;
constexpr int kGraphIdEnd = cuda::kGraphEngineBase + cuda::kMaxGraphEngineConfigs;

bool have_gpu() { return cuda::device_count() > 0; }

runtime::Backend* gpu(const BackendConfig& config) {
  const SharedBackend shared = shared_backend(config);
  EXPECT_TRUE(shared.error.is_ok()) << shared.error.to_string();
  return shared.backend;
}

// Sets UCUDNN_GRAPH_ENGINES for its lifetime, then removes it.
class GraphEnginesSwitch {
 public:
  explicit GraphEnginesSwitch(const char* value) { setenv("UCUDNN_GRAPH_ENGINES", value, 1); }
  ~GraphEnginesSwitch() { unsetenv("UCUDNN_GRAPH_ENGINES"); }
  GraphEnginesSwitch(const GraphEnginesSwitch&) = delete;
  GraphEnginesSwitch& operator=(const GraphEnginesSwitch&) = delete;
};

// A Conv: X [n, c, h, w], W [k, c / group, r, r], square stride and symmetric pad.
struct GraphCase {
  const char* name;
  int64_t n, c, h, w, k, r, stride, pad, group;
  bool bias, z, relu;
};

void PrintTo(const GraphCase& c, std::ostream* os) { *os << c.name; }

// The columns are: name; n, c, h, w, k, r, stride, pad, group; bias, z, relu.
const std::vector<GraphCase>& cases() {
  static const std::vector<GraphCase> all = {
      {"k1_n8", 8, 64, 14, 14, 128, 1, 1, 0, 1, true, false, false},
      {"k3_n8_epilogue", 8, 64, 14, 14, 64, 3, 1, 1, 1, true, true, true},
      {"k7_s2_n8_c3", 8, 3, 32, 32, 16, 7, 2, 3, 1, true, false, true},
      {"k7_s2_n1", 1, 16, 20, 20, 32, 7, 2, 3, 1, false, false, false},
      {"k3_g32_n8", 8, 64, 12, 12, 64, 3, 1, 1, 32, true, false, true},
      {"k3_s2_g32_n1", 1, 128, 9, 9, 64, 3, 2, 1, 32, true, true, false},
      // 3·7·7 and 5·7·7 floats a sample: micro-batch pointers are only 4-byte aligned.
      {"k3_odd_sample_n8", 8, 3, 7, 7, 5, 3, 1, 1, 1, true, true, true},
  };
  return all;
}

OneNodeGraph build(const GraphCase& c) {
  const int64_t out = (c.h + 2 * c.pad - c.r) / c.stride + 1;
  const int64_t out_w = (c.w + 2 * c.pad - c.r) / c.stride + 1;
  std::vector<InputSpec> inputs = {input({c.n, c.c, c.h, c.w}), weight({c.k, c.c / c.group, c.r, c.r})};
  if (c.bias || c.z) inputs.push_back(c.bias ? weight({c.k}) : absent());
  if (c.z) inputs.push_back(input({c.n, c.k, out, out_w}));
  AttrList attrs = {{"group", c.group}, {"pads", IntList{c.pad, c.pad, c.pad, c.pad}},
                    {"strides", IntList{c.stride, c.stride}}};
  if (c.relu) attrs.push_back({"activation", std::string("Relu")});
  auto built = make_one_node_graph(c.name, OpKind::kConv, 18, inputs, attrs, 1, seed_for(c.name));
  EXPECT_TRUE(built.has_value()) << built.status().to_string();
  return built ? std::move(*built) : OneNodeGraph{};
}

RunOptions with_algorithm(int algorithm, const IntList& micro_batches = {}) {
  RunOptions options;
  options.conv_algorithm = algorithm;
  for (int64_t size : micro_batches) options.micro_batches.push_back({size, algorithm});
  return options;
}

// Y of `graph` on the GPU, in NCHW whatever the graph's layout.
ucudnn::Expected<Tensor> run_gpu(runtime::Backend& backend, const OneNodeGraph& graph, bool nhwc,
                                 const RunOptions& options) {
  UCUDNN_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, run_on_backend(backend, graph.graph, graph.feeds, options));
  return nhwc ? to_nchw(outputs[0]) : std::move(outputs[0]);
}

class GraphEngines : public ::testing::TestWithParam<GraphCase> {};

TEST_P(GraphEngines, EveryOfferedEngineMatchesTheReference) {
  if (!have_gpu()) GTEST_SKIP() << kNoCudaDevice;
  if (!cuda::graph_engines_enabled()) GTEST_SKIP() << "UCUDNN_GRAPH_ENGINES=0 is set";
  const GraphCase& c = GetParam();
  const OneNodeGraph built = build(c);
  ASSERT_FALSE(built.graph.nodes.empty());
  const Tensor want = ucudnn::reference::reference_conv(built.node(), built.node_inputs());
  const double taps = static_cast<double>(c.c / c.group * c.r * c.r);
  for (const char* config_name : {"cuda_fp32", "cuda_tf32"}) {
    const BackendConfig& config = backend_config(config_name);
    runtime::Backend* backend = gpu(config);
    ASSERT_NE(backend, nullptr);
    // The op table's product tolerance, the absolute part scaled by √(taps of a window).
    const Tolerance tolerance{config.product_tolerance.atol * std::sqrt(taps), config.product_tolerance.rtol};
    for (bool nhwc : {false, true}) {
      const std::string what = std::string(c.name) + " " + config_name + (nhwc ? " nhwc" : " nchw");
      SCOPED_TRACE(what);
      const OneNodeGraph graph = nhwc ? to_channels_last(built) : built;
      int offered = 0;
      for (int id = kFirstGraphId; id < kGraphIdEnd; ++id) {
        auto plan = make_plan(*backend, graph.graph, with_algorithm(id));
        if (!plan) {
          EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported) << plan.status().to_string();
          continue;
        }
        EXPECT_EQ(offered, id - kFirstGraphId) << "the offered positions are a prefix of the graph ids";
        ++offered;
        auto got = run_gpu(*backend, graph, nhwc, with_algorithm(id));
        ASSERT_TRUE(got.has_value()) << "graph id " << id << ": " << got.status().to_string();
        expect_close(*got, want, tolerance, what + ", graph id " + std::to_string(id));
      }
      EXPECT_GE(offered, 1) << "the graph API's first engine configuration applies to every float convolution";
      if (c.n >= 4) {  // the executor's calls on slices of X, z and Y, each with its own engine list
        auto divided = run_gpu(*backend, graph, nhwc, with_algorithm(kFirstGraphId, {3, c.n - 3}));
        ASSERT_TRUE(divided.has_value()) << divided.status().to_string();
        expect_close(*divided, want, tolerance, what + ", micro-batches 3 + " + std::to_string(c.n - 3));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GraphEngines, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<GraphCase>& info) { return std::string(info.param.name); });

// The cases cover what the brief of the graph path names.
TEST(GraphEngineCases, CoverWindowsGroupsAndBatches) {
  bool k1 = false, k3 = false, k7_s2 = false, g1 = false, g32 = false, n1 = false, n8 = false;
  for (const GraphCase& c : cases()) {
    k1 |= c.r == 1;
    k3 |= c.r == 3;
    k7_s2 |= c.r == 7 && c.stride == 2;
    g1 |= c.group == 1;
    g32 |= c.group == 32;
    n1 |= c.n == 1;
    n8 |= c.n == 8;
  }
  for (bool covered : {k1, k3, k7_s2, g1, g32, n1, n8}) EXPECT_TRUE(covered);
}

// A prepared graph id names its engine; a legacy algorithm has no such name.
TEST(GraphEngineNames, PreparedGraphIdsNameTheirEngine) {
  if (!have_gpu()) GTEST_SKIP() << kNoCudaDevice;
  if (!cuda::graph_engines_enabled()) GTEST_SKIP() << "UCUDNN_GRAPH_ENGINES=0 is set";
  auto ctx = cuda::CudaContext::create(0, cuda::MathMode::kTf32);
  ASSERT_TRUE(ctx.has_value()) << ctx.status().to_string();
  const OneNodeGraph built = build(cases()[1]);
  ASSERT_FALSE(built.graph.nodes.empty());
  const ucudnn::ir::Node& node = built.node();
  std::vector<ucudnn::Shape> src_shapes, dst_shapes;
  for (ucudnn::ir::ValueId v : node.inputs) src_shapes.push_back(built.graph.value(v).shape);
  for (ucudnn::ir::ValueId v : node.outputs) dst_shapes.push_back(built.graph.value(v).shape);
  const cuda::CudaKernel& kernel = cuda::cuda_kernel(OpKind::kConv);
  ASSERT_NE(kernel.prepare, nullptr);
  auto prepare = [&](int algorithm) {
    return kernel.prepare(cuda::PrepareArgs{**ctx, built.graph, node, src_shapes, dst_shapes, algorithm});
  };
  auto graph_state = prepare(kFirstGraphId);
  ASSERT_TRUE(graph_state.has_value()) << graph_state.status().to_string();
  const std::string name = (*graph_state)->algorithm_name();
  EXPECT_EQ(name.rfind("ENGINE_", 0), 0u) << name;
  EXPECT_GT(name.size(), std::string("ENGINE_").size()) << name;
  auto legacy_state = prepare(0);
  ASSERT_TRUE(legacy_state.has_value()) << legacy_state.status().to_string();
  EXPECT_EQ((*legacy_state)->algorithm_name(), "");
}

// Ids that are no algorithm are refused with an error naming the node; so is every graph id with
// UCUDNN_GRAPH_ENGINES=0, until it is unset.
TEST(GraphEngineRefusals, NonIdsAndTheSwitch) {
  if (!have_gpu()) GTEST_SKIP() << kNoCudaDevice;
  runtime::Backend* backend = gpu(backend_config("cuda_fp32"));
  ASSERT_NE(backend, nullptr);
  const OneNodeGraph built = build(cases()[1]);
  ASSERT_FALSE(built.graph.nodes.empty());
  std::vector<int> non_ids = {kGraphIdEnd, kGraphIdEnd + 7};
  for (int id = cuda::kForwardAlgorithmCount; id < kFirstGraphId; ++id) non_ids.push_back(id);
  for (int id : non_ids) {
    auto plan = make_plan(*backend, built.graph, with_algorithm(id));
    ASSERT_FALSE(plan.has_value()) << "algorithm " << id << " was prepared";
    EXPECT_NE(plan.status().message().find("no forward algorithm " + std::to_string(id)), std::string::npos)
        << plan.status().message();
    EXPECT_NE(plan.status().message().find("node '" + std::string(cases()[1].name) + "'"), std::string::npos)
        << plan.status().message();
  }
  {
    GraphEnginesSwitch off("0");
    EXPECT_FALSE(cuda::graph_engines_enabled());
    for (int id = kFirstGraphId; id < kGraphIdEnd; ++id) {
      auto plan = make_plan(*backend, built.graph, with_algorithm(id));
      ASSERT_FALSE(plan.has_value()) << "graph id " << id << " was prepared with UCUDNN_GRAPH_ENGINES=0";
      EXPECT_EQ(plan.status().code(), StatusCode::kUnsupported) << plan.status().to_string();
      EXPECT_NE(plan.status().message().find("UCUDNN_GRAPH_ENGINES=0"), std::string::npos)
          << plan.status().message();
    }
    EXPECT_TRUE(make_plan(*backend, built.graph, with_algorithm(0)).has_value()) << "legacy algorithms still run";
  }
  {
    GraphEnginesSwitch on("1");
    EXPECT_TRUE(cuda::graph_engines_enabled());
    auto plan = make_plan(*backend, built.graph, with_algorithm(kFirstGraphId));
    EXPECT_TRUE(plan.has_value()) << plan.status().to_string();
  }
  EXPECT_TRUE(cuda::graph_engines_enabled()) << "unset is on";
}

}  // namespace
}  // namespace ucudnn_test
