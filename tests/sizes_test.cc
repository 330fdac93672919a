// Sizes that do not fit: the checked arithmetic (runtime/core/bytes.h, shape.h, tensor.h), shape
// rules on dims and attributes whose products or sums leave int64, models declaring huge dims and
// huge batches through the importer and a CPU Session, the CPU convolution's workspace query, and
// plans larger than the memory a backend has — refused before anything is allocated, with the sizes.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <new>
#include <sstream>
#include <string>

#include "onnx_import/onnx_import.h"
#include "runtime/core/bytes.h"
#include "runtime/core/tensor.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cpu/host_memory.h"
#include "runtime/executor/executor.h"
#include "runtime/ops/op_descriptor.h"
#include "tests/onnx_test_models.h"
#include "tests/support/backend_runner.h"
#include "tests/support/graph_builder.h"
#include "tests/support/one_node_graph.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {
namespace {

constexpr int64_t k2to31 = int64_t{1} << 31;
constexpr int64_t k2to32 = int64_t{1} << 32;
constexpr int64_t k2to40 = int64_t{1} << 40;
constexpr int64_t k2to62 = int64_t{1} << 62;

bool contains(const Status& status, const std::string& words) {
  return status.message().find(words) != std::string::npos;
}

// --- checked arithmetic ---------------------------------------------------------

TEST(CheckedArithmetic, SizeTSumsAndProductsThatWrapAreRefused) {
  size_t r = 0;
  EXPECT_TRUE(checked_add(SIZE_MAX - 1, size_t{1}, &r));
  EXPECT_EQ(r, SIZE_MAX);
  EXPECT_FALSE(checked_add(SIZE_MAX, size_t{1}, &r));
  EXPECT_TRUE(checked_mul(size_t{1} << 32, (size_t{1} << 32) - 1, &r));
  EXPECT_FALSE(checked_mul(size_t{1} << 32, size_t{1} << 32, &r));
  EXPECT_TRUE(checked_align_up(257, 256, &r));
  EXPECT_EQ(r, 512u);
  EXPECT_FALSE(checked_align_up(SIZE_MAX - 10, 256, &r));
  EXPECT_EQ(saturating_add(SIZE_MAX - 1, 5), SIZE_MAX);
  EXPECT_EQ(saturating_mul(size_t{3}, size_t{5}), 15u);
  EXPECT_EQ(saturating_mul(SIZE_MAX / 2, size_t{3}), SIZE_MAX);
}

TEST(CheckedArithmetic, Int64SumsDifferencesAndProductsThatLeaveInt64AreRefused) {
  int64_t r = 0;
  EXPECT_TRUE(checked_add(INT64_MAX - 1, int64_t{1}, &r));
  EXPECT_FALSE(checked_add(INT64_MAX, int64_t{1}, &r));
  EXPECT_FALSE(checked_sub(INT64_MIN, int64_t{1}, &r));
  EXPECT_TRUE(checked_mul(int64_t{3037000499}, int64_t{3037000499}, &r));  // floor(sqrt(2^63 - 1))
  EXPECT_FALSE(checked_mul(int64_t{3037000500}, int64_t{3037000500}, &r));
  EXPECT_FALSE(checked_mul(INT64_MIN, int64_t{-1}, &r));
  EXPECT_EQ(saturating_mul(k2to40, k2to40), INT64_MAX);
}

TEST(CheckedArithmetic, NumelRefusesNegativeDimsAndProductsAZeroWouldHide) {
  int64_t n = -7;
  EXPECT_TRUE(checked_numel({}, &n));
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(checked_numel({0, 5}, &n));
  EXPECT_EQ(n, 0);
  EXPECT_TRUE(checked_numel({k2to31, k2to31}, &n));
  EXPECT_EQ(n, int64_t{1} << 62);
  EXPECT_FALSE(checked_numel({k2to31, k2to31, 2}, &n));  // 2^63
  EXPECT_FALSE(checked_numel({0, k2to40, k2to40}, &n));  // 0 elements, but its strides overflow
  EXPECT_FALSE(checked_numel({3, -1}, &n));
  EXPECT_EQ(saturating_numel({k2to40, k2to40}), INT64_MAX);
}

TEST(CheckedArithmetic, TensorBytesNameTheValueAndTheSize) {
  auto fits = checked_nbytes(DType::kFloat32, {int64_t{1} << 60}, "value 'x'");
  ASSERT_TRUE(fits.has_value()) << fits.status().to_string();
  EXPECT_EQ(*fits, size_t{1} << 62);
  EXPECT_EQ(*checked_nbytes(DType::kFloat32, {0, k2to31}, "value 'x'"), 0u);

  auto huge = checked_nbytes(DType::kFloat32, {1, 3, k2to31, k2to31}, "value 'input'");
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(huge.status(), "value 'input' float32[1, 3, 2147483648, 2147483648] is too large"))
      << huge.status().message();
  EXPECT_TRUE(contains(huge.status(), "5.53e+19 bytes")) << huge.status().message();

  EXPECT_FALSE(checked_nbytes(DType::kFloat32, {int64_t{1} << 61}, "x").has_value());  // 2^63 bytes
  EXPECT_FALSE(checked_nbytes(DType::kFloat32, {-2, 3}, "x").has_value());
  EXPECT_EQ(format_bytes(size_t{1} << 62), "4.0 EiB");
}

// Before the checks, nbytes wrapped to a small number and a tiny buffer came back for a huge shape.
TEST(CheckedArithmetic, TensorAllocateRefusesASizeThatWraps) {
  auto t = Tensor::allocate(DType::kFloat32, {k2to62});  // 2^64 bytes: 0 after wrapping
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(t.status(), "too large")) << t.status().message();
}

// --- shape rules -------------------------------------------------------------------

// A graph whose values are `inputs` (constants where given) and one output per node output.
struct RuleCase {
  ir::Graph graph;
  ir::Node node;
};

RuleCase rule_case(OpKind op, const ucudnn_test::AttrList& attrs, std::vector<ir::Value> inputs, int outputs = 1) {
  RuleCase c;
  c.node = ucudnn_test::make_node("n", op, attrs, inputs.size(), outputs);
  for (ir::Value& v : inputs) c.graph.add_value(std::move(v));
  for (int j = 0; j < outputs; ++j) c.graph.add_value({"out" + std::to_string(j), DType::kUndefined, {}, {}, 0});
  return c;
}

ir::Value float_input(const std::string& name, Shape shape) {
  return {name, DType::kFloat32, std::move(shape), {}, -1};
}
ir::Value typed(const std::string& name, DType dtype, Shape shape) { return {name, dtype, std::move(shape), {}, -1}; }
ir::Value int64s(const std::string& name, std::vector<int64_t> values) {
  const Shape shape{static_cast<int64_t>(values.size())};
  return {name, DType::kInt64, shape, Tensor::from_int64s(shape, values), -1};
}

Expected<std::vector<ValueInfo>> infer(const RuleCase& c) { return infer_node(c.graph, c.node); }

TEST(ShapeRuleSizes, AnInputThatDoesNotFitIsRefusedBeforeTheRuleRuns) {
  const RuleCase c = rule_case(OpKind::kRelu, {}, {float_input("x", {k2to31, k2to31, 4})});
  auto r = infer(c);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(r.status(), "node 'n' (Relu")) << r.status().message();
  EXPECT_TRUE(contains(r.status(), "input 'x' float32[2147483648, 2147483648, 4] is too large"))
      << r.status().message();
}

TEST(ShapeRuleSizes, AnOutputThatDoesNotFitIsRefusedNamingIt) {
  // Each input fits (8 GiB); their broadcast is 2^62 elements, 2^64 bytes.
  const RuleCase c = rule_case(OpKind::kAdd, {}, {float_input("a", {k2to31, 1}), float_input("b", {1, k2to31})});
  auto r = infer(c);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(contains(r.status(), "output 'out0' float32[2147483648, 2147483648] is too large"))
      << r.status().message();
}

// Before: the target's element count wrapped to 0 and matched the empty input.
TEST(ShapeRuleSizes, AReshapeTargetWhoseCountWrapsIsRefused) {
  const RuleCase c = rule_case(OpKind::kReshape, {}, {float_input("x", {0}), int64s("shape", {k2to32, k2to32})});
  auto r = infer(c);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(contains(r.status(), "more elements than fit in 64 bits")) << r.status().message();
}

// Before: the sum wrapped to a negative dimension.
TEST(ShapeRuleSizes, AConcatWhoseSizeLeavesInt64IsRefused) {
  const RuleCase c = rule_case(OpKind::kConcat, {{"axis", int64_t{0}}},
                               {typed("a", DType::kUInt8, {k2to62}), typed("b", DType::kUInt8, {k2to62})});
  auto r = infer(c);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(contains(r.status(), "does not fit in 64 bits")) << r.status().message();
}

TEST(ShapeRuleSizes, PadsWhoseSumLeavesInt64AreRefused) {
  const RuleCase c = rule_case(OpKind::kPad, {}, {float_input("x", {4}), int64s("pads", {INT64_MAX - 1, 5})});
  auto r = infer(c);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(contains(r.status(), "does not fit in 64 bits")) << r.status().message();
}

TEST(ShapeRuleSizes, AConvWindowWhoseDilatedSizeLeavesInt64IsRefused) {
  ir::Value w = float_input("w", {2, 3, 3, 3});
  w.constant = Tensor::allocate(DType::kFloat32, w.shape).value();
  const RuleCase c = rule_case(OpKind::kConv, {{"dilations", std::vector<int64_t>{k2to62, 1}}},
                               {float_input("x", {1, 3, 8, 8}), std::move(w)});
  auto r = infer(c);
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(contains(r.status(), "does not fit in 64 bits")) << r.status().message();
}

// Before: (span + step - 1) overflowed for a huge step (undefined behaviour; a wrong length).
TEST(ShapeRuleSizes, SlicesWithTheLargestStepsTakeOneElement) {
  for (int64_t step : {INT64_MAX, INT64_MIN}) {
    const bool forward = step > 0;
    const RuleCase c = rule_case(OpKind::kSlice, {},
                                 {float_input("x", {10}), int64s("starts", {forward ? 0 : 9}),
                                  int64s("ends", {forward ? INT64_MAX : INT64_MIN}), int64s("axes", {0}),
                                  int64s("steps", {step})});
    auto r = infer(c);
    ASSERT_TRUE(r.has_value()) << r.status().to_string();
    EXPECT_EQ((*r)[0].shape, Shape({1})) << "step " << step;
  }
}

TEST(ShapeRuleSizes, ACeilModePoolWithTheLargestStrideHasOneOutput) {
  const RuleCase c = rule_case(OpKind::kMaxPool,
                               {{"kernel_shape", std::vector<int64_t>{1, 1}},
                                {"strides", std::vector<int64_t>{INT64_MAX, INT64_MAX}},
                                {"ceil_mode", int64_t{1}}},
                               {float_input("x", {1, 1, 10, 10})});
  auto r = infer(c);
  ASSERT_TRUE(r.has_value()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape, Shape({1, 1, 1, 1}));
}

TEST(ShapeRuleSizes, GraphValidationChecksEveryValuesSize) {
  ir::Graph g;
  g.name = "huge";
  const ir::ValueId x = g.add_value(float_input("x", {k2to62}));
  g.inputs = {x};
  g.outputs = {x};
  const Status status = g.validate();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(status, "value 'x' float32[4611686018427387904] is too large")) << status.message();
}

// --- the CPU convolution's workspace ------------------------------------------------

TEST(CpuConvWorkspace, AColumnMatrixPastWhatCanBeAddressedIsSizeMaxAndTheDefaultNeedsNone) {
  // X [2, 2, 2^17, 2^17], W [4, 2, 2^16, 2^16] and Y [2, 4, 2^16 + 1, 2^16 + 1] fit; one sample's
  // im2col, 2 x 2^16 x 2^16 rows of (2^16 + 1)^2 columns, does not.
  cpu::ConvProblem p;
  p.batch = 2;
  p.in_channels = 2;
  p.out_channels = 4;
  p.in_h = p.in_w = int64_t{1} << 17;
  p.kernel_h = p.kernel_w = int64_t{1} << 16;
  p.out_h = p.out_w = (int64_t{1} << 16) + 1;
  for (int algorithm : {static_cast<int>(cpu::CpuConvAlgorithm::kIm2colGemm),
                        static_cast<int>(cpu::CpuConvAlgorithm::kIm2colGemmPerSample)})
    EXPECT_EQ(cpu::conv_workspace_bytes(p, algorithm), SIZE_MAX) << cpu::cpu_conv_algorithm_name(algorithm);
  EXPECT_EQ(cpu::conv_default_algorithm(p), static_cast<int>(cpu::CpuConvAlgorithm::kDirect));
  EXPECT_EQ(cpu::conv_workspace_bytes(p, cpu::kDefaultCpuConvAlgorithm), 0u);
}

// --- available memory --------------------------------------------------------------

TEST(HostMemory, ReadsMemAvailableAndTheRoomUnderACgroupLimit) {
  EXPECT_EQ(cpu::mem_available_from_meminfo("MemTotal:  4096 kB\nMemAvailable:   2048 kB\n"), size_t{2} << 20);
  EXPECT_EQ(cpu::mem_available_from_meminfo("MemTotal:  4096 kB\n"), SIZE_MAX);
  EXPECT_EQ(cpu::room_under_cgroup_limit("max\n", "100\n", 0), SIZE_MAX);
  EXPECT_EQ(cpu::room_under_cgroup_limit("9223372036854771712\n", "100\n", 0), SIZE_MAX);  // v1: no limit
  EXPECT_EQ(cpu::room_under_cgroup_limit("1000\n", "600\n", 100), 500u);
  EXPECT_EQ(cpu::room_under_cgroup_limit("1000\n", "1600\n", 100), 0u);
  EXPECT_EQ(cpu::room_under_cgroup_limit("", "", 0), SIZE_MAX);
  const size_t here = cpu::available_host_memory();
  EXPECT_GT(here, 0u);
}

// --- plans larger than memory --------------------------------------------------------

// The CPU backend with `available` bytes of memory, counting allocations and optionally
// throwing std::bad_alloc from prepare.
class SmallBackend final : public ucudnn_test::ForwardingBackend {
 public:
  SmallBackend(runtime::Backend& inner, size_t available) : ForwardingBackend(inner), available_(available) {}
  Expected<size_t> available_memory_bytes() const override { return available_; }
  Expected<std::unique_ptr<runtime::Buffer>> allocate(size_t bytes, const std::string& what) override {
    ++allocations;
    return inner_.allocate(bytes, what);
  }
  Expected<std::unique_ptr<runtime::Kernel>> prepare(const runtime::KernelRequest& request) override {
    if (throw_in_prepare) throw std::bad_alloc();
    return inner_.prepare(request);
  }
  int allocations = 0;
  bool throw_in_prepare = false;

 private:
  size_t available_;
};

// x [1, 1, 1024, 1024] → Relu → Relu: 4 MiB per value, an arena of 8 MiB.
ir::Graph big_relus() {
  ucudnn_test::GraphBuilder builder;
  const ir::ValueId x = builder.input("x", {1, 1, 1024, 1024});
  builder.output(builder.relu(builder.relu(x)), "y");
  ir::Graph g = builder.finish();
  g.name = "big_relus";
  return g;
}

// The VmFlags of the mapping of /proc/self/smaps that holds `address`; "" when none does or the file
// cannot be read.
std::string mapping_flags(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> start >> dash >> end && dash == '-') inside = start <= address && address < end;
    else if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

TEST(HostMemory, BuffersOfAHugePageOrMoreStartOnOneAndAskForHugePages) {
  // Note [huge pages]
  std::unique_ptr<runtime::Backend> cpu = cpu::make_cpu_backend();
  constexpr size_t kHuge = size_t{2} << 20;
  auto big = cpu->allocate(kHuge + 5, "a test buffer");
  ASSERT_TRUE(big.has_value()) << big.status().message();
  EXPECT_EQ((*big)->bytes(), kHuge + 5);
  const auto at = reinterpret_cast<uintptr_t>((*big)->data());
  EXPECT_EQ(at % kHuge, 0u);
  auto small = cpu->allocate(kHuge - 1, "a smaller test buffer");
  ASSERT_TRUE(small.has_value()) << small.status().message();
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*small)->data()) % 64, 0u);
  // Linux marks a range given MADV_HUGEPAGE with the flag "hg"; a kernel without transparent huge
  // pages has no such file and refuses the hint.
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) GTEST_SKIP() << "no transparent huge pages";
  const std::string flags = mapping_flags(at);
  if (flags.empty()) GTEST_SKIP() << "/proc/self/smaps does not list the buffer";
  EXPECT_NE((flags + " ").find(" hg "), std::string::npos) << flags;
}

TEST(MemoryCheck, APlanLargerThanTheAvailableMemoryIsRefusedBeforeAnythingIsAllocated) {
  std::unique_ptr<runtime::Backend> cpu = cpu::make_cpu_backend();
  SmallBackend small(*cpu, size_t{6} << 20);
  const ir::Graph g = big_relus();
  runtime::Plan plan = ucudnn_test::undivided_plan(small, g);
  auto executor = runtime::Executor::create(small, g, plan);
  ASSERT_FALSE(executor.has_value());
  EXPECT_EQ(executor.status().code(), StatusCode::kOutOfMemory);
  EXPECT_TRUE(contains(executor.status(), "model 'big_relus': the plan needs 12.0 MiB (activation arena 8.0 MiB, "
                                          "workspace pool 0 B, weights 0 B in place, outputs 4.0 MiB), 6.0 MiB "
                                          "available on the CPU (host memory); use a smaller batch (--batch)"))
      << executor.status().message();
  EXPECT_EQ(small.allocations, 0);

  SmallBackend roomy(*cpu, size_t{64} << 20);
  EXPECT_TRUE(runtime::Executor::create(roomy, g, plan).has_value());
  EXPECT_EQ(roomy.allocations, 2);  // arena and workspace pool; the weights stay in place on the CPU
}

TEST(MemoryCheck, AWorkspacePoolPastAnyMemoryIsRefusedOnTheRealCpuBackend) {
  std::unique_ptr<runtime::Backend> cpu = cpu::make_cpu_backend();
  const ir::Graph g = big_relus();
  runtime::Plan plan = ucudnn_test::undivided_plan(*cpu, g);
  plan.workspace_pool_bytes = size_t{1} << 62;  // passes every overflow check; no machine has 4 EiB
  auto executor = runtime::Executor::create(*cpu, g, plan);
  ASSERT_FALSE(executor.has_value());
  EXPECT_EQ(executor.status().code(), StatusCode::kOutOfMemory);
  EXPECT_TRUE(contains(executor.status(), "the plan needs 4.0 EiB")) << executor.status().message();
}

TEST(MemoryCheck, TheModelsInputsAndOutputsAreCheckedBeforePlanning) {
  std::unique_ptr<runtime::Backend> cpu = cpu::make_cpu_backend();
  SmallBackend small(*cpu, size_t{6} << 20);
  const Status status = runtime::check_model_fits_memory(small, big_relus());
  EXPECT_EQ(status.code(), StatusCode::kOutOfMemory);
  EXPECT_TRUE(contains(status, "model 'big_relus' needs at least 8.0 MiB (inputs 4.0 MiB, outputs 4.0 MiB)"))
      << status.message();
  SmallBackend roomy(*cpu, size_t{64} << 20);
  EXPECT_TRUE(runtime::check_model_fits_memory(roomy, big_relus()).is_ok());
}

TEST(MemoryCheck, AHostAllocationFailureIsAStatusNotAnAbort) {
  std::unique_ptr<runtime::Backend> cpu = cpu::make_cpu_backend();
  SmallBackend throwing(*cpu, SIZE_MAX);
  throwing.throw_in_prepare = true;
  const ir::Graph g = big_relus();
  auto executor = runtime::Executor::create(throwing, g, ucudnn_test::undivided_plan(throwing, g));
  ASSERT_FALSE(executor.has_value());
  EXPECT_EQ(executor.status().code(), StatusCode::kOutOfMemory);
  EXPECT_TRUE(contains(executor.status(), "std::bad_alloc")) << executor.status().message();
}

// --- models: import and a CPU Session --------------------------------------------------

// input [batch, 3, h, w] → Relu → output.
std::string relu_model(const testing::TempDir& dir, const std::string& h, const std::string& w) {
  onnx::ModelProto m = testing::make_model();
  testing::add_input(m, "input", {"batch", "3", h, w});
  testing::add_output(m, "output", {"batch", "3", h, w});
  testing::add_node(m, "Relu", {"input"}, {"output"}, "relu");
  return testing::write_model(dir, m);
}

TEST(ModelSizes, HugeDeclaredDimsAreRefusedAtImport) {
  testing::TempDir dir;
  onnx_import::ImportOptions options;
  options.batch = 1;
  auto graph = onnx_import::load_model(relu_model(dir, "2147483648", "2147483648"), options);
  ASSERT_FALSE(graph.has_value());
  EXPECT_EQ(graph.status().code(), StatusCode::kInvalidArgument) << graph.status().to_string();
  EXPECT_TRUE(contains(graph.status(), "2147483648")) << graph.status().message();
}

SessionOptions quiet_cpu_options(int64_t batch) {
  SessionOptions options;
  options.batch = batch;
  options.threads = 1;
  options.progress = false;
  return options;
}

TEST(ModelSizes, HugeDeclaredDimsAndBatchesAreRefusedByACpuSession) {
  testing::TempDir dir;
  const std::string huge_dims = relu_model(dir, "2147483648", "2147483648");
  auto session = Session::load(huge_dims, quiet_cpu_options(1));
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument) << session.status().to_string();

  testing::TempDir dir8;
  const std::string small = relu_model(dir8, "8", "8");
  auto overflowing = Session::load(small, quiet_cpu_options(int64_t{1} << 62));  // 2^62 x 768 bytes
  ASSERT_FALSE(overflowing.has_value());
  EXPECT_EQ(overflowing.status().code(), StatusCode::kInvalidArgument) << overflowing.status().to_string();
}

// 2^40 samples of 768 bytes: 768 TiB fits in int64, not in any memory — refused before planning.
TEST(ModelSizes, ABatchLargerThanMemoryIsRefusedBeforeBenchmarking) {
  testing::TempDir dir;
  auto session = Session::load(relu_model(dir, "8", "8"), quiet_cpu_options(k2to40));
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), StatusCode::kOutOfMemory) << session.status().to_string();
  EXPECT_TRUE(contains(session.status(), "needs at least 1.5 PiB (inputs 768.0 TiB, outputs 768.0 TiB)"))
      << session.status().message();
}

}  // namespace
}  // namespace ucudnn
