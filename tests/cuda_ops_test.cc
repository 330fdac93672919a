// CUDA backend against the CPU backend: every op with a CUDA kernel runs on
// the same random inputs on both (one-node graphs through CpuExecutor and
// CudaExecutor), in strict FP32 and with TF32 allowed; a divided convolution
// (micro-batches 3 + 5) equals the undivided one on the GPU; the undivided
// plan picks an algorithm within the workspace limit; running on bound device
// buffers (CudaExecutor::run_bound, Session::run_on_device) gives bitwise the
// outputs of a host run, micro-batches included. GPU tests skip, saying
// so, where no GPU is present; the CPU half of every case still runs here so a
// malformed case fails in CI too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "runtime/cuda/cuda_executor.h"
#include "runtime/executor/cpu_executor.h"
#include "runtime/ops/op_descriptor.h"
#include "tests/test_paths.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::cuda {
namespace {

struct Input {
  Shape shape;
  DType dtype = DType::kFloat32;
  bool constant = false;
  std::vector<float> floats;   // given values (else random in [lo, hi])
  std::vector<int64_t> ints;   // given int64 values
  float lo = -1.0f, hi = 1.0f;
  bool absent = false;
};

struct Case {
  std::string name;
  OpKind op;
  std::vector<Input> inputs;
  std::function<void(ir::Attributes&)> attrs = [](ir::Attributes&) {};
  int outputs = 1;
  int opset = 18;
  bool tf32_sensitive = false;  // sums of products: TF32 tolerance applies
};

Input runtime(Shape s, float lo = -1, float hi = 1) { return Input{s, DType::kFloat32, false, {}, {}, lo, hi}; }
Input weight(Shape s, float lo = -1, float hi = 1) { return Input{s, DType::kFloat32, true, {}, {}, lo, hi}; }
Input ints(std::vector<int64_t> values) {
  return Input{{static_cast<int64_t>(values.size())}, DType::kInt64, true, {}, values};
}
Input scalar(float v) { return Input{{}, DType::kFloat32, true, {v}}; }
Input absent() { Input i; i.absent = true; return i; }

struct Built {
  ir::Graph graph;
  std::vector<Tensor> feeds;
};

Expected<Built> build(const Case& c, uint32_t seed) {
  Built b;
  ir::Graph& g = b.graph;
  g.name = c.name;
  std::mt19937 rng(seed);
  ir::Node node;
  node.name = c.name;
  node.op = c.op;
  node.opset = c.opset;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Input& in = c.inputs[i];
    if (in.absent) {
      node.inputs.push_back(ir::kNoValue);
      continue;
    }
    Tensor t;
    if (in.dtype == DType::kInt64) {
      t = Tensor::from_int64s(in.shape, in.ints);
    } else {
      std::vector<float> v = in.floats;
      std::uniform_real_distribution<float> dist(in.lo, in.hi);
      if (v.empty())
        for (int64_t k = 0; k < shape_numel(in.shape); ++k) v.push_back(dist(rng));
      t = Tensor::from_floats(in.shape, v);
    }
    ir::Value value{"in" + std::to_string(i), in.dtype, in.shape, std::nullopt, -1};
    if (in.constant) value.constant = t;
    const ir::ValueId id = g.add_value(value);
    if (!in.constant) {
      g.inputs.push_back(id);
      b.feeds.push_back(t);
    }
    node.inputs.push_back(id);
  }
  for (const AttrSpec& spec : op_descriptor(c.op).attrs)
    if (spec.default_value) node.attrs.set(spec.name, *spec.default_value);
  c.attrs(node.attrs);
  for (int o = 0; o < c.outputs; ++o) {
    node.outputs.push_back(g.add_value({"out" + std::to_string(o), DType::kUndefined, {}, std::nullopt, 0}));
    g.outputs.push_back(node.outputs.back());
  }
  g.nodes.push_back(node);
  UCUDNN_ASSIGN_OR_RETURN(std::vector<ValueInfo> infos, infer_node(g, g.nodes[0]));
  for (int o = 0; o < c.outputs; ++o) {
    g.value(node.outputs[o]).dtype = infos[o].dtype;
    g.value(node.outputs[o]).shape = infos[o].shape;
  }
  UCUDNN_RETURN_IF_ERROR(g.validate());
  return b;
}

Expected<std::vector<Tensor>> run_cpu(const Built& b) {
  UCUDNN_ASSIGN_OR_RETURN(runtime::Plan plan, runtime::make_cpu_plan(b.graph));
  UCUDNN_ASSIGN_OR_RETURN(auto executor, runtime::CpuExecutor::create(b.graph, plan));
  return executor->run(b.feeds);
}

runtime::Plan default_cuda_plan(const ir::Graph& g) {
  runtime::Plan plan;
  plan.device = "cuda";
  for (size_t n = 0; n < g.nodes.size(); ++n) plan.steps.push_back({static_cast<ir::NodeId>(n), {}, 0, 0});
  runtime::plan_activation_memory(g, &plan);
  return plan;
}

double element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kBool: return t.data<bool>()[i] ? 1 : 0;
    default: return std::nan("");
  }
}

// Max |gpu - cpu| / (atol + rtol |cpu|) over all outputs must be <= 1.
void expect_close(const std::vector<Tensor>& gpu, const std::vector<Tensor>& cpu, double atol, double rtol,
                  const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  for (size_t o = 0; o < gpu.size(); ++o) {
    ASSERT_EQ(gpu[o].dtype(), cpu[o].dtype()) << what;
    ASSERT_EQ(gpu[o].shape(), cpu[o].shape()) << what;
    for (int64_t i = 0; i < cpu[o].numel(); ++i) {
      const double g = element(gpu[o], i), c = element(cpu[o], i);
      ASSERT_LE(std::abs(g - c), atol + rtol * std::abs(c))
          << what << " output " << o << " element " << i << ": gpu " << g << " cpu " << c;
    }
  }
}

std::vector<Case> cases() {
  auto conv_attrs = [](std::vector<int64_t> pads, std::vector<int64_t> strides, std::vector<int64_t> dilations,
                       int64_t group) {
    return [=](ir::Attributes& a) {
      a.set("pads", pads);
      a.set("strides", strides);
      a.set("dilations", dilations);
      a.set("group", group);
    };
  };
  auto pool = [](std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p, int64_t include_pad) {
    return [=](ir::Attributes& a) {
      a.set("kernel_shape", k);
      a.set("strides", s);
      a.set("pads", p);
      if (a.has("count_include_pad")) a.set("count_include_pad", include_pad);
    };
  };
  const Shape x4 = {2, 3, 5, 6};
  return {
      {"conv3x3_bias", OpKind::kConv, {runtime({2, 4, 9, 8}), weight({6, 4, 3, 3}), weight({6})},
       conv_attrs({1, 1, 1, 1}, {1, 1}, {1, 1}, 1), 1, 18, true},
      {"conv_grouped_strided_dilated", OpKind::kConv, {runtime({2, 4, 11, 10}), weight({6, 2, 3, 3})},
       conv_attrs({2, 1, 2, 1}, {2, 1}, {2, 1}, 2), 1, 18, true},
      {"conv1x1", OpKind::kConv, {runtime({3, 8, 4, 4}), weight({5, 8, 1, 1})}, conv_attrs({0, 0, 0, 0}, {1, 1}, {1, 1}, 1),
       1, 18, true},
      {"conv1d", OpKind::kConv, {runtime({2, 3, 12}), weight({4, 3, 3}), weight({4})}, conv_attrs({1, 1}, {2}, {1}, 1), 1,
       18, true},
      // Relu fused by optimizer/passes (attribute "activation"): with a bias one cuDNN call, without one two steps.
      {"conv_fused_relu_bias", OpKind::kConv, {runtime({2, 4, 9, 8}), weight({6, 4, 3, 3}), weight({6})},
       [](ir::Attributes& a) { a.set("pads", std::vector<int64_t>{1, 1, 1, 1}); a.set("activation", std::string("Relu")); },
       1, 18, true},
      {"conv_fused_relu_no_bias", OpKind::kConv, {runtime({2, 4, 9, 8}), weight({6, 4, 3, 3})},
       [](ir::Attributes& a) { a.set("activation", std::string("Relu")); }, 1, 18, true},
      {"batch_norm", OpKind::kBatchNormalization,
       {runtime(x4), weight({3}), weight({3}), weight({3}), weight({3}, 0.5f, 2.0f)}},
      {"lrn", OpKind::kLRN, {runtime({2, 7, 3, 3})}, [](ir::Attributes& a) { a.set("size", int64_t{5}); }},
      {"relu", OpKind::kRelu, {runtime(x4)}},
      {"leaky_relu", OpKind::kLeakyRelu, {runtime(x4)}, [](ir::Attributes& a) { a.set("alpha", 0.3f); }},
      {"prelu", OpKind::kPRelu, {runtime(x4), weight({3, 1, 1})}},
      {"sigmoid", OpKind::kSigmoid, {runtime(x4, -8, 8)}},
      {"tanh", OpKind::kTanh, {runtime(x4, -3, 3)}},
      {"hard_sigmoid", OpKind::kHardSigmoid, {runtime(x4, -4, 4)}},
      {"hard_swish", OpKind::kHardSwish, {runtime(x4, -5, 5)}},
      {"clip", OpKind::kClip, {runtime(x4), scalar(-0.5f), scalar(0.25f)}},
      {"elu", OpKind::kElu, {runtime(x4, -3, 3)}},
      {"max_pool", OpKind::kMaxPool, {runtime({2, 3, 9, 8})}, pool({3, 3}, {2, 2}, {1, 1, 1, 1}, 0)},
      {"average_pool_exclude_pad", OpKind::kAveragePool, {runtime({2, 3, 9, 8})}, pool({3, 3}, {2, 2}, {1, 1, 1, 1}, 0)},
      {"average_pool_include_pad", OpKind::kAveragePool, {runtime({2, 3, 9, 8})}, pool({3, 3}, {2, 2}, {1, 1, 1, 1}, 1)},
      {"global_average_pool", OpKind::kGlobalAveragePool, {runtime({2, 5, 7, 7})}},
      {"global_max_pool", OpKind::kGlobalMaxPool, {runtime({2, 5, 7, 7})}},
      {"gemm_transb_bias", OpKind::kGemm, {runtime({4, 33}), weight({7, 33}), weight({7})},
       [](ir::Attributes& a) { a.set("transB", int64_t{1}); a.set("alpha", 0.5f); a.set("beta", 2.0f); }, 1, 18, true},
      {"gemm_transa", OpKind::kGemm, {runtime({33, 4}), weight({33, 7})},
       [](ir::Attributes& a) { a.set("transA", int64_t{1}); }, 1, 18, true},
      {"matmul_2d_weight", OpKind::kMatMul, {runtime({2, 3, 4, 5}), weight({5, 6})}, [](ir::Attributes&) {}, 1, 18, true},
      {"matmul_batched", OpKind::kMatMul, {runtime({3, 4, 5}), runtime({3, 5, 6})}, [](ir::Attributes&) {}, 1, 18, true},
      {"add", OpKind::kAdd, {runtime(x4), runtime(x4)}},
      {"add_broadcast", OpKind::kAdd, {runtime(x4), weight({3, 1, 1})}},
      // Relu fused into Add by optimizer/passes (residual joins): max(a + b, 0) in one kernel.
      {"add_fused_relu", OpKind::kAdd, {runtime(x4), runtime(x4)},
       [](ir::Attributes& a) { a.set("activation", std::string("Relu")); }},
      {"add_fused_relu_broadcast", OpKind::kAdd, {runtime(x4), weight({3, 1, 1})},
       [](ir::Attributes& a) { a.set("activation", std::string("Relu")); }},
      {"sub_broadcast", OpKind::kSub, {runtime({1, 6}), runtime({2, 3, 5, 1})}},
      {"mul", OpKind::kMul, {runtime(x4), weight({6})}},
      {"div", OpKind::kDiv, {runtime(x4), runtime(x4, 0.5f, 2.0f)}},
      {"concat", OpKind::kConcat, {runtime({2, 3, 4}), runtime({2, 1, 4}), runtime({2, 2, 4})},
       [](ir::Attributes& a) { a.set("axis", int64_t{1}); }},
      {"split", OpKind::kSplit, {runtime({2, 6, 4}), ints({2, 4})}, [](ir::Attributes& a) { a.set("axis", int64_t{1}); },
       2},
      {"slice_steps", OpKind::kSlice, {runtime({4, 6, 5}), ints({1, -1}), ints({4, 0}), ints({0, 1}), ints({2, -2})}},
      {"flatten", OpKind::kFlatten, {runtime(x4)}},
      {"reshape", OpKind::kReshape, {runtime(x4), ints({6, -1})}},
      {"transpose", OpKind::kTranspose, {runtime(x4)},
       [](ir::Attributes& a) { a.set("perm", std::vector<int64_t>{0, 2, 3, 1}); }},
      // NCHW ↔ NHWC take the tiled batched transpose; sizes not multiples of its 32×32 tile.
      {"transpose_to_nhwc_tiles", OpKind::kTranspose, {runtime({3, 37, 9, 7})},
       [](ir::Attributes& a) { a.set("perm", std::vector<int64_t>{0, 2, 3, 1}); }},
      {"transpose_to_nchw_tiles", OpKind::kTranspose, {runtime({3, 9, 7, 37})},
       [](ir::Attributes& a) { a.set("perm", std::vector<int64_t>{0, 3, 1, 2}); }},
      {"transpose_to_nhwc_narrow", OpKind::kTranspose, {runtime({2, 3, 11, 13})},  // C = 3: an RGB input
       [](ir::Attributes& a) { a.set("perm", std::vector<int64_t>{0, 2, 3, 1}); }},
      {"transpose_generic", OpKind::kTranspose, {runtime(x4)},
       [](ir::Attributes& a) { a.set("perm", std::vector<int64_t>{1, 0, 3, 2}); }},
      {"squeeze", OpKind::kSqueeze, {runtime({2, 1, 3}), ints({1})}},
      {"unsqueeze", OpKind::kUnsqueeze, {runtime({2, 3}), ints({0, 3})}},
      {"pad", OpKind::kPad, {runtime({2, 3, 4}), ints({0, 1, -1, 0, 2, 1}), scalar(0.5f)}},
      {"gather", OpKind::kGather, {runtime({5, 4, 3}), ints({3, 0, -1, 2})}, [](ir::Attributes& a) { a.set("axis", int64_t{1}); }},
      {"cast_to_int64", OpKind::kCast, {runtime(x4, -50, 50)}, [](ir::Attributes& a) { a.set("to", int64_t{7}); }},
      {"shape", OpKind::kShape, {runtime(x4)}},
      {"identity", OpKind::kIdentity, {runtime(x4)}},
      {"dropout", OpKind::kDropout, {runtime(x4)}},
      {"reduce_mean", OpKind::kReduceMean, {runtime(x4), ints({1, 3})}},
      {"reduce_mean_all", OpKind::kReduceMean, {runtime(x4)}, [](ir::Attributes& a) { a.set("keepdims", int64_t{0}); }},
      {"softmax", OpKind::kSoftmax, {runtime(x4, -5, 5)}, [](ir::Attributes& a) { a.set("axis", int64_t{1}); }, 1, 13},
      {"log_softmax_opset11", OpKind::kLogSoftmax, {runtime(x4, -5, 5)}, [](ir::Attributes&) {}, 1, 11},
  };
}

bool have_gpu() { return device_count() > 0; }

// The CPU half: every case builds and runs on the CPU (a malformed case fails here, GPU or not).
TEST(CudaOps, EveryCaseRunsOnTheCpuReference) {
  for (const Case& c : cases()) {
    auto built = build(c, 1);
    ASSERT_TRUE(built.has_value()) << c.name << ": " << built.status().to_string();
    auto out = run_cpu(*built);
    ASSERT_TRUE(out.has_value()) << c.name << ": " << out.status().to_string();
  }
}

// Every op with a CUDA kernel is covered by a case (so "every op is tested" stays true).
TEST(CudaOps, EveryOpHasACudaKernelAndACase) {
  std::vector<bool> covered(static_cast<size_t>(OpKind::kCount), false);
  for (const Case& c : cases()) covered[static_cast<size_t>(c.op)] = true;
  for (int k = 0; k < static_cast<int>(OpKind::kCount); ++k) {
    if (cuda_kernel(static_cast<OpKind>(k)).prepare == nullptr) continue;
    if (static_cast<OpKind>(k) == OpKind::kConstant) continue;  // no inputs: folded by the importer
    EXPECT_TRUE(covered[k]) << op_name(static_cast<OpKind>(k)) << " has a CUDA kernel but no test case";
  }
}

class CudaOpsMath : public ::testing::TestWithParam<MathMode> {};

TEST_P(CudaOpsMath, MatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  auto ctx = CudaContext::create(0, GetParam());
  ASSERT_TRUE(ctx.has_value()) << ctx.status().to_string();
  const bool tf32 = GetParam() == MathMode::kTf32;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    auto built = build(c, 7);
    ASSERT_TRUE(built.has_value()) << built.status().to_string();
    auto cpu = run_cpu(*built);
    ASSERT_TRUE(cpu.has_value()) << cpu.status().to_string();
    auto executor = CudaExecutor::create(**ctx, built->graph, default_cuda_plan(built->graph));
    ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
    auto gpu = (*executor)->run(built->feeds);
    ASSERT_TRUE(gpu.has_value()) << gpu.status().to_string();
    const double tol = c.tf32_sensitive && tf32 ? 2e-2 : 1e-4;
    expect_close(*gpu, *cpu, tol, tol, c.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Math, CudaOpsMath, ::testing::Values(MathMode::kFp32, MathMode::kTf32),
                         [](const auto& info) { return info.param == MathMode::kFp32 ? "fp32" : "tf32"; });

Case micro_batch_conv() {
  return {"conv_micro", OpKind::kConv, {runtime({8, 16, 14, 14}), weight({32, 16, 3, 3}), weight({32})},
          [](ir::Attributes& a) { a.set("pads", std::vector<int64_t>{1, 1, 1, 1}); }};
}

// micro_batch_conv's plan divided 3 + 5 with two different algorithms
// (IMPLICIT_GEMM, IMPLICIT_PRECOMP_GEMM) and room for both in the pool.
runtime::Plan divided_conv_plan(const ir::Graph& g) {
  runtime::Plan plan = default_cuda_plan(g);
  plan.steps[0].micro_batches = {{3, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM},
                                 {5, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM}};
  plan.steps[0].workspace_bytes = plan.workspace_pool_bytes = 64 << 20;
  return plan;
}

TEST(CudaExecutor, MicroBatchedConvEqualsUndivided) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  auto ctx = CudaContext::create(0, MathMode::kFp32);
  ASSERT_TRUE(ctx.has_value()) << ctx.status().to_string();
  auto built = build(micro_batch_conv(), 3);
  ASSERT_TRUE(built.has_value());
  const ir::Graph& g = built->graph;
  auto whole = CudaExecutor::create(**ctx, g, default_cuda_plan(g));
  ASSERT_TRUE(whole.has_value()) << whole.status().to_string();
  auto expected = (*whole)->run(built->feeds);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();

  runtime::Plan plan = divided_conv_plan(g);
  auto divided = CudaExecutor::create(**ctx, g, plan);
  ASSERT_TRUE(divided.has_value()) << divided.status().to_string();
  auto got = (*divided)->run(built->feeds);
  ASSERT_TRUE(got.has_value()) << got.status().to_string();
  expect_close(*got, *expected, 1e-5, 1e-5, "micro-batched conv");

  // A plan whose micro-batches do not cover the batch is refused.
  plan.steps[0].micro_batches = {{3, 0}, {4, 0}};
  auto bad = CudaExecutor::create(**ctx, g, plan);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(CudaExecutor, UndividedPlanPicksAnAlgorithmWithinTheLimit) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  auto ctx = CudaContext::create(0, MathMode::kTf32);
  ASSERT_TRUE(ctx.has_value()) << ctx.status().to_string();
  auto built = build(micro_batch_conv(), 3);
  ASSERT_TRUE(built.has_value());
  for (size_t limit : {size_t{0}, size_t{64} << 20}) {
    auto plan = make_cuda_plan(**ctx, built->graph, CudaPlanOptions{limit});
    ASSERT_TRUE(plan.has_value()) << plan.status().to_string();
    ASSERT_EQ(plan->steps[0].micro_batches.size(), 1u);
    EXPECT_EQ(plan->steps[0].micro_batches[0].size, 8);
    EXPECT_LE(plan->steps[0].workspace_bytes, limit);
    auto executor = CudaExecutor::create(**ctx, built->graph, *plan);
    ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
    auto got = (*executor)->run(built->feeds);
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    auto cpu = run_cpu(*built);
    ASSERT_TRUE(cpu.has_value());
    expect_close(*got, *cpu, 2e-2, 2e-2, "undivided plan, limit " + std::to_string(limit));
  }
}

TEST(CudaExecutor, UnsupportedPoolPaddingIsAClearError) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  auto ctx = CudaContext::create();
  ASSERT_TRUE(ctx.has_value()) << ctx.status().to_string();
  Case c{"asymmetric_pool", OpKind::kMaxPool, {runtime({1, 1, 6, 6})}, [](ir::Attributes& a) {
           a.set("kernel_shape", std::vector<int64_t>{2, 2});
           a.set("pads", std::vector<int64_t>{0, 0, 1, 1});
         }};
  auto built = build(c, 1);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  auto executor = CudaExecutor::create(**ctx, built->graph, default_cuda_plan(built->graph));
  ASSERT_FALSE(executor.has_value());
  EXPECT_EQ(executor.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(executor.status().message().find("asymmetric_pool"), std::string::npos) << executor.status().message();
}

// Same dtype, shape and bytes: bound and host runs use the same kernels on the same data.
void expect_bitwise_equal(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].dtype(), want[o].dtype()) << what << " output " << o;
    ASSERT_EQ(got[o].shape(), want[o].shape()) << what << " output " << o;
    EXPECT_EQ(std::memcmp(got[o].raw(), want[o].raw(), want[o].nbytes()), 0) << what << " output " << o;
  }
}

struct DeviceIo {
  std::vector<GpuTensor> inputs, outputs;
  std::vector<const void*> input_data;
  std::vector<void*> output_data;
};

// Uploads `feeds` and allocates one buffer per graph output.
DeviceIo device_io(const ir::Graph& g, const std::vector<Tensor>& feeds) {
  DeviceIo io;
  for (const Tensor& t : feeds) {
    auto up = GpuTensor::upload(t);
    EXPECT_TRUE(up.has_value()) << up.status().to_string();
    if (!up) return io;
    io.input_data.push_back(up->data());
    io.inputs.push_back(std::move(*up));
  }
  for (ir::ValueId id : g.outputs) {
    auto out = GpuTensor::allocate(g.value(id).dtype, g.value(id).shape);
    EXPECT_TRUE(out.has_value()) << out.status().to_string();
    if (!out) return io;
    io.output_data.push_back(out->data());
    io.outputs.push_back(std::move(*out));
  }
  return io;
}

std::vector<Tensor> download_all(const std::vector<GpuTensor>& tensors) {
  std::vector<Tensor> host;
  for (const GpuTensor& t : tensors) {
    auto down = t.download();
    EXPECT_TRUE(down.has_value()) << down.status().to_string();
    host.push_back(down ? *down : Tensor());
  }
  return host;
}

// Micro-batches 3 + 5: the bound input and output are read and written through
// offsets into the caller's buffers; a run() afterwards is back on the arena.
TEST(CudaExecutor, RunBoundEqualsRunWithMicroBatches) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  auto ctx = CudaContext::create(0, MathMode::kFp32);
  ASSERT_TRUE(ctx.has_value()) << ctx.status().to_string();
  auto built = build(micro_batch_conv(), 5);
  ASSERT_TRUE(built.has_value());
  const ir::Graph& g = built->graph;
  runtime::Plan plan = divided_conv_plan(g);
  auto executor = CudaExecutor::create(**ctx, g, plan);
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  auto expected = (*executor)->run(built->feeds);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();

  DeviceIo io = device_io(g, built->feeds);
  ASSERT_EQ(io.outputs.size(), 1u);
  Status status = (*executor)->run_bound(io.input_data, io.output_data);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  expect_bitwise_equal(download_all(io.outputs), *expected, "run_bound, micro-batches 3 + 5");

  auto again = (*executor)->run(built->feeds);
  ASSERT_TRUE(again.has_value()) << again.status().to_string();
  expect_bitwise_equal(*again, *expected, "run after run_bound");
}

// Outputs no node writes in place: one listed twice, and a graph input passed through.
TEST(CudaExecutor, RunBoundCopiesOutputsItCannotBind) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  auto ctx = CudaContext::create(0, MathMode::kFp32);
  ASSERT_TRUE(ctx.has_value()) << ctx.status().to_string();
  auto built = build({"relu", OpKind::kRelu, {runtime({2, 3, 4, 5})}}, 9);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  ir::Graph& g = built->graph;
  g.outputs = {g.outputs[0], g.outputs[0], g.inputs[0]};
  auto executor = CudaExecutor::create(**ctx, g, default_cuda_plan(g));
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  auto expected = (*executor)->run(built->feeds);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();
  ASSERT_EQ(expected->size(), 3u);

  DeviceIo io = device_io(g, built->feeds);
  ASSERT_EQ(io.outputs.size(), 3u);
  Status status = (*executor)->run_bound(io.input_data, io.output_data);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  expect_bitwise_equal(download_all(io.outputs), *expected, "duplicate and pass-through outputs");
}

TEST(CudaExecutor, RunBoundRejectsBadBuffers) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  auto ctx = CudaContext::create();
  ASSERT_TRUE(ctx.has_value()) << ctx.status().to_string();
  auto built = build({"relu", OpKind::kRelu, {runtime({2, 3})}}, 1);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  auto executor = CudaExecutor::create(**ctx, built->graph, default_cuda_plan(built->graph));
  ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
  DeviceIo io = device_io(built->graph, built->feeds);
  ASSERT_EQ(io.outputs.size(), 1u);

  auto expect_error = [&](const std::vector<const void*>& in, const std::vector<void*>& out, const std::string& text) {
    Status status = (*executor)->run_bound(in, out);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
    EXPECT_NE(status.message().find(text), std::string::npos) << status.message();
  };
  expect_error({}, io.output_data, "expected 1 input buffers");
  expect_error(io.input_data, {io.output_data[0], io.output_data[0]}, "expected 1 output buffers");
  expect_error({nullptr}, io.output_data, "input 'in0' (float32[2, 3]) is null");
  float host[6] = {};
  expect_error(io.input_data, {host}, "output 'out0' (float32[2, 3]) points to host memory");
  // Nothing above reached the GPU: the executor still runs.
  Status status = (*executor)->run_bound(io.input_data, io.output_data);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
}

// The public API end to end on the tiny CNN: run_on_device on uploaded inputs
// gives bitwise run()'s outputs, whichever layout the session chose.
TEST(CudaSession, RunOnDeviceEqualsRun) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  SessionOptions options;
  options.device = Device::kCuda;
  options.batch = 3;
  auto session = Session::load(ucudnn_test::source_dir() + "/models/tiny/tiny_cnn/model.onnx", options);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<Tensor> inputs;
  std::vector<GpuTensor> device_inputs, device_outputs;
  for (const TensorInfo& info : (*session)->inputs()) {
    ASSERT_EQ(info.dtype, DType::kFloat32) << info.name;
    auto t = Tensor::allocate(info.dtype, info.shape);
    ASSERT_TRUE(t.has_value());
    for (int64_t i = 0; i < t->numel(); ++i) t->data<float>()[i] = dist(rng);
    auto up = GpuTensor::upload(*t);
    ASSERT_TRUE(up.has_value()) << up.status().to_string();
    inputs.push_back(std::move(*t));
    device_inputs.push_back(std::move(*up));
  }
  for (const TensorInfo& info : (*session)->outputs()) {
    auto out = GpuTensor::allocate(info.dtype, info.shape);
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    device_outputs.push_back(std::move(*out));
  }
  auto expected = (*session)->run(inputs);
  ASSERT_TRUE(expected.has_value()) << expected.status().to_string();
  for (int repeat = 0; repeat < 2; ++repeat) {
    Status status = (*session)->run_on_device(device_inputs, device_outputs);
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    expect_bitwise_equal(download_all(device_outputs), *expected, "run_on_device, repeat " + std::to_string(repeat));
  }

  // A GpuTensor of another shape is named, not run.
  std::vector<GpuTensor> wrong;
  auto small = GpuTensor::allocate(DType::kFloat32, {1});
  ASSERT_TRUE(small.has_value());
  wrong.push_back(std::move(*small));
  Status status = (*session)->run_on_device(wrong, device_outputs);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  EXPECT_NE(status.message().find("float32[1] on the GPU"), std::string::npos) << status.message();
}

// Runs without a GPU too.
TEST(CpuSession, RunOnDeviceIsUnsupported) {
  SessionOptions options;
  options.device = Device::kCpu;
  auto session = Session::load(ucudnn_test::source_dir() + "/models/tiny/tiny_cnn/model.onnx", options);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  Status status = (*session)->run_on_device(std::vector<const void*>{nullptr}, std::vector<void*>{nullptr});
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("needs a CUDA session"), std::string::npos) << status.message();
}

// Two sessions of one model (each its own context, stream, arena and plan),
// loaded and run on two threads at once, 20 runs each: every run gives the same
// bits, and they match the CPU's result (strict FP32).
TEST(CudaSession, SessionsOnTwoThreadsRunIndependently) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: GPU tests run on the device machine";
  const std::string model = ucudnn_test::source_dir() + "/models/tiny/tiny_residual/model.onnx";
  auto options_for = [](int which, Device device) {
    SessionOptions options;
    options.device = device;
    options.batch = 4 + which;  // different shapes: nothing can be shared by accident
    options.strict_fp32 = true;
    if (device == Device::kCuda) options.layout = which == 0 ? Layout::kNchw : Layout::kNhwc;
    return options;
  };
  std::vector<Tensor> inputs, expected;
  for (int which = 0; which < 2; ++which) {
    auto cpu = Session::load(model, options_for(which, Device::kCpu));
    ASSERT_TRUE(cpu.has_value()) << cpu.status().to_string();
    std::mt19937 rng(which);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    Tensor x = *Tensor::allocate((*cpu)->inputs()[0].dtype, (*cpu)->inputs()[0].shape);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = dist(rng);
    auto y = (*cpu)->run({x});
    ASSERT_TRUE(y.has_value()) << y.status().to_string();
    inputs.push_back(x);
    expected.push_back((*y)[0]);
  }
  std::vector<std::string> failures(2);
  auto worker = [&](int which) {
    auto session = Session::load(model, options_for(which, Device::kCuda));
    if (!session) {
      failures[which] = session.status().to_string();
      return;
    }
    auto first = (*session)->run({inputs[which]});
    if (!first) {
      failures[which] = first.status().to_string();
      return;
    }
    const Tensor& y = (*first)[0];
    for (int64_t i = 0; i < y.numel(); ++i) {
      const float want = expected[which].data<float>()[i];
      if (std::abs(y.data<float>()[i] - want) > 1e-4f * (1 + std::abs(want))) {
        failures[which] = "element " + std::to_string(i) + " differs from the CPU's";
        return;
      }
    }
    for (int repeat = 0; repeat < 20; ++repeat) {
      auto again = (*session)->run({inputs[which]});
      if (!again) {
        failures[which] = again.status().to_string();
        return;
      }
      if (std::memcmp((*again)[0].raw(), y.raw(), y.nbytes()) != 0) {
        failures[which] = "run " + std::to_string(repeat) + " differs from the first";
        return;
      }
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

TEST(CudaSession, NoGpuIsAClearError) {
  if (have_gpu()) GTEST_SKIP() << "a GPU is present: this test checks the no-GPU message";
  EXPECT_FALSE(cuda_available());
  auto context = CudaContext::create();
  ASSERT_FALSE(context.has_value());
  EXPECT_NE(context.status().message().find("no CUDA device"), std::string::npos) << context.status().message();
}

}  // namespace
}  // namespace ucudnn::cuda
