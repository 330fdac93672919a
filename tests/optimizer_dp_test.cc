// Tests for kernel keys, batch-size policies, the probe CSV loader and the
// per-kernel DP: DP and Pareto fronts against brute-force enumeration on random
// small tables, the division threshold, infeasibility errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <unordered_set>

#include "optimizer/benchmark_table.h"
#include "optimizer/dp.h"
#include "optimizer/kernel_key.h"
#include "optimizer/probe_csv.h"

namespace ucudnn::optimizer {
namespace {

constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();

// ---- kernel keys ----------------------------------------------------------------

ConvKernelKey sample_key() {
  ConvKernelKey key;
  key.device_name = "NVIDIA H200";
  key.sm_count = 132;
  key.cuda_version = 13000;
  key.cudnn_version = 91900;
  key.driver_version = 13000;
  key.n = 256; key.c = 3; key.h = 224; key.w = 224;
  key.k = 64; key.r = 11; key.s = 11;
  key.pad_h = 2; key.pad_w = 2; key.stride_h = 4; key.stride_w = 4;
  return key;
}

TEST(KernelKey, CanonicalString) {
  EXPECT_EQ(sample_key().to_string(),
            "dev=NVIDIA H200;sm=132;cuda=13000;cudnn=91900;drv=13000;dtype=float32;math=default;"
            "layout=nchw;n=256;c=3;h=224;w=224;k=64;r=11;s=11;pad=2,2;stride=4,4;dil=1,1;g=1;dir=fwd");
}

TEST(KernelKey, EveryFieldChangesStringEqualityAndHash) {
  const ConvKernelKey base = sample_key();
  std::vector<std::function<void(ConvKernelKey&)>> edits = {
      [](ConvKernelKey& k) { k.device_name = "NVIDIA A100"; },
      [](ConvKernelKey& k) { k.sm_count = 108; },
      [](ConvKernelKey& k) { k.cuda_version = 12040; },
      [](ConvKernelKey& k) { k.cudnn_version = 91400; },
      [](ConvKernelKey& k) { k.driver_version = 12000; },
      [](ConvKernelKey& k) { k.dtype = "float16"; },
      [](ConvKernelKey& k) { k.math_type = "tensor_op"; },
      [](ConvKernelKey& k) { k.layout = "nhwc"; },
      [](ConvKernelKey& k) { k.n = 128; },
      [](ConvKernelKey& k) { k.c = 4; },
      [](ConvKernelKey& k) { k.h = 225; },
      [](ConvKernelKey& k) { k.w = 225; },
      [](ConvKernelKey& k) { k.k = 65; },
      [](ConvKernelKey& k) { k.r = 3; },
      [](ConvKernelKey& k) { k.s = 3; },
      [](ConvKernelKey& k) { k.pad_h = 1; },
      [](ConvKernelKey& k) { k.pad_w = 1; },
      [](ConvKernelKey& k) { k.pad_h_end = 3; },  // asymmetric: bottom 3 against top 2
      [](ConvKernelKey& k) { k.stride_h = 2; },
      [](ConvKernelKey& k) { k.stride_w = 2; },
      [](ConvKernelKey& k) { k.dilation_h = 2; },
      [](ConvKernelKey& k) { k.dilation_w = 2; },
      [](ConvKernelKey& k) { k.groups = 2; },
      [](ConvKernelKey& k) { k.direction = ConvDirection::kBackwardData; },
      [](ConvKernelKey& k) { k.direction = ConvDirection::kBackwardFilter; },
  };
  std::unordered_set<std::string> strings = {base.to_string()};
  for (size_t i = 0; i < edits.size(); ++i) {
    ConvKernelKey changed = base;
    edits[i](changed);
    EXPECT_NE(changed, base) << "edit " << i;
    EXPECT_TRUE(strings.insert(changed.to_string()).second) << "edit " << i << ": " << changed.to_string();
  }
  ConvKernelKey copy = base;
  EXPECT_EQ(copy, base);
  EXPECT_EQ(std::hash<ConvKernelKey>{}(copy), std::hash<ConvKernelKey>{}(base));
}

TEST(KernelKey, SeparatorsInNamesCannotCollide) {
  ConvKernelKey a = sample_key(), b = sample_key();
  a.device_name = "x;sm=1";
  b.device_name = "x";
  b.sm_count = 1;
  EXPECT_NE(a.to_string(), b.to_string());
}

TEST(KernelKey, DirectionNames) {
  EXPECT_STREQ(conv_direction_name(ConvDirection::kForward), "fwd");
  EXPECT_STREQ(conv_direction_name(ConvDirection::kBackwardData), "bwd_data");
  EXPECT_STREQ(conv_direction_name(ConvDirection::kBackwardFilter), "bwd_filter");
  EXPECT_EQ(parse_conv_direction("bwdd"), ConvDirection::kBackwardData);
  EXPECT_EQ(parse_conv_direction("bwd_filter"), ConvDirection::kBackwardFilter);
  EXPECT_EQ(parse_conv_direction("backward"), std::nullopt);
}

// ---- batch-size policies --------------------------------------------------------

TEST(MicroBatchSizes, Policies) {
  struct Case { BatchSizePolicy policy; int64_t batch; std::vector<int64_t> expected; };
  const std::vector<Case> cases = {
      {BatchSizePolicy::kAll, 4, {1, 2, 3, 4}},
      {BatchSizePolicy::kPowerOfTwo, 8, {1, 2, 4, 8}},
      {BatchSizePolicy::kPowerOfTwo, 6, {1, 2, 4, 6}},
      {BatchSizePolicy::kPowerOfTwo, 1, {1}},
      {BatchSizePolicy::kUndivided, 256, {256}},
      {BatchSizePolicy::kAll, 0, {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(micro_batch_sizes(c.policy, c.batch), c.expected)
        << batch_size_policy_name(c.policy) << " B=" << c.batch;
  }
}

// ---- DP vs brute force ----------------------------------------------------------

KernelTimings random_table(std::mt19937& rng, int64_t batch) {
  KernelTimings t;
  std::uniform_int_distribution<int> algo_count(1, 4), ws_units(0, 8), coin(0, 9);
  std::uniform_real_distribution<double> per_sample(0.5, 2.0);
  for (int64_t m = 1; m <= batch; ++m) {
    if (m > 1 && coin(rng) == 0) continue;  // an unmeasured size now and then
    const int count = algo_count(rng);
    for (int a = 0; a < count; ++a) {
      AlgoMeasurement meas;
      meas.algorithm = a;
      // Fixed overhead + per-sample cost, so divisions are sometimes worth it.
      meas.time_ms = 0.3 + per_sample(rng) * static_cast<double>(m) / (1.0 + a);
      meas.workspace_bytes = static_cast<size_t>(ws_units(rng)) * 1000 * static_cast<size_t>(a + m) / 2;
      meas.available = coin(rng) != 0;
      t.by_batch[m].push_back(meas);
    }
  }
  return t;
}

struct Point { double time_ms; size_t workspace_bytes; };

// Every configuration (multiset of (size, algorithm) summing to batch) with all
// parts within `limit`.
std::vector<Point> brute_force(const KernelTimings& t, int64_t batch, const std::vector<int64_t>& sizes,
                               size_t limit) {
  std::vector<Point> out;
  std::function<void(int64_t, int64_t, double, size_t)> rec = [&](int64_t left, int64_t max_part, double time,
                                                                  size_t ws) {
    if (left == 0) {
      out.push_back({time, ws});
      return;
    }
    for (int64_t m : sizes) {
      if (m > left || m > max_part) continue;
      auto it = t.by_batch.find(m);
      if (it == t.by_batch.end()) continue;
      for (const AlgoMeasurement& a : it->second) {
        if (!a.available || a.workspace_bytes > limit) continue;
        rec(left - m, m, time + a.time_ms, std::max(ws, a.workspace_bytes));
      }
    }
  };
  rec(batch, batch, 0.0, 0);
  return out;
}

// The configuration's parts exist in the table, sum to batch, and its time and
// workspace are the sum and the max of theirs.
void expect_consistent(const KernelTimings& t, int64_t batch, const Configuration& c) {
  int64_t total = 0;
  double time = 0;
  size_t ws = 0;
  for (const MicroBatch& part : c.parts) {
    total += part.size;
    const auto& row = t.by_batch.at(part.size);
    auto it = std::find_if(row.begin(), row.end(), [&](const AlgoMeasurement& a) { return a.algorithm == part.algorithm; });
    ASSERT_NE(it, row.end());
    EXPECT_TRUE(it->available);
    time += it->time_ms;
    ws = std::max(ws, it->workspace_bytes);
  }
  EXPECT_EQ(total, batch);
  EXPECT_NEAR(c.time_ms, time, 1e-9);
  EXPECT_EQ(c.workspace_bytes, ws);
}

TEST(Dp, FastestMatchesBruteForceOnRandomTables) {
  std::mt19937 rng(1234);
  int feasible_cases = 0, infeasible_cases = 0, divided_cases = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t batch = 1 + trial % 8;
    KernelTimings t = random_table(rng, batch);
    const std::vector<size_t> limits = {0, 2000, 5000, 12000, kNoLimit};
    for (BatchSizePolicy policy : {BatchSizePolicy::kAll, BatchSizePolicy::kPowerOfTwo, BatchSizePolicy::kUndivided}) {
      const std::vector<int64_t> sizes = micro_batch_sizes(policy, batch);
      for (size_t limit : limits) {
        std::vector<Point> all = brute_force(t, batch, sizes, limit);
        auto result = fastest_configuration(t, batch, limit, sizes, "k");
        if (all.empty()) {
          ASSERT_FALSE(result.has_value());
          EXPECT_EQ(result.status().code(), StatusCode::kInfeasible);
          ++infeasible_cases;
          continue;
        }
        ASSERT_TRUE(result.has_value()) << result.status().to_string();
        double best = std::numeric_limits<double>::infinity();
        for (const Point& p : all) best = std::min(best, p.time_ms);
        EXPECT_NEAR(result->time_ms, best, 1e-9) << "trial " << trial << " limit " << limit;
        EXPECT_LE(result->workspace_bytes, limit);
        for (const MicroBatch& part : result->parts) {
          EXPECT_NE(std::find(sizes.begin(), sizes.end(), part.size), sizes.end());
        }
        expect_consistent(t, batch, *result);
        ++feasible_cases;
        if (result->is_divided()) ++divided_cases;
      }
    }
  }
  // The random tables must exercise all three outcomes.
  EXPECT_GT(feasible_cases, 100);
  EXPECT_GT(infeasible_cases, 10);
  EXPECT_GT(divided_cases, 50);
}

TEST(Dp, ParetoFrontIsNonDominatedAndComplete) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t batch = 1 + trial % 8;
    KernelTimings t = random_table(rng, batch);
    const std::vector<int64_t> sizes =
        micro_batch_sizes(trial % 2 ? BatchSizePolicy::kAll : BatchSizePolicy::kPowerOfTwo, batch);
    std::vector<Point> all = brute_force(t, batch, sizes, kNoLimit);
    auto front = pareto_front(t, batch, sizes, "k");
    if (all.empty()) {
      EXPECT_EQ(front.status().code(), StatusCode::kInfeasible);
      continue;
    }
    ASSERT_TRUE(front.has_value()) << front.status().to_string();
    ASSERT_FALSE(front->empty());
    constexpr double eps = 1e-9;
    for (size_t i = 0; i < front->size(); ++i) {
      const Configuration& a = (*front)[i];
      expect_consistent(t, batch, a);
      if (i > 0) {  // sorted: workspace up, time down (strictly: no duplicates)
        EXPECT_GT(a.workspace_bytes, (*front)[i - 1].workspace_bytes);
        EXPECT_LT(a.time_ms, (*front)[i - 1].time_ms);
      }
      for (size_t j = 0; j < front->size(); ++j) {
        if (i == j) continue;
        const Configuration& b = (*front)[j];
        const bool dominates = b.time_ms <= a.time_ms + eps && b.workspace_bytes <= a.workspace_bytes;
        EXPECT_FALSE(dominates) << "front point " << j << " dominates " << i;
      }
    }
    for (const Point& p : all) {
      bool covered = std::any_of(front->begin(), front->end(), [&](const Configuration& f) {
        return f.time_ms <= p.time_ms + eps && f.workspace_bytes <= p.workspace_bytes;
      });
      EXPECT_TRUE(covered) << "trial " << trial << ": (" << p.time_ms << " ms, " << p.workspace_bytes
                           << " B) not covered by the front";
    }
    // The front's fastest point is the unlimited DP optimum.
    auto fastest = fastest_configuration(t, batch, kNoLimit, sizes, "k");
    ASSERT_TRUE(fastest.has_value());
    EXPECT_NEAR(front->back().time_ms, fastest->time_ms, eps);
  }
}

// A hand-made table: the full batch needs 100 bytes for 10 ms (or 0 bytes for
// 40 ms); half batches take 4.5 ms each within 10 bytes.
KernelTimings hand_table(double half_time) {
  KernelTimings t;
  t.by_batch[2] = {{0, "slow", 40.0, 0, true}, {1, "fast", 10.0, 100, true}};
  t.by_batch[1] = {{0, "slow", 20.0, 0, true}, {1, "fast", half_time, 10, true}};
  return t;
}

TEST(Dp, HandTableAndFront) {
  const KernelTimings t = hand_table(4.5);
  auto at_10 = fastest_configuration(t, 2, 10, {1, 2});
  ASSERT_TRUE(at_10.has_value());
  EXPECT_EQ(at_10->parts, (std::vector<MicroBatch>{{1, 1}, {1, 1}}));
  EXPECT_DOUBLE_EQ(at_10->time_ms, 9.0);
  EXPECT_EQ(at_10->workspace_bytes, 10u);
  auto front = pareto_front(t, 2, {1, 2});
  ASSERT_TRUE(front.has_value());
  ASSERT_EQ(front->size(), 2u);  // (40 ms, 0 B) and (9 ms, 10 B); (10 ms, 100 B) is dominated
  EXPECT_DOUBLE_EQ((*front)[0].time_ms, 40.0);
  EXPECT_EQ((*front)[0].workspace_bytes, 0u);
  EXPECT_DOUBLE_EQ((*front)[1].time_ms, 9.0);
}

TEST(Dp, ThresholdKeepsUndividedUnlessDivisionWinsClearly) {
  struct Case { double half_time; size_t limit; double threshold; bool divided; double time; };
  // Undivided within 100 B: 10 ms. Divided: 2 × half_time.
  const std::vector<Case> cases = {
      {4.5, 100, 0.02, true, 9.0},     // 10 % faster: divide
      {4.95, 100, 0.02, false, 10.0},  // 1 % faster: noise, keep undivided
      {4.95, 100, 0.0, true, 9.9},     // no threshold: any gain divides
      {4.89, 100, 0.02, true, 9.78},   // 2.2 % faster: divide
      {4.95, 10, 0.02, true, 9.9},     // undivided does not fit 10 B: the division is the only fast option
      {6.0, 100, 0.02, false, 10.0},   // division slower
  };
  for (const Case& c : cases) {
    auto chosen = choose_with_threshold(hand_table(c.half_time), 2, c.limit, {1, 2}, c.threshold, "k");
    ASSERT_TRUE(chosen.has_value()) << chosen.status().to_string();
    EXPECT_EQ(chosen->is_divided(), c.divided) << "half " << c.half_time << " limit " << c.limit;
    EXPECT_NEAR(chosen->time_ms, c.time, 1e-12);
  }
}

TEST(Dp, InfeasibleNamesKernelAndSmallestWorkspace) {
  KernelTimings t;
  t.by_batch[4] = {{0, "", 1.0, 5000, true}, {1, "", 0.5, 9000, true}};
  t.by_batch[2] = {{0, "", 1.0, 3000, true}, {1, "", 1.0, 100, false}};  // the 100 B one is unavailable
  t.by_batch[1] = {{0, "", 1.0, 4000, true}};
  auto result = fastest_configuration(t, 4, 2999, {1, 2, 4}, "alexnet/conv2/fwd");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.status().code(), StatusCode::kInfeasible);
  EXPECT_NE(result.status().message().find("alexnet/conv2/fwd"), std::string::npos) << result.status().message();
  EXPECT_NE(result.status().message().find("3000 bytes"), std::string::npos) << result.status().message();
  EXPECT_EQ(smallest_feasible_workspace(t, 4, {1, 2, 4}), 3000u);
  EXPECT_EQ(smallest_feasible_workspace(t, 4, {4}), 5000u);
  EXPECT_EQ(smallest_feasible_workspace(t, 3, {2}), std::nullopt);  // 2s never sum to 3
  auto undivided = undivided_configuration(t, 4, 4999, "k");
  ASSERT_FALSE(undivided.has_value());
  EXPECT_NE(undivided.status().message().find("5000 bytes"), std::string::npos) << undivided.status().message();
  EXPECT_EQ(fastest_configuration(t, 0, 100, {1}).status().code(), StatusCode::kInvalidArgument);
}

// ---- probe CSV ------------------------------------------------------------------

TEST(ProbeCsv, ParsesHeaderAndRows) {
  const std::string text =
      "#cudnn_version 91900 B 256 math 0\n"
      "net,layer,dir,b,algo,time_ms,ws_bytes,mathtype\n"
      "alexnet,conv1,fwd,1,0,0.04038,0,0\n"
      "alexnet,conv1,fwd,1,2,0.18867,1024,0\n"
      "alexnet,conv1,bwdd,2,1,0.5,2048,0\r\n";
  auto data = parse_probe_csv(text, "t.csv");
  ASSERT_TRUE(data.has_value()) << data.status().to_string();
  EXPECT_EQ(data->cudnn_version, 91900);
  EXPECT_EQ(data->batch, 256);
  ASSERT_EQ(data->kernels.size(), 2u);
  const KernelTimings& fwd = data->kernels.at("alexnet/conv1/fwd");
  ASSERT_EQ(fwd.by_batch.at(1).size(), 2u);
  EXPECT_EQ(fwd.by_batch.at(1)[1].algorithm, 2);
  EXPECT_DOUBLE_EQ(fwd.by_batch.at(1)[1].time_ms, 0.18867);
  EXPECT_EQ(fwd.by_batch.at(1)[1].workspace_bytes, 1024u);
  EXPECT_EQ(data->kernels.at("alexnet/conv1/bwd_data").by_batch.at(2)[0].workspace_bytes, 2048u);
}

TEST(ProbeCsv, MalformedLinesNameTheLine) {
  const std::string head = "#cudnn_version 91900 B 256 math 0\nnet,layer,dir,b,algo,time_ms,ws_bytes,mathtype\n";
  struct Case { std::string body; std::string expected; };
  const std::vector<Case> cases = {
      {"alexnet,conv1,fwd,1,0,0.04,0\n", "t.csv:3: expected 8"},
      {"alexnet,conv1,sideways,1,0,0.04,0,0\n", "t.csv:3: unknown direction 'sideways'"},
      {"alexnet,conv1,fwd,1,0,0.04,0,0\nalexnet,conv1,fwd,x,0,0.04,0,0\n", "t.csv:4: micro-batch 'x'"},
      {"alexnet,conv1,fwd,0,0,0.04,0,0\n", "t.csv:3: micro-batch '0'"},
      {"alexnet,conv1,fwd,1,0,fast,0,0\n", "t.csv:3: time_ms 'fast'"},
      {"alexnet,conv1,fwd,1,0,0.04,-5,0\n", "t.csv:3: ws_bytes '-5'"},
      {"alexnet,conv1,fwd,1,0,0.04,12abc,0\n", "t.csv:3: ws_bytes '12abc'"},
  };
  for (const Case& c : cases) {
    auto data = parse_probe_csv(head + c.body, "t.csv");
    ASSERT_FALSE(data.has_value()) << c.body;
    EXPECT_EQ(data.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(data.status().message().find(c.expected), std::string::npos)
        << "got: " << data.status().message() << "\nexpected: " << c.expected;
  }
  EXPECT_FALSE(parse_probe_csv("net,layer\n", "t.csv").has_value());
  EXPECT_FALSE(parse_probe_csv("", "t.csv").has_value());
  EXPECT_EQ(load_probe_csv("/nonexistent/probe.csv").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ucudnn::optimizer
