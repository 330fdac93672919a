// What the Executor refuses in a plan before it allocates anything: values
// outside the arena (offsets that wrap around), two live values sharing bytes,
// workspace slices outside the pool, steps out of order, micro-batches that do
// not cover the batch. Each check names what is wrong; a consistent plan passes.
#include <gtest/gtest.h>

#include <cstdint>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/executor/executor.h"
#include "tests/support/graph_builder.h"

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

runtime::Plan liveness_plan(const ir::Graph& graph) {
  runtime::Plan plan;
  plan.device = "cpu";
  plan.steps.resize(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) plan.steps[n].node = static_cast<ir::NodeId>(n);
  runtime::plan_activation_memory(graph, &plan);
  return plan;
}

Status create(const ir::Graph& graph, runtime::Plan plan) {
  std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  return runtime::Executor::create(*backend, graph, std::move(plan)).status();
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

}  // namespace
}  // namespace ucudnn
