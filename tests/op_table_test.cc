// The op table: every case of tests/op_cases.h on every backend present
// (tests/support/backend_runner.h: the CPU; the GPU in FP32 and TF32 where
// there is one), each a one-node graph run through runtime::Executor and
// compared with the naive reference (tests/reference/). On the CPU a Conv case
// also runs with each CPU algorithm that applies to it (runtime/cpu/
// conv_algorithms.h). On the GPU a depthwise Conv case also runs channels-last (Note
// [channels-last]: the node as the pass leaves it, its output permuted back to NCHW for the
// reference), and with UCUDNN_DEPTHWISE (runtime/cuda/depthwise_conv.h) in both layouts.
// Tolerances are the backend's, the absolute one scaled by √(the longest sum behind an output
// element). A case a backend does not
// support (Unsupported from prepare or the executor) is a skip with the
// reason — except on the CPU, which must run every case. Also: every op has a
// case, and the cases every backend must reject fail with their code and a
// message naming the node (those refused at run time, on every backend).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "optimizer/passes/passes.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/conv_grad.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/lowered_ops.h"
#include "tests/op_cases.h"
#include "tests/reference/op_reference.h"
#include "tests/support/backend_runner.h"
#include "tests/support/channels_last_graph.h"
#include "tests/support/one_node_graph.h"
#include "tests/support/tensor_checks.h"
#ifdef UCUDNN_HAVE_CUDA
#include "runtime/cuda/depthwise_conv.h"
#endif

namespace ucudnn_test {
namespace {

using ucudnn::OpKind;
using ucudnn::Shape;
using ucudnn::Status;
using ucudnn::StatusCode;
namespace ir = ucudnn::ir;
namespace cpu = ucudnn::cpu;

// UCUDNN_DEPTHWISE's forward algorithm id on the CUDA backend (runtime/cuda/depthwise_conv.h).
constexpr int kCudaDepthwiseAlgorithm = 8;
#ifdef UCUDNN_HAVE_CUDA
static_assert(kCudaDepthwiseAlgorithm == ucudnn::cuda::kDepthwiseForwardAlgorithm);
#endif

// One test: a case on a backend, with a Conv algorithm.
struct OpRun {
  size_t backend = 0;   // into backend_configs()
  size_t op_case = 0;   // into op_cases()
  int algorithm = -1;   // Conv: a CpuConvAlgorithm, or on the GPU kCudaDepthwiseAlgorithm; -1 = the default
  std::string name;     // "<backend>_<case>[_nhwc][_<algorithm>|_interpreted]"
  bool channels_last = false;  // run channels-last: a depthwise Conv case (GPU); a Conv or pool case (CPU with oneDNN)
  // GPU FusedPointwise: with UCUDNN_POINTWISE_JIT=0, the interpreter's kernels (Note [generated pointwise
  // kernels]); the run without it takes the generated ones where NVRTC is found.
  bool interpreted = false;
};

// Sets an environment variable for a scope, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void PrintTo(const OpRun& run, std::ostream* os) { *os << run.name; }

// The CPU algorithms that apply to a convolution case (Conv: conv_problem on its shapes; the backward
// directions: conv_grad_problem).
std::vector<int> cpu_algorithms_for(const OpCase& c) {
  std::vector<int> algorithms;
  const ir::Node node = make_node(c.name, c.op, c.attrs, c.inputs.size(), c.outputs, c.opset);
  if (c.op == OpKind::kConv) {
    auto problem = cpu::conv_problem(node, c.inputs[0].shape, c.inputs[1].shape);
    if (!problem) return algorithms;  // a malformed case fails in its default run
    for (int a = 0; a < cpu::kNumCpuConvAlgorithms; ++a)
      if (cpu::conv_algorithm_applies(*problem, a)) algorithms.push_back(a);
    return algorithms;
  }
  auto problem = cpu::conv_grad_problem(node, {c.inputs[0].shape, c.inputs[1].shape});
  if (!problem) return algorithms;
  for (int a = 0; a < cpu::cpu_algorithm_count(c.op); ++a)
    if (cpu::conv_grad_algorithm_applies(c.op, *problem, a)) algorithms.push_back(a);
  return algorithms;
}

const char* cpu_algorithm_name(OpKind op, int algorithm) {
  return op == OpKind::kConv ? cpu::cpu_conv_algorithm_name(algorithm) : cpu::cpu_conv_grad_algorithm_name(algorithm);
}

// A 2-D Conv with one input channel a group: UCUDNN_DEPTHWISE applies.
bool is_depthwise(const OpCase& c) {
  if (c.op != OpKind::kConv || c.inputs[0].shape.size() != 4 || c.inputs[1].shape.size() != 4) return false;
  const ir::Node node = make_node(c.name, c.op, c.attrs, c.inputs.size(), c.outputs, c.opset);
  return c.inputs[1].shape[1] == 1 && node.attrs.get_int("group") == c.inputs[0].shape[1];
}

// A pool the channels-last pass rewrites: a 2-D MaxPool without Indices, an AveragePool, a global
// pool of 4-D X. Both backends run these channels-last too.
bool is_channels_last_pool(const OpCase& c) {
  if (c.inputs.empty() || c.inputs[0].shape.size() != 4) return false;
  switch (c.op) {
    case OpKind::kMaxPool: return c.outputs == 1;
    case OpKind::kAveragePool: case OpKind::kGlobalAveragePool: case OpKind::kGlobalMaxPool: return true;
    default: return false;
  }
}

// A training op of 4-D X (and 4-D W or dY for the convolution gradients) that the channels-last pass
// rewrites (docs/TRAINING.md): the GPU runs these channels-last too.
bool is_channels_last_training(const OpCase& c) {
  if (!ucudnn::optimizer::is_training_layout_op(c.op) || c.inputs.empty() || c.inputs[0].shape.size() != 4) return false;
  if (c.op == OpKind::kConvGradData || c.op == OpKind::kConvGradFilter)
    return c.inputs.size() > 1 && c.inputs[1].shape.size() == 4;
  return true;
}

// A case the CPU also runs channels-last (a build with oneDNN): such a pool, or a 2-D Conv.
bool cpu_runs_channels_last(const OpCase& c) {
  if (!cpu::cpu_runs_channels_last() || c.inputs.empty() || c.inputs[0].shape.size() != 4) return false;
  if (c.op == OpKind::kConv) return c.inputs.size() > 1 && c.inputs[1].shape.size() == 4;
  return is_channels_last_pool(c);
}

// The CPU algorithms that apply to a Conv case run channels-last (oneDNN's and Winograd).
std::vector<int> cpu_nhwc_algorithms_for(const OpCase& c) {
  std::vector<int> algorithms;
  ir::Node node = make_node(c.name, c.op, c.attrs, c.inputs.size(), c.outputs, c.opset);
  node.attrs.set(ir::kChannelsLastAttr, int64_t{1});
  auto problem = cpu::conv_problem(node, ir::nchw_to_nhwc(c.inputs[0].shape), ir::nchw_to_nhwc(c.inputs[1].shape));
  if (!problem) return algorithms;
  for (int a = 0; a < cpu::kNumCpuConvAlgorithms; ++a)
    if (cpu::conv_algorithm_applies(*problem, a)) algorithms.push_back(a);
  return algorithms;
}

const std::vector<OpRun>& op_runs() {
  static const std::vector<OpRun> runs = [] {
    std::vector<OpRun> all;
    for (size_t b = 0; b < backend_configs().size(); ++b) {
      const BackendConfig& config = backend_configs()[b];
      for (size_t i = 0; i < op_cases().size(); ++i) {
        const OpCase& c = op_cases()[i];
        const std::string name = config.name + "_" + c.name;
        all.push_back({b, i, -1, name});
        if (config.kind == BackendConfig::Kind::kCpu && cpu_runs_channels_last(c)) {
          all.push_back({b, i, -1, name + "_nhwc", true});
          if (c.op == OpKind::kConv)
            for (int a : cpu_nhwc_algorithms_for(c))
              all.push_back({b, i, a, name + "_nhwc_" + cpu::cpu_conv_algorithm_name(a), true});
        }
        if (config.kind == BackendConfig::Kind::kCuda && (is_channels_last_pool(c) || is_channels_last_training(c)))
          all.push_back({b, i, -1, name + "_nhwc", true});
        if (config.kind == BackendConfig::Kind::kCuda && c.op == OpKind::kFusedPointwise)
          all.push_back({b, i, -1, name + "_interpreted", false, true});
        if (config.kind == BackendConfig::Kind::kCuda && is_depthwise(c)) {
          all.push_back({b, i, -1, name + "_nhwc", true});
          all.push_back({b, i, kCudaDepthwiseAlgorithm, name + "_UCUDNN_DEPTHWISE"});
          all.push_back({b, i, kCudaDepthwiseAlgorithm, name + "_nhwc_UCUDNN_DEPTHWISE", true});
        }
        if (!ir::is_convolution(make_node(c.name, c.op, c.attrs, c.inputs.size(), c.outputs, c.opset)) ||
            config.kind != BackendConfig::Kind::kCpu)
          continue;
        for (int a : cpu_algorithms_for(c))
          all.push_back({b, i, a, config.name + "_" + c.name + "_" + cpu_algorithm_name(c.op, a)});
      }
    }
    return all;
  }();
  return runs;
}

// Length of the longest sum behind one output element of `node` (scales atol).
int64_t reduction_length(const ir::Graph& graph, const ir::Node& node) {
  if (node.inputs.empty()) return 1;  // Constant
  const Shape& x = graph.value(node.inputs[0]).shape;
  const Shape& y = graph.value(node.outputs[0]).shape;
  switch (node.op) {
    case OpKind::kConv: {
      const Shape& w = graph.value(node.inputs[1]).shape;
      return ucudnn::shape_numel(Shape(w.begin() + 1, w.end()));
    }
    case OpKind::kConvGradData: case OpKind::kConvTranspose: {  // Σ over the filters of a group and the taps
      const Shape& w = graph.value(node.inputs[1]).shape;
      return w[0] / node.attrs.get_int("group") * ucudnn::shape_numel(Shape(w.begin() + 2, w.end()));
    }
    case OpKind::kConvGradFilter: {  // Σ over the samples and output positions
      const Shape& dy = graph.value(node.inputs[1]).shape;
      return ucudnn::shape_numel(dy) / std::max<int64_t>(1, dy[1]);
    }
    case OpKind::kGemm: return node.attrs.get_int("transA") != 0 ? x[0] : x[1];
    case OpKind::kMatMul: return x.back();
    case OpKind::kEinsum: {  // lowered: the sum of its MatMul (or ReduceSum) over the graph's nodes
      int64_t length = 1;
      for (const ir::Node& n : graph.nodes)
        if (n.op == OpKind::kMatMul || n.op == OpKind::kReduceSum)
          length = std::max(length, n.op == OpKind::kMatMul ? reduction_length(graph, n)
                                                             : ucudnn::shape_numel(graph.value(n.inputs[0]).shape));
      return length;
    }
    case OpKind::kAveragePool: return ucudnn::shape_numel(node.attrs.get_ints("kernel_shape"));
    case OpKind::kGlobalAveragePool: return ucudnn::shape_numel(Shape(x.begin() + 2, x.end()));
    case OpKind::kLRN: return node.attrs.get_int("size");
    case OpKind::kReduceMean: return ucudnn::shape_numel(x) / std::max<int64_t>(1, ucudnn::shape_numel(y));
    case OpKind::kSoftmax: case OpKind::kLogSoftmax: {
      const auto rank = static_cast<int64_t>(x.size());
      int64_t axis = node.attrs.has("axis") ? node.attrs.get_int("axis") : (node.opset < 13 ? 1 : -1);
      if (axis < 0) axis += rank;
      return node.opset < 13 ? ucudnn::shape_numel(Shape(x.begin() + axis, x.end())) : x[axis];
    }
    default: return 1;
  }
}

Tolerance tolerance_for(const BackendConfig& config, const ir::Graph& graph, const ir::Node& node) {
  const bool product = ir::is_convolution(node) || node.op == OpKind::kGemm || node.op == OpKind::kMatMul ||
                       node.op == OpKind::kEinsum;  // a MatMul once lowered
  const Tolerance base = product ? config.product_tolerance : config.tolerance;
  const double length = static_cast<double>(std::max<int64_t>(1, reduction_length(graph, node)));
  return {base.atol * std::sqrt(length), base.rtol};
}

class OpTable : public ::testing::TestWithParam<OpRun> {};

TEST_P(OpTable, MatchesReference) {
  const OpRun& run = GetParam();
  const BackendConfig& config = backend_configs()[run.backend];
  const OpCase& c = op_cases()[run.op_case];
  const SharedBackend shared = shared_backend(config);
  if (!shared.skip_reason.empty()) GTEST_SKIP() << shared.skip_reason;
  ASSERT_TRUE(shared.error.is_ok()) << config.name << " did not start: " << shared.error.to_string();

  auto built = make_one_node_graph(c.name, c.op, c.opset, c.inputs, c.attrs, c.outputs, seed_for(c.name));
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  const ir::Graph& graph = built->graph;
  if (c.expected_shape) {
    EXPECT_EQ(graph.value(graph.outputs[0]).shape, *c.expected_shape) << "shape rule of " << c.name;
  }

  auto want = ucudnn::reference::reference_outputs(built->node(), built->node_inputs());
  ASSERT_TRUE(want.has_value()) << want.status().to_string();
  ASSERT_EQ(want->size(), graph.outputs.size()) << "outputs of the reference";
  for (size_t o = 0; o < want->size(); ++o)
    EXPECT_EQ((*want)[o].shape(), graph.value(graph.outputs[o]).shape)
        << "output " << o << ": the reference and the shape rule disagree";

  RunOptions options;
  options.conv_algorithm = run.algorithm;
  for (int64_t size : c.micro_batches) options.micro_batches.push_back({size, run.algorithm});
  const OneNodeGraph nhwc = run.channels_last ? to_channels_last(*built) : OneNodeGraph{};
  const OneNodeGraph& ran = run.channels_last ? nhwc : *built;
  std::optional<ScopedEnv> interpreted;
  if (run.interpreted) interpreted.emplace("UCUDNN_POINTWISE_JIT", "0");
  auto got = run_on_backend(*shared.backend, ran.graph, ran.feeds, options);
  if (!got && got.status().code() == StatusCode::kUnsupported && !config.runs_every_case)
    GTEST_SKIP() << config.name << " does not support " << c.name << ": " << got.status().message();
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  if (run.channels_last)
    for (ucudnn::Tensor& t : *got)
      if (t.rank() == 4) t = to_nchw(t);  // every 4-D output ran NHWC
  expect_close(*got, *want, tolerance_for(config, graph, built->node()), run.name);
}

INSTANTIATE_TEST_SUITE_P(Backends, OpTable, ::testing::ValuesIn(op_runs()),
                         [](const ::testing::TestParamInfo<OpRun>& info) { return info.param.name; });

// --- coverage -------------------------------------------------------------------

TEST(OpTableCoverage, EveryOpHasACase) {
  std::vector<int> cases_per_op(static_cast<size_t>(OpKind::kCount), 0);
  for (const OpCase& c : op_cases()) ++cases_per_op[static_cast<size_t>(c.op)];
  for (int k = 0; k < static_cast<int>(OpKind::kCount); ++k)
    EXPECT_GT(cases_per_op[static_cast<size_t>(k)], 0)
        << ucudnn::op_name(static_cast<OpKind>(k)) << " (runtime/ir/op_list.h) has no case in tests/op_cases*.cc";
}

TEST(OpTableCoverage, EveryCpuConvAlgorithmRunsSeveralCases) {
  std::vector<int> runs_per_algorithm(cpu::kNumCpuConvAlgorithms, 0);
  int micro_batched = 0;
  for (const OpRun& run : op_runs()) {
    if (run.algorithm < 0 || op_cases()[run.op_case].op != OpKind::kConv) continue;
    ++runs_per_algorithm[static_cast<size_t>(run.algorithm)];
    if (!op_cases()[run.op_case].micro_batches.empty()) ++micro_batched;
  }
  for (int a = 0; a < cpu::kNumCpuConvAlgorithms; ++a)
    if (cpu::cpu_conv_algorithm_available(a)) {  // a oneDNN algorithm applies nowhere without oneDNN
      EXPECT_GE(runs_per_algorithm[static_cast<size_t>(a)], 3) << cpu::cpu_conv_algorithm_name(a);
    }
  EXPECT_GE(micro_batched, cpu::kNumCpuConvAlgorithms) << "micro-batched cases with an explicit algorithm";
}

// With oneDNN the CPU runs Convs (among them depthwise, grouped, fused and micro-batched ones, with
// each oneDNN algorithm and Winograd) and every pool channels-last.
TEST(OpTableCoverage, CpuRunsConvolutionsAndPoolsChannelsLast) {
  if (!cpu::cpu_runs_channels_last()) GTEST_SKIP() << "this build has no oneDNN: the CPU runs NCHW only";
  std::map<OpKind, int> runs;
  int depthwise = 0, micro_batched = 0, plain = 0, blocked = 0, winograd = 0, winograd_residual_micro_batched = 0;
  for (const OpRun& run : op_runs()) {
    if (!run.channels_last || backend_configs()[run.backend].kind != BackendConfig::Kind::kCpu) continue;
    const OpCase& c = op_cases()[run.op_case];
    ++runs[c.op];
    if (c.op != OpKind::kConv) continue;
    depthwise += is_depthwise(c);
    micro_batched += !c.micro_batches.empty();
    plain += run.algorithm == static_cast<int>(cpu::CpuConvAlgorithm::kOnednnPlain);
    blocked += run.algorithm == static_cast<int>(cpu::CpuConvAlgorithm::kOnednnDirect);
    if (run.algorithm == static_cast<int>(cpu::CpuConvAlgorithm::kWinograd4x3)) {
      ++winograd;
      const bool residual = c.inputs.size() > ir::kConvResidualInput &&
                            c.inputs[ir::kConvResidualInput].dtype != ucudnn::DType::kUndefined;
      winograd_residual_micro_batched += residual && !c.micro_batches.empty();
    }
  }
  EXPECT_GE(runs[OpKind::kConv], 20);
  for (OpKind op : {OpKind::kMaxPool, OpKind::kAveragePool, OpKind::kGlobalAveragePool, OpKind::kGlobalMaxPool})
    EXPECT_GE(runs[op], 1) << ucudnn::op_name(op);
  EXPECT_GE(depthwise, 2);
  EXPECT_GE(micro_batched, 2);
  EXPECT_GE(plain, 5);
  EXPECT_GE(blocked, 5);
  EXPECT_GE(winograd, 5);
  EXPECT_GE(winograd_residual_micro_batched, 1);
}

// On the GPU, UCUDNN_DEPTHWISE runs depthwise cases in both layouts, among them ones with a bias,
// a residual input, a fused Relu and micro-batches.
TEST(OpTableCoverage, DepthwiseAlgorithmRunsBothLayouts) {
  int runs[2] = {0, 0}, fused_micro_batched[2] = {0, 0};  // per layout: NCHW, NHWC
  for (const OpRun& run : op_runs()) {
    if (run.algorithm != kCudaDepthwiseAlgorithm || backend_configs()[run.backend].kind != BackendConfig::Kind::kCuda)
      continue;
    const OpCase& c = op_cases()[run.op_case];
    ++runs[run.channels_last];
    const bool bias_z_relu = c.inputs.size() > ir::kConvResidualInput &&
                             c.inputs[2].dtype != ucudnn::DType::kUndefined &&
                             c.inputs[ir::kConvResidualInput].dtype != ucudnn::DType::kUndefined;
    const ir::Node node = make_node(c.name, c.op, c.attrs, c.inputs.size(), c.outputs, c.opset);
    fused_micro_batched[run.channels_last] += bias_z_relu && ir::fused_activation(node) == "Relu" &&
                                              !c.micro_batches.empty();
  }
  if (runs[0] + runs[1] == 0) GTEST_SKIP() << "this build has no CUDA backend";
  for (int layout = 0; layout < 2; ++layout) {
    EXPECT_GE(runs[layout], 5) << (layout ? "nhwc" : "nchw");
    EXPECT_GE(fused_micro_batched[layout], 2) << (layout ? "nhwc" : "nchw");
  }
}

// On the GPU every kind of pool also runs channels-last (cuDNN's, ours for what cuDNN cannot express,
// the global average pool's own kernel).
TEST(OpTableCoverage, CudaRunsPoolsChannelsLast) {
  std::map<OpKind, int> runs;
  for (const OpRun& run : op_runs())
    if (run.channels_last && backend_configs()[run.backend].kind == BackendConfig::Kind::kCuda)
      ++runs[op_cases()[run.op_case].op];
  if (runs.empty()) GTEST_SKIP() << "this build has no CUDA backend";
  for (OpKind op : {OpKind::kMaxPool, OpKind::kAveragePool, OpKind::kGlobalAveragePool, OpKind::kGlobalMaxPool})
    EXPECT_GE(runs[op], 2) << ucudnn::op_name(op);
}

// On the GPU every FusedPointwise case also runs interpreted (UCUDNN_POINTWISE_JIT=0), so both the
// generated kernels and the interpreter's are checked wherever NVRTC is found.
TEST(OpTableCoverage, FusedPointwiseRunsInterpretedOnTheGpu) {
  int interpreted = 0, cuda = 0;
  for (const OpRun& run : op_runs()) {
    if (backend_configs()[run.backend].kind != BackendConfig::Kind::kCuda) continue;
    ++cuda;
    interpreted += run.interpreted && op_cases()[run.op_case].op == OpKind::kFusedPointwise;
  }
  if (cuda == 0) GTEST_SKIP() << "this build has no CUDA backend";
  EXPECT_GE(interpreted, 40);
}

// A build without the CUDA backend says so once, as a skip, instead of silently running the CPU alone.
TEST(OpTableCoverage, CudaBackendIsInThisBuild) {
  for (const BackendConfig& config : backend_configs())
    if (config.kind == BackendConfig::Kind::kCuda) return;
  GTEST_SKIP() << "this build has no CUDA backend (configure with -DUCUDNN_CUDA=ON): the op table ran on the CPU only";
}

// --- cases every backend must reject ---------------------------------------------

bool is_lowered(OpKind op) {
#define UCUDNN_IS(name) op == OpKind::k##name ||
  return UCUDNN_FOR_EACH_LOWERED_OP(UCUDNN_IS) false;
#undef UCUDNN_IS
}

// The failure names the node and its op, with the expected code and phrase. A lowered op (Note [lowered
// ops], runtime/ops/lowered_ops.h) fails at run time in one of its pieces, named "<node>/<what>" with its own op.
void expect_rejected(const ErrorCase& e, const Status& status) {
  const OpCase& c = e.op_case;
  ASSERT_FALSE(status.is_ok()) << c.name << " was accepted";
  EXPECT_EQ(status.code(), e.code) << status.to_string();
  const bool piece = e.at_run && is_lowered(c.op);
  EXPECT_NE(status.message().find("node '" + c.name + (piece ? "/" : "'")), std::string::npos) << status.message();
  if (!piece) {
    EXPECT_NE(status.message().find(ucudnn::op_name(c.op)), std::string::npos) << status.message();
  }
  if (!e.mentions.empty()) {
    EXPECT_NE(status.message().find(e.mentions), std::string::npos) << status.message();
  }
}

std::vector<size_t> error_cases_where(bool at_run) {
  std::vector<size_t> indices;
  for (size_t i = 0; i < error_cases().size(); ++i)
    if (error_cases()[i].at_run == at_run) indices.push_back(i);
  return indices;
}

// Shape rules: refused while the graph is built, before any backend.
class OpErrors : public ::testing::TestWithParam<size_t> {};

TEST_P(OpErrors, FailWithCodeAndNodeName) {
  const ErrorCase& e = error_cases()[GetParam()];
  const OpCase& c = e.op_case;
  auto built = make_one_node_graph(c.name, c.op, c.opset, c.inputs, c.attrs, c.outputs, seed_for(c.name));
  expect_rejected(e, built.status());
}

INSTANTIATE_TEST_SUITE_P(Cases, OpErrors, ::testing::ValuesIn(error_cases_where(false)),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return error_cases()[info.param].op_case.name;
                         });

// Values only a run knows (an integer divisor of 0, a Gather index out of range): every backend
// refuses them, none answers garbage.
struct ErrorRun {
  size_t backend = 0;     // into backend_configs()
  size_t error_case = 0;  // into error_cases()
  std::string name;       // "<backend>_<case>"
};

void PrintTo(const ErrorRun& run, std::ostream* os) { *os << run.name; }

std::vector<ErrorRun> error_runs() {
  std::vector<ErrorRun> runs;
  for (size_t b = 0; b < backend_configs().size(); ++b)
    for (size_t i : error_cases_where(true))
      runs.push_back({b, i, backend_configs()[b].name + "_" + error_cases()[i].op_case.name});
  return runs;
}

class OpRunErrors : public ::testing::TestWithParam<ErrorRun> {};

TEST_P(OpRunErrors, FailWithCodeAndNodeName) {
  const ErrorRun& run = GetParam();
  const BackendConfig& config = backend_configs()[run.backend];
  const ErrorCase& e = error_cases()[run.error_case];
  const OpCase& c = e.op_case;
  const SharedBackend shared = shared_backend(config);
  if (!shared.skip_reason.empty()) GTEST_SKIP() << shared.skip_reason;
  ASSERT_TRUE(shared.error.is_ok()) << config.name << " did not start: " << shared.error.to_string();
  auto built = make_one_node_graph(c.name, c.op, c.opset, c.inputs, c.attrs, c.outputs, seed_for(c.name));
  ASSERT_TRUE(built.has_value()) << "the shape rule should accept it: " << built.status().to_string();
  expect_rejected(e, run_on_backend(*shared.backend, built->graph, built->feeds).status());
}

INSTANTIATE_TEST_SUITE_P(Backends, OpRunErrors, ::testing::ValuesIn(error_runs()),
                         [](const ::testing::TestParamInfo<ErrorRun>& info) { return info.param.name; });

}  // namespace
}  // namespace ucudnn_test
