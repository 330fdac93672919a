// What the Executor refuses in a plan before it allocates anything: values
// outside the arena (offsets that wrap around) or misaligned, two live values
// sharing bytes, workspace slices outside the pool (or, in the arena, on a live
// value, outside it or misaligned), a view's bytes shared without zero-copy views, steps out of order,
// micro-batches that do not cover the batch (sums that wrap included), algorithm
// ids out of range; and what the plan JSON reader refuses: numbers that do not
// fit their field, named by JSON path. Each check names what is wrong; a
// consistent plan passes.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include <nlohmann/json.hpp>

#include "optimizer/passes/passes.h"
#include "optimizer/plan_memory.h"
#include "runtime/cpu/conv_algorithms.h"
#include "runtime/core/bytes.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/executor/executor.h"
#include "runtime/plan/liveness.h"
#include "runtime/plan/plan_checks.h"
#include "runtime/plan/plan_json.h"
#include "tests/support/graph_builder.h"
#include "tests/support/tensor_checks.h"

namespace ucudnn {
namespace {

using ucudnn_test::GraphBuilder;

// x → Relu → a → Relu → b → Relu → c (output): a and c are never alive together.
struct Chain {
  ir::Graph graph;
  ir::ValueId x, a, b, c;
};

Chain make_chain() {
  GraphBuilder builder;
  Chain chain;
  chain.x = builder.input("x", {2, 3, 4, 4});
  chain.a = builder.relu(chain.x);
  chain.b = builder.relu(chain.a);
  chain.c = builder.relu(chain.b);
  builder.output(chain.c, "y");
  chain.graph = builder.finish();
  return chain;
}

// A CPU plan of `graph` laid out by liveness: one step per node in order, with `plan`'s flags (and the
// workspace bytes of the steps it already has).
runtime::Plan liveness_plan(const ir::Graph& graph, runtime::Plan plan = {}) {
  plan.device = "cpu";
  plan.steps.resize(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) plan.steps[n].node = static_cast<ir::NodeId>(n);
  optimizer::plan_activation_memory(graph, &plan);
  return plan;
}

Status create(const ir::Graph& graph, runtime::Plan plan) {
  std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  return runtime::Executor::create(*backend, graph, std::move(plan)).status();
}

// The graph's outputs for `input`, run on the CPU by `plan`; empty, with a test failure, when the
// executor refuses the plan or the run fails.
std::vector<Tensor> run_plan(const ir::Graph& graph, const runtime::Plan& plan, const Tensor& input) {
  std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  auto executor = runtime::Executor::create(*backend, graph, plan);
  EXPECT_TRUE(executor.has_value()) << executor.status().to_string();
  if (!executor) return {};
  auto outputs = (*executor)->run({input});
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  return outputs ? std::move(*outputs) : std::vector<Tensor>{};
}

void expect_refused(const Status& status, const std::string& words) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  EXPECT_NE(status.to_string().find(words), std::string::npos) << status.to_string();
}

TEST(PlanChecks, TheLivenessPlanIsAccepted) {
  const Chain chain = make_chain();
  EXPECT_TRUE(create(chain.graph, liveness_plan(chain.graph)).is_ok());
}

TEST(PlanChecks, ValuesNeverAliveTogetherMayShareBytes) {
  const Chain chain = make_chain();
  runtime::Plan plan = liveness_plan(chain.graph);
  plan.value_offsets[chain.c] = plan.value_offsets[chain.a];  // a dies at step 1, c is born at step 2
  EXPECT_TRUE(runtime::check_activation_memory(chain.graph, plan).is_ok());
  EXPECT_TRUE(create(chain.graph, plan).is_ok());
}

TEST(PlanChecks, LiveValuesSharingBytesAreRefused) {
  const Chain chain = make_chain();
  runtime::Plan plan = liveness_plan(chain.graph);
  plan.arena_bytes += 1024;  // room, so the only fault is the overlap
  plan.value_offsets[chain.b] = plan.value_offsets[chain.a] + 64;  // a and b are both alive at step 1
  expect_refused(create(chain.graph, plan), "overlapping arena bytes while both are alive");
}

TEST(PlanChecks, OffsetsOutsideTheArenaAreRefusedEvenWhenTheSumWraps) {
  const Chain chain = make_chain();
  for (int64_t offset : {int64_t{-256}, int64_t{-2}, INT64_MAX - 8}) {
    runtime::Plan plan = liveness_plan(chain.graph);
    plan.value_offsets[chain.b] = offset;
    expect_refused(create(chain.graph, plan), "outside the arena");
  }
}

TEST(PlanChecks, AValueInUseWithoutAPlaceIsRefused) {
  const Chain chain = make_chain();
  runtime::Plan plan = liveness_plan(chain.graph);
  plan.value_offsets[chain.b] = -1;
  expect_refused(create(chain.graph, plan), "no place in the arena");
}

TEST(PlanChecks, WorkspaceSlicesOutsideThePoolAreRefusedEvenWhenTheSumWraps) {
  const Chain chain = make_chain();
  for (size_t offset : {size_t{1} << 20, SIZE_MAX - 255}) {
    runtime::Plan plan = liveness_plan(chain.graph);
    plan.workspace_pool_bytes = 1024;
    plan.steps[1].workspace_offset = offset;
    plan.steps[1].workspace_bytes = 512;
    expect_refused(create(chain.graph, plan), "lies outside the pool");
  }
}

TEST(PlanChecks, StepsOutOfOrderAndForeignDevicesAreRefused) {
  const Chain chain = make_chain();
  runtime::Plan plan = liveness_plan(chain.graph);
  std::swap(plan.steps[0].node, plan.steps[1].node);
  expect_refused(create(chain.graph, plan), "in order");

  plan = liveness_plan(chain.graph);
  plan.device = "cuda";
  expect_refused(create(chain.graph, plan), "made for device 'cuda'");
}

TEST(PlanChecks, MicroBatchesMustCoverTheBatchAndOnlyConvolutionsAreDivided) {
  const Chain chain = make_chain();
  runtime::Plan plan = liveness_plan(chain.graph);
  plan.steps[0].micro_batches = {{1, -1}, {1, -1}};
  expect_refused(create(chain.graph, plan), "only convolutions");

  GraphBuilder builder;
  const ir::ValueId x = builder.input("x", {4, 2, 5, 5});
  const ir::ValueId w = builder.constant("w", ucudnn_test::random_tensor({3, 2, 3, 3}, 1));
  builder.output(builder.conv(x, w, ir::kNoValue), "y");
  const ir::Graph conv = builder.finish();
  runtime::Plan divided = liveness_plan(conv);
  divided.steps[0].micro_batches = {{2, -1}, {1, -1}};  // 3 of 4 samples
  expect_refused(create(conv, divided), "do not sum to the batch 4");
  divided.steps[0].micro_batches = {{2, -1}, {2, -1}};
  divided.workspace_pool_bytes = divided.steps[0].workspace_bytes = 1 << 20;
  EXPECT_TRUE(create(conv, divided).is_ok());
}

// A one-Conv graph: x [4, 2, 5, 5] → Conv (3 filters of 3x3) → y.
ir::Graph one_conv() {
  GraphBuilder builder;
  const ir::ValueId x = builder.input("x", {4, 2, 5, 5});
  const ir::ValueId w = builder.constant("w", ucudnn_test::random_tensor({3, 2, 3, 3}, 1));
  builder.output(builder.conv(x, w, ir::kNoValue), "y");
  return builder.finish();
}

// Before: the sizes' sum wrapped around to the batch (2 x INT64_MAX + 6 = 4 mod 2^64) and the plan ran.
TEST(PlanChecks, MicroBatchSizesWhoseSumWrapsToTheBatchAreRefused) {
  const ir::Graph conv = one_conv();
  runtime::Plan plan = liveness_plan(conv);
  plan.steps[0].micro_batches = {{INT64_MAX, -1}, {INT64_MAX, -1}, {6, -1}};
  expect_refused(create(conv, plan), "do not sum to the batch 4");
  plan.steps[0].micro_batches = {{4, -1}, {0, -1}};
  expect_refused(create(conv, plan), "(4, 0) do not sum to the batch 4 (each must be positive)");
}

TEST(PlanChecks, AlgorithmIdsOutOfRangeAreRefused) {
  const ir::Graph conv = one_conv();
  runtime::Plan plan = liveness_plan(conv);
  plan.workspace_pool_bytes = plan.steps[0].workspace_bytes = 1 << 20;
  plan.steps[0].micro_batches = {{2, -2}, {2, -1}};
  expect_refused(create(conv, plan), "algorithm ids are >= 0, or -1 for the default");
  constexpr int kFirstMissing = cpu::kNumCpuConvAlgorithms;  // the CPU has algorithms 0 .. count - 1
  plan.steps[0].micro_batches = {{2, kFirstMissing}, {2, -1}};
  expect_refused(create(conv, plan), "no CPU algorithm " + std::to_string(kFirstMissing));
  plan.steps[0].micro_batches = {{2, 3}, {2, 0}};
  EXPECT_TRUE(create(conv, plan).is_ok());
}

// EfficientNet's expansion in small: x[1, 2, 4, 4] → 1×1 Conv → a[1, 8, 4, 4] → SiLU (Sigmoid and Mul,
// one FusedPointwise after fuse_pointwise) → s → 1×1 Conv → y[1, 2, 4, 4].
struct Expansion {
  ir::Graph graph;
  ir::NodeId silu = -1;
};

Expansion make_expansion() {
  GraphBuilder builder;
  std::mt19937 random(7);
  const ir::ValueId x = builder.input("x", {1, 2, 4, 4});
  const ir::ValueId w1 = builder.constant("w1", ucudnn_test::make_random_tensor(DType::kFloat32, {8, 2, 1, 1}, random));
  const ir::ValueId w2 = builder.constant("w2", ucudnn_test::make_random_tensor(DType::kFloat32, {2, 8, 1, 1}, random));
  const ir::ValueId a = builder.conv(x, w1, ir::kNoValue);
  const ir::ValueId s = builder.same_shape(OpKind::kMul, {a, builder.same_shape(OpKind::kSigmoid, {a})});
  builder.output(builder.conv(s, w2, ir::kNoValue), "y");
  Expansion e{builder.finish()};
  optimizer::PassStats stats;
  EXPECT_TRUE(optimizer::fuse_pointwise(e.graph, &stats).is_ok());
  for (size_t n = 0; n < e.graph.nodes.size(); ++n)
    if (e.graph.nodes[n].op == OpKind::kFusedPointwise) e.silu = static_cast<ir::NodeId>(n);
  return e;
}

// Note [in-place pointwise] (runtime/plan/liveness.cc): the SiLU writes over the Conv output it last
// reads, so the arena holds x and a, or a and y (10 channels), not a and s together (16); the run
// matches one with a buffer per value, bit for bit.
TEST(PlanChecks, APointwiseNodeWritesOverTheInputItReadsLast) {
  const Expansion e = make_expansion();
  ASSERT_GE(e.silu, 0) << "fuse_pointwise made no FusedPointwise";
  const ir::Node& silu = e.graph.nodes[e.silu];
  const runtime::Plan plan = liveness_plan(e.graph);
  EXPECT_EQ(plan.value_offsets[silu.outputs[0]], plan.value_offsets[silu.inputs[0]]);
  EXPECT_EQ(plan.arena_bytes, size_t{10 * 16 * sizeof(float)});
  EXPECT_EQ(plan.unplanned_bytes, size_t{(2 + 8 + 8 + 2) * 16 * sizeof(float)});
  EXPECT_TRUE(runtime::check_activation_memory(e.graph, plan).is_ok());

  runtime::Plan separate = plan;  // every value its own bytes
  separate.arena_bytes = 0;
  for (size_t id = 0; id < e.graph.values.size(); ++id) {
    if (plan.value_offsets[id] < 0) continue;
    separate.value_offsets[id] = static_cast<int64_t>(separate.arena_bytes);
    separate.arena_bytes += 16 * 8 * sizeof(float);
  }
  std::mt19937 random(3);
  const Tensor x = ucudnn_test::make_random_tensor(DType::kFloat32, {1, 2, 4, 4}, random);
  ucudnn_test::expect_bitwise_equal(run_plan(e.graph, plan, x), run_plan(e.graph, separate, x),
                                    "in place against a buffer per value");
}

// Sharing bytes while alive together is accepted only for that pair: not for a node other than a
// FusedPointwise, nor when a later step still reads the input.
TEST(PlanChecks, ValuesAliveTogetherShareBytesOnlyForAPointwiseNodeWritingOverItsLastRead) {
  const Chain chain = make_chain();  // Relu nodes: a and b alive together at step 1
  runtime::Plan plan = liveness_plan(chain.graph);
  plan.arena_bytes += 1024;
  plan.value_offsets[chain.b] = plan.value_offsets[chain.a] = 0;
  plan.value_offsets[chain.c] = 512;
  expect_refused(create(chain.graph, plan), "overlapping arena bytes while both are alive");

  // x → a = Relu(x) → s = SiLU(a) → Concat(s, a): a is read after the SiLU, so s may not take its bytes.
  GraphBuilder builder;
  const ir::ValueId a = builder.relu(builder.input("x", {1, 2, 4, 4}));
  const ir::ValueId s = builder.same_shape(OpKind::kMul, {a, builder.same_shape(OpKind::kSigmoid, {a})});
  builder.output(builder.concat({s, a}, 1), "y");
  ir::Graph graph = builder.finish();
  optimizer::PassStats stats;
  ASSERT_TRUE(optimizer::fuse_pointwise(graph, &stats).is_ok());
  runtime::Plan lying = liveness_plan(graph);
  EXPECT_NE(lying.value_offsets[s], lying.value_offsets[a]);
  lying.value_offsets[s] = lying.value_offsets[a];
  expect_refused(create(graph, lying), "overlapping arena bytes while both are alive");
}

// A ResNet join in small: x → Relu → r; a = Conv(r); d = Conv(r) (the shortcut); y = Relu(Conv(a) + d),
// the last Conv carrying d as its residual z (Note [fused nodes]). With `z_is_x` the join adds its own
// input instead: y = Relu(Conv(a) + a).
struct Join {
  ir::Graph graph;
  ir::ValueId a, d, y;
};

Join make_join(bool z_is_x) {
  GraphBuilder builder;
  std::mt19937 random(5);
  auto weight = [&](const std::string& name) {
    return builder.constant(name, ucudnn_test::make_random_tensor(DType::kFloat32, {4, 4, 3, 3}, random));
  };
  Join j;
  const ir::ValueId r = builder.relu(builder.input("x", {2, 4, 5, 5}));
  j.a = builder.conv(r, weight("w1"), ir::kNoValue, {.pad = 1});
  j.d = z_is_x ? j.a : builder.conv(r, weight("w2"), ir::kNoValue, {.pad = 1});
  j.y = builder.conv(j.a, weight("w3"), ir::kNoValue, {.pad = 1, .activation = "Relu", .residual = j.d});
  builder.output(builder.relu(j.y), "out");
  j.graph = builder.finish();
  return j;
}

// Note [residual in place] (runtime/plan/liveness.cc): with Plan::residual_in_place the join's Y takes
// the bytes of the shortcut it adds, and the CPU run matches one where every value has its own bytes.
// Without the flag, or when z is also the Conv's X, sharing those bytes is refused.
// The Convs run the direct loops (no workspace).
runtime::Plan join_plan(const ir::Graph& graph, bool residual_in_place) {
  runtime::Plan plan = liveness_plan(graph, {.residual_in_place = residual_in_place});
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (graph.nodes[n].op == OpKind::kConv)
      plan.steps[n].micro_batches = {{2, static_cast<int>(cpu::CpuConvAlgorithm::kDirect)}};
  return plan;
}

TEST(PlanChecks, AConvWritesOverTheResidualItAddsOnlyWhenThePlanSaysSo) {
  const Join join = make_join(/*z_is_x=*/false);
  const runtime::Plan separate = join_plan(join.graph, false), in_place = join_plan(join.graph, true);
  EXPECT_NE(separate.value_offsets[join.y], separate.value_offsets[join.d]);
  EXPECT_EQ(in_place.value_offsets[join.y], in_place.value_offsets[join.d]);

  std::mt19937 random(9);
  const Tensor x = ucudnn_test::make_random_tensor(DType::kFloat32, {2, 4, 5, 5}, random);
  const std::vector<Tensor> want = run_plan(join.graph, separate, x), got = run_plan(join.graph, in_place, x);
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(got.size(), 1u);
  ucudnn_test::expect_close(got[0], want[0], {1e-5, 1e-5}, "Y over z against a buffer per value");

  auto read = runtime::plan_from_json(runtime::plan_to_json(in_place, join.graph));
  ASSERT_TRUE(read.has_value()) << read.status().to_string();
  EXPECT_TRUE(read->residual_in_place);
  EXPECT_TRUE(create(join.graph, *read).is_ok());
  nlohmann::json malformed = nlohmann::json::parse(runtime::plan_to_json(in_place, join.graph));
  malformed["residual_in_place"] = "yes";
  auto refused = runtime::plan_from_json(malformed.dump());
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.status().message().find("/residual_in_place is \"yes\"; expected true or false"), std::string::npos)
      << refused.status().message();

  runtime::Plan lying = in_place;
  lying.residual_in_place = false;
  expect_refused(create(join.graph, lying), "overlapping arena bytes while both are alive");

  const Join self = make_join(/*z_is_x=*/true);  // Y over z would be Y over X, which the Conv still reads
  runtime::Plan self_plan = join_plan(self.graph, true);
  EXPECT_NE(self_plan.value_offsets[self.y], self_plan.value_offsets[self.a]);
  self_plan.value_offsets[self.y] = self_plan.value_offsets[self.a];
  expect_refused(create(self.graph, self_plan), "overlapping arena bytes while both are alive");
}

TEST(PlanChecks, MisalignedValuesAndArenasPastInt64AreRefused) {
  const Chain chain = make_chain();
  runtime::Plan plan = liveness_plan(chain.graph);
  plan.arena_bytes += 1024;
  plan.value_offsets[chain.c] = static_cast<int64_t>(plan.arena_bytes) - 512 + 2;  // inside, but not float-aligned
  expect_refused(create(chain.graph, plan), "not a multiple of its element size 4");

  plan = liveness_plan(chain.graph);
  plan.arena_bytes = size_t{1} << 63;
  expect_refused(create(chain.graph, plan), "larger than arena offsets reach");
}

// --- workspaces in the arena (Note [workspace in the arena]) ------------------------

// The chain's liveness plan with a workspace at every step (256, 700, 300 bytes) placed in the arena.
runtime::Plan arena_workspace_plan(const ir::Graph& graph) {
  runtime::Plan plan;
  plan.device = "cpu";
  plan.workspace_in_arena = true;
  plan.steps.resize(graph.nodes.size());
  const size_t bytes[] = {256, 700, 300};
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    plan.steps[n].node = static_cast<ir::NodeId>(n);
    plan.steps[n].workspace_bytes = bytes[n % 3];
  }
  optimizer::plan_activation_memory(graph, &plan);
  return plan;
}

TEST(PlanChecks, WorkspacesInTheArenaTakeBytesNoValueOfTheirStepHolds) {
  const Chain chain = make_chain();
  const runtime::Plan plan = arena_workspace_plan(chain.graph);
  EXPECT_EQ(plan.workspace_pool_bytes, 0u);
  const std::vector<runtime::Lifetime> life = runtime::value_lifetimes(chain.graph, plan);
  for (int32_t step = 0; step < 3; ++step) {
    const runtime::PlanStep& s = plan.steps[step];
    EXPECT_EQ(s.workspace_offset % kBufferAlignment, 0u);
    EXPECT_LE(s.workspace_offset + s.workspace_bytes, plan.arena_bytes);
    for (ir::ValueId id : {chain.x, chain.a, chain.b, chain.c}) {
      if (life[id].first > step || life[id].last < step) continue;
      const size_t begin = static_cast<size_t>(plan.value_offsets[id]), end = begin + 2 * 3 * 4 * 4 * 4;
      EXPECT_TRUE(s.workspace_offset >= end || s.workspace_offset + s.workspace_bytes <= begin)
          << "the workspace of step " << step << " overlaps value " << chain.graph.value(id).name;
    }
  }
  // The same run as with a pool beside the arena, byte for byte.
  runtime::Plan beside = liveness_plan(chain.graph);
  for (size_t n = 0; n < 3; ++n) beside.steps[n].workspace_bytes = plan.steps[n].workspace_bytes;
  beside.workspace_pool_bytes = 700;
  const Tensor x = ucudnn_test::random_tensor({2, 3, 4, 4}, 5);
  ucudnn_test::expect_bitwise_equal(run_plan(chain.graph, plan, x), run_plan(chain.graph, beside, x),
                                    "workspaces in the arena against a pool");
}

TEST(PlanChecks, AWorkspaceOnALiveValueOutsideTheArenaOrMisalignedIsRefused) {
  const Chain chain = make_chain();
  runtime::Plan plan = arena_workspace_plan(chain.graph);
  plan.steps[1].workspace_offset = static_cast<size_t>(plan.value_offsets[chain.a]);  // step 1 reads a
  expect_refused(create(chain.graph, plan), "the workspace of step 1");

  plan = arena_workspace_plan(chain.graph);
  plan.steps[2].workspace_offset = plan.arena_bytes;
  expect_refused(create(chain.graph, plan), "outside the arena");

  plan = arena_workspace_plan(chain.graph);
  plan.steps[0].workspace_offset += 64;
  expect_refused(create(chain.graph, plan), "not a multiple of 256");

  plan = arena_workspace_plan(chain.graph);
  plan.steps[0].workspace_bytes = 0;
  plan.steps[0].workspace_offset = plan.arena_bytes + 4096;
  expect_refused(create(chain.graph, plan), "the empty workspace of step 0");
}

TEST(PlanJson, WorkspacesInTheArenaReadBackAndAPoolBesideThemIsRefused) {
  const Chain chain = make_chain();
  const runtime::Plan plan = arena_workspace_plan(chain.graph);
  auto read = runtime::plan_from_json(runtime::plan_to_json(plan, chain.graph));
  ASSERT_TRUE(read.has_value()) << read.status().to_string();
  EXPECT_TRUE(read->workspace_in_arena);
  EXPECT_EQ(read->steps[1].workspace_offset, plan.steps[1].workspace_offset);
  EXPECT_TRUE(create(chain.graph, *read).is_ok());

  nlohmann::json j = nlohmann::json::parse(runtime::plan_to_json(plan, chain.graph));
  j["workspace_pool_bytes"] = 4096;
  auto lying = runtime::plan_from_json(j.dump());
  ASSERT_FALSE(lying.has_value());
  EXPECT_NE(lying.status().message().find("in the arena"), std::string::npos) << lying.status().message();
}

// --- views (Note [views]) -----------------------------------------------------------

// x → Relu → a → Flatten → v → Relu → out, planned with or without zero-copy views.
struct ViewChain {
  ir::Graph graph;
  ir::ValueId a, v;
};

ViewChain make_view_chain() {
  GraphBuilder builder;
  ViewChain chain;
  chain.a = builder.relu(builder.input("x", {2, 3, 4, 4}));
  chain.v = builder.flatten(chain.a);
  builder.output(builder.relu(chain.v), "y");
  chain.graph = builder.finish();
  return chain;
}

runtime::Plan view_plan(const ir::Graph& graph, bool zero_copy) {
  return liveness_plan(graph, {.zero_copy_views = zero_copy});
}

TEST(PlanChecks, AViewIsItsInputsBytesAndRunsNoCopy) {
  const ViewChain chain = make_view_chain();
  const runtime::Plan views = view_plan(chain.graph, true), copies = view_plan(chain.graph, false);
  EXPECT_EQ(views.value_offsets[chain.v], views.value_offsets[chain.a]);
  EXPECT_NE(copies.value_offsets[chain.v], copies.value_offsets[chain.a]);
  EXPECT_LE(views.arena_bytes, copies.arena_bytes);
  std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  const Tensor x = ucudnn_test::random_tensor({2, 3, 4, 4}, 9);
  std::vector<std::vector<Tensor>> outputs;
  for (const runtime::Plan* plan : {&views, &copies}) {
    auto executor = runtime::Executor::create(*backend, chain.graph, *plan);
    ASSERT_TRUE(executor.has_value()) << executor.status().to_string();
    auto profile = (*executor)->profile({x});
    ASSERT_TRUE(profile.has_value()) << profile.status().to_string();
    for (const runtime::StepTiming& step : *profile) {
      if (step.op == OpKind::kFlatten) {
        EXPECT_EQ(step.calls, plan == &views ? 0 : 1);
      }
    }
    auto run = (*executor)->run({x});
    ASSERT_TRUE(run.has_value()) << run.status().to_string();
    outputs.push_back(std::move(*run));
  }
  ucudnn_test::expect_bitwise_equal(outputs[0], outputs[1], "a view against a copy");
}

// A view of a value written in place (a SiLU over the Relu's output) joins that buffer; the graph's
// inputs and outputs are never views (a bound run puts them in the caller's buffers).
TEST(PlanChecks, AViewOfAnInPlaceOutputJoinsItsBufferAndGraphEdgesStayApart) {
  GraphBuilder builder;
  const ir::ValueId x = builder.input("x", {2, 3, 4, 4});
  const ir::ValueId a = builder.relu(x);
  const ir::ValueId s = builder.same_shape(OpKind::kMul, {a, builder.same_shape(OpKind::kSigmoid, {a})});
  builder.output(builder.relu(builder.flatten(s)), "y");
  builder.output(builder.flatten(x), "flat_x");
  ir::Graph graph = builder.finish();
  optimizer::PassStats stats;
  ASSERT_TRUE(optimizer::fuse_pointwise(graph, &stats).is_ok());  // renumbers the values
  ASSERT_EQ(graph.nodes.size(), 5u);
  ASSERT_EQ(graph.nodes[1].op, OpKind::kFusedPointwise);
  ASSERT_EQ(graph.nodes[2].op, OpKind::kFlatten);
  const ir::ValueId relu = graph.nodes[0].outputs[0], silu = graph.nodes[1].outputs[0];
  const ir::ValueId view = graph.nodes[2].outputs[0];
  const runtime::Plan plan = view_plan(graph, true);
  EXPECT_EQ(plan.value_offsets[silu], plan.value_offsets[relu]);  // in place
  EXPECT_EQ(plan.value_offsets[view], plan.value_offsets[relu]);  // and its view
  EXPECT_NE(plan.value_offsets[graph.outputs[1]], plan.value_offsets[graph.inputs[0]]);
  const Tensor input = ucudnn_test::random_tensor({2, 3, 4, 4}, 3);
  ucudnn_test::expect_bitwise_equal(run_plan(graph, plan, input), run_plan(graph, view_plan(graph, false), input),
                                    "views against copies");
}

// A FusedPointwise may not write over a buffer a view of it still reads later; without zero-copy
// views, a view and its input sharing bytes is a lying plan.
TEST(PlanChecks, NoPointwiseWritesOverAViewReadLaterAndOnlyViewsShare) {
  GraphBuilder builder;
  const ir::ValueId a = builder.relu(builder.input("x", {1, 2, 4, 4}));
  const ir::ValueId v = builder.identity(a);
  const ir::ValueId s = builder.same_shape(OpKind::kMul, {a, builder.same_shape(OpKind::kSigmoid, {a})});
  builder.output(builder.concat({s, v}, 1), "y");
  ir::Graph graph = builder.finish();
  optimizer::PassStats stats;
  ASSERT_TRUE(optimizer::fuse_pointwise(graph, &stats).is_ok());
  ir::ValueId silu = ir::kNoValue;
  for (const ir::Node& node : graph.nodes)
    if (node.op == OpKind::kFusedPointwise && node.inputs.size() == 1) silu = node.outputs[0];
  ASSERT_NE(silu, ir::kNoValue) << "the SiLU is one FusedPointwise reading a";
  const runtime::Plan plan = view_plan(graph, true);
  EXPECT_NE(plan.value_offsets[silu], plan.value_offsets[a]);  // v (a's bytes) is read after the SiLU
  EXPECT_TRUE(create(graph, plan).is_ok());
  runtime::Plan lying = view_plan(graph, true);
  lying.zero_copy_views = false;  // the same offsets, claimed without views
  expect_refused(create(graph, lying), "overlapping arena bytes while both are alive");
}

// --- the plan JSON reader ---------------------------------------------------------

// The chain's liveness plan as JSON, with `path` (a JSON pointer) set to `raw` (JSON text).
std::string plan_json_with(const std::string& path, const std::string& raw) {
  const Chain chain = make_chain();
  runtime::Plan plan = liveness_plan(chain.graph);
  plan.steps[1].micro_batches = {{2, -1}};
  nlohmann::json j = nlohmann::json::parse(runtime::plan_to_json(plan, chain.graph));
  j[nlohmann::json::json_pointer(path)] = nlohmann::json::parse(raw);
  return j.dump();
}

TEST(PlanJson, NumbersThatDoNotFitTheirFieldAreRefusedNamingThePath) {
  const struct {
    const char* path;
    const char* raw;
    const char* words;
  } cases[] = {
      {"/steps/1/workspace_offset", "-256", "/steps/1/workspace_offset is -256; expected an integer from 0 to"},
      {"/steps/1/workspace_offset", "18446744073709551360", "/steps/1/workspace_offset is 18446744073709551360"},
      {"/steps/1/workspace_bytes", "9223372036854775808", "/steps/1/workspace_bytes is 9223372036854775808"},
      {"/steps/1/workspace_bytes", "1.5", "/steps/1/workspace_bytes is 1.5"},
      {"/steps/1/workspace_bytes", "1e3", "/steps/1/workspace_bytes is 1000.0"},
      {"/steps/1/workspace_bytes", "\"7\"", "/steps/1/workspace_bytes is string"},
      {"/arena_bytes", "-1", "/arena_bytes is -1"},
      {"/workspace_pool_bytes", "null", "/workspace_pool_bytes is null"},
      {"/value_offsets/2", "-2", "/value_offsets/2 is -2; expected an integer from -1 to"},
      {"/value_offsets/2", "9223372036854775808", "/value_offsets/2 is 9223372036854775808"},
      {"/steps/1/micro_batches/0/size", "0", "/steps/1/micro_batches/0/size is 0; expected an integer from 1"},
      {"/steps/1/micro_batches/0/algorithm", "-2", "/steps/1/micro_batches/0/algorithm is -2"},
      {"/steps/1/micro_batches/0/algorithm", "4294967296", "/steps/1/micro_batches/0/algorithm is 4294967296"},
      {"/steps/1/node", "-1", "/steps/1/node is -1"},
      {"/steps/1/stream", "2", "/steps/1/stream is 2; expected an integer from 0 to 1"},
      {"/steps/1/micro_batches", "{}", "/steps/1/micro_batches must be an array"},
      {"/device", "7", "/device must be a string"},
  };
  for (const auto& c : cases) {
    auto plan = runtime::plan_from_json(plan_json_with(c.path, c.raw));
    ASSERT_FALSE(plan.has_value()) << c.path << " = " << c.raw;
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(plan.status().message().find(c.words), std::string::npos) << plan.status().message();
  }
}

TEST(PlanJson, AMissingFieldIsNamedAndAWrittenPlanReadsBack) {
  const Chain chain = make_chain();
  runtime::Plan plan = liveness_plan(chain.graph);
  nlohmann::json j = nlohmann::json::parse(runtime::plan_to_json(plan, chain.graph));
  j["steps"][2].erase("node");
  auto missing = runtime::plan_from_json(j.dump());
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.status().message().find("/steps/2/node is missing"), std::string::npos)
      << missing.status().message();

  auto read = runtime::plan_from_json(runtime::plan_to_json(plan, chain.graph));
  ASSERT_TRUE(read.has_value()) << read.status().to_string();
  EXPECT_EQ(read->value_offsets, plan.value_offsets);
  EXPECT_EQ(read->arena_bytes, plan.arena_bytes);
  EXPECT_TRUE(create(chain.graph, *read).is_ok());
}

}  // namespace
}  // namespace ucudnn
