// Policies (undivided, wr, wd) on hand-made kernels and on the real H200 probe
// data (tests/data, copies of ../shared/data). The AlexNet sums are checked
// against the figures published in DEVICE.md, which also validates the CSV
// loader and the DP end to end.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "optimizer/policies.h"
#include "optimizer/probe_csv.h"
#include "tests/test_paths.h"

namespace ucudnn::optimizer {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

std::string data_path(const std::string& name) {
  return ucudnn_test::source_dir() + "/tests/data/" + name;
}

ProbeData load(const std::string& name) {
  auto data = load_probe_csv(data_path(name));
  EXPECT_TRUE(data.has_value()) << data.status().to_string();
  return data.has_value() ? std::move(data).value() : ProbeData{};
}

std::vector<NamedKernel> alexnet(const ProbeData& data, const std::vector<std::string>& directions) {
  std::vector<NamedKernel> kernels;
  for (int layer = 1; layer <= 5; ++layer) {
    for (const std::string& dir : directions) {
      const std::string name = "alexnet/conv" + std::to_string(layer) + "/" + dir;
      auto it = data.kernels.find(name);
      EXPECT_NE(it, data.kernels.end()) << name;
      if (it != data.kernels.end()) kernels.push_back({name, it->second});
    }
  }
  return kernels;
}

double unlimited_sum(const PolicyResult& r) {
  double sum = 0;
  for (const KernelPlan& k : r.kernels) sum += k.unlimited_time_ms;
  return sum;
}

TEST(ProbeData, AlexNetAllDirectionsMatchesPublishedFigures) {
  const ProbeData data = load("h200_cudnn919_conv_probe.csv");
  ASSERT_EQ(data.batch, 256);
  const auto kernels = alexnet(data, {"fwd", "bwd_data", "bwd_filter"});
  ASSERT_EQ(kernels.size(), 15u);
  auto undivided = plan_undivided(kernels, 256, 64 * kMiB);
  auto wr = plan_wr(kernels, 256, 64 * kMiB);  // powers of two, 2 % threshold
  ASSERT_TRUE(undivided.has_value()) << undivided.status().to_string();
  ASSERT_TRUE(wr.has_value()) << wr.status().to_string();
  // DEVICE.md: unlimited 10.1 ms, undivided 41.1 ms, micro-batched 13.3 ms.
  EXPECT_NEAR(unlimited_sum(*wr), 10.1, 10.1 * 0.02);
  EXPECT_NEAR(undivided->total_time_ms, 41.1, 41.1 * 0.02);
  EXPECT_NEAR(wr->total_time_ms, 13.3, 13.3 * 0.02);
  EXPECT_LE(wr->pool_bytes, 64 * kMiB);
  EXPECT_LE(undivided->pool_bytes, 64 * kMiB);
  for (const KernelPlan& plan : wr->kernels) {
    EXPECT_LE(plan.config.time_ms, plan.undivided_time_ms + 1e-12) << plan.kernel;
    EXPECT_LE(plan.config.workspace_bytes, 64 * kMiB) << plan.kernel;
  }
}

TEST(ProbeData, AlexNetForwardMicroBatchingBeatsUndivided) {
  const ProbeData data = load("h200_cudnn919_conv_probe.csv");
  const auto kernels = alexnet(data, {"fwd"});
  auto undivided = plan_undivided(kernels, 256, 64 * kMiB);
  auto wr = plan_wr(kernels, 256, 64 * kMiB);
  auto wr_unlimited = plan_wr(kernels, 256, SIZE_MAX);
  ASSERT_TRUE(undivided && wr && wr_unlimited);
  EXPECT_LT(wr->total_time_ms, undivided->total_time_ms);
  // More workspace never hurts; the unlimited DP is no slower than the unlimited undivided sum.
  EXPECT_GE(wr->total_time_ms + 1e-9, wr_unlimited->total_time_ms);
  EXPECT_LE(wr_unlimited->total_time_ms, unlimited_sum(*wr) + 1e-9);
  EXPECT_GT(undivided->total_time_ms, 2.0 * wr->total_time_ms);  // the big gain
}

TEST(ProbeData, NhwcAlexNetBackwardDataMatchesPublishedFigures) {
  const ProbeData data = load("h200_cudnn919_conv_probe_nhwc.csv");
  const auto kernels = alexnet(data, {"bwd_data"});
  auto undivided = plan_undivided(kernels, 256, 64 * kMiB);
  auto wr = plan_wr(kernels, 256, 64 * kMiB);
  ASSERT_TRUE(undivided && wr);
  // DEVICE.md: 275 ms undivided, 3.1 ms micro-batched, 2.6 ms unlimited.
  EXPECT_NEAR(undivided->total_time_ms, 275.0, 275.0 * 0.02);
  EXPECT_NEAR(wr->total_time_ms, 3.1, 3.1 * 0.02);
  EXPECT_NEAR(unlimited_sum(*wr), 2.6, 2.6 * 0.02);
}

TEST(ProbeData, WdWithinTotalBudgetIsAtLeastAsGoodAsWr) {
  const ProbeData data = load("h200_cudnn919_conv_probe.csv");
  const auto kernels = alexnet(data, {"fwd", "bwd_data", "bwd_filter"});
  const size_t per_kernel = 64 * kMiB;
  auto wr = plan_wr(kernels, 256, per_kernel);
  auto wd = plan_wd(kernels, 256, per_kernel * kernels.size());
  ASSERT_TRUE(wr.has_value()) << wr.status().to_string();
  ASSERT_TRUE(wd.has_value()) << wd.status().to_string();
  EXPECT_EQ(wd->ilp.status, "optimal");
  // wr's choices fit M = 15 × 64 MiB, so wd can only do better (up to the 2 % threshold rule).
  EXPECT_LE(wd->total_time_ms, wr->total_time_ms * 1.02);
  EXPECT_LE(wd->pool_bytes, per_kernel * kernels.size());
  size_t offset = 0;
  double total = 0;
  for (const KernelPlan& plan : wd->kernels) {
    EXPECT_EQ(plan.workspace_offset, offset) << plan.kernel;
    EXPECT_EQ(plan.workspace_offset % kWorkspaceAlignment, 0u);
    EXPECT_GE(plan.workspace_size, plan.config.workspace_bytes) << plan.kernel;
    offset += plan.workspace_size;
    total += plan.config.time_ms;
  }
  EXPECT_EQ(offset, wd->pool_bytes);
  EXPECT_NEAR(total, wd->total_time_ms, 1e-9);
  EXPECT_NEAR(wd->ilp.objective_ms, wd->total_time_ms, 1e-9);
}

TEST(ProbeData, WdAtThePoolOfItsOwnPlanKeepsItsTime) {
  // Issue 11: the pool a wd plan uses is a budget its optimum fills to the byte;
  // planning again at exactly that budget must give the same time, proven optimal.
  const ProbeData data = load("h200_cudnn919_conv_probe.csv");
  const auto kernels = alexnet(data, {"fwd", "bwd_data", "bwd_filter"});
  for (size_t mib : {8, 24, 64, 160, 400}) {
    auto at_budget = plan_wd(kernels, 256, mib * kMiB);
    ASSERT_TRUE(at_budget.has_value()) << at_budget.status().to_string();
    auto at_pool = plan_wd(kernels, 256, at_budget->pool_bytes);
    ASSERT_TRUE(at_pool.has_value()) << at_pool.status().to_string();
    EXPECT_EQ(at_budget->ilp.status, "optimal") << mib << " MiB";
    EXPECT_EQ(at_pool->ilp.status, "optimal") << mib << " MiB";
    EXPECT_NEAR(at_pool->total_time_ms, at_budget->total_time_ms, 1e-9) << mib << " MiB";
    EXPECT_LE(at_pool->pool_bytes, at_budget->pool_bytes) << mib << " MiB";
  }
}

// Two kernels, B = 2. "a" gains a lot from workspace, "b" little.
std::vector<NamedKernel> two_kernels() {
  KernelTimings a, b;
  a.by_batch[2] = {{0, "", 40.0, 0, true}, {1, "", 10.0, 1000, true}};
  a.by_batch[1] = {{0, "", 20.0, 0, true}};
  b.by_batch[2] = {{0, "", 12.0, 0, true}, {1, "", 11.0, 1000, true}};
  b.by_batch[1] = {{0, "", 6.0, 0, true}};
  return {{"a", a}, {"b", b}};
}

TEST(Policies, WdSpendsTheBudgetWhereItPays) {
  PolicyOptions options;
  options.exhaustive_ilp = true;
  auto wd = plan_wd(two_kernels(), 2, 1024, options);
  ASSERT_TRUE(wd.has_value()) << wd.status().to_string();
  ASSERT_EQ(wd->kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(wd->kernels[0].config.time_ms, 10.0);  // "a" takes the 1000 (→1024) bytes
  EXPECT_DOUBLE_EQ(wd->kernels[1].config.time_ms, 12.0);
  EXPECT_EQ(wd->kernels[0].workspace_size, 1024u);
  EXPECT_EQ(wd->kernels[1].workspace_offset, 1024u);
  EXPECT_EQ(wd->pool_bytes, 1024u);
  auto cbc = plan_wd(two_kernels(), 2, 1024);
  ASSERT_TRUE(cbc.has_value()) << cbc.status().to_string();
  EXPECT_DOUBLE_EQ(cbc->total_time_ms, 22.0);
  // Too small a budget for anything but zero workspace still works; none at all is impossible here.
  auto zero = plan_wd(two_kernels(), 2, 0, options);
  ASSERT_TRUE(zero.has_value());
  EXPECT_DOUBLE_EQ(zero->total_time_ms, 52.0);
}

TEST(Policies, UndividedAndWrReportInfeasibleKernel) {
  std::vector<NamedKernel> kernels = two_kernels();
  kernels[1].timings.by_batch[2] = {{1, "", 11.0, 1000, true}};
  kernels[1].timings.by_batch.erase(1);
  auto undivided = plan_undivided(kernels, 2, 999);
  ASSERT_FALSE(undivided.has_value());
  EXPECT_EQ(undivided.status().code(), StatusCode::kInfeasible);
  EXPECT_NE(undivided.status().message().find("'b'"), std::string::npos) << undivided.status().message();
  EXPECT_NE(undivided.status().message().find("1000 bytes"), std::string::npos) << undivided.status().message();
  EXPECT_FALSE(plan_wr(kernels, 2, 999).has_value());
  auto wd = plan_wd(kernels, 2, 999);
  ASSERT_FALSE(wd.has_value());
  EXPECT_EQ(wd.status().code(), StatusCode::kInfeasible);
  EXPECT_NE(wd.status().message().find("1024 bytes"), std::string::npos) << wd.status().message();
}

// Sharing: with one stream no two kernels overlap, so each kernel alone must fit
// the budget; on AlexNet forward at 64 MiB that reaches wr's time, where the
// paper's model (Σ slices ≤ M) cannot.
TEST(Policies, WdSharedWorkspaceEqualsWrAndBeatsUnshared) {
  const ProbeData data = load("h200_cudnn919_conv_probe.csv");
  const auto kernels = alexnet(data, {"fwd"});
  PolicyOptions shared;
  shared.share_workspace = true;
  auto wd_shared = plan_wd(kernels, 256, 64 * kMiB, shared);
  auto wd = plan_wd(kernels, 256, 64 * kMiB);
  auto wr = plan_wr(kernels, 256, 64 * kMiB);
  ASSERT_TRUE(wd_shared.has_value() && wd.has_value() && wr.has_value());
  EXPECT_NEAR(wd_shared->unshared_time_ms, wd->total_time_ms, 1e-9);
  EXPECT_LT(wd_shared->total_time_ms, wd->total_time_ms);
  EXPECT_LE(wd_shared->total_time_ms, wr->total_time_ms * 1.0001);  // wr also applies the 2 % threshold
  EXPECT_LE(wd_shared->pool_bytes, 64 * kMiB);
  for (const KernelPlan& k : wd_shared->kernels) {
    EXPECT_EQ(k.workspace_offset, 0u);
    EXPECT_LE(k.workspace_size, wd_shared->pool_bytes);
  }
}

// A kernel called three times weighs three times in the ILP and in the totals.
TEST(Policies, CallSitesWeighTimes) {
  auto table = [](double fast, double slow) {
    KernelTimings t;
    t.by_batch[4] = {{0, "fast", fast, 1000, true}, {1, "slow", slow, 0, true}};
    t.by_batch[2] = {{1, "slow", slow / 2, 0, true}};
    t.by_batch[1] = {{1, "slow", slow / 4, 0, true}};
    return t;
  };
  // Budget for one fast kernel only. Alone, B gains 5 ms and A 6 ms from it;
  // but A's 6 ms are per call and B runs 3 times (15 ms): the ILP must give it to B.
  std::vector<NamedKernel> kernels = {{"A", table(1.0, 7.0), 1}, {"B", table(1.0, 6.0), 3}};
  PolicyOptions options;
  options.batch_sizes = BatchSizePolicy::kUndivided;
  auto wd = plan_wd(kernels, 4, 1024, options);
  ASSERT_TRUE(wd.has_value()) << wd.status().to_string();
  EXPECT_EQ(wd->kernels[0].config.parts[0].algorithm, 1);
  EXPECT_EQ(wd->kernels[1].config.parts[0].algorithm, 0);
  EXPECT_NEAR(wd->total_time_ms, 7.0 + 3 * 1.0, 1e-9);
  auto undivided = plan_undivided(kernels, 4, 1024);
  ASSERT_TRUE(undivided.has_value());
  EXPECT_NEAR(undivided->total_time_ms, 1.0 + 3 * 1.0, 1e-9);
}

}  // namespace
}  // namespace ucudnn::optimizer
