// The optimizer report (optimizer/report.h): text, JSON and HTML built from
// PlanResults that the real policies (wr, wd on CBC) produce over the H200
// AlexNet probe data (tests/data) and over small hand-written tables. Checks:
// every kernel appears, totals equal the PolicyResult's sums, JSON numbers equal
// the PolicyResult's, missing undivided times show as n/a / null, the HTML has
// one <svg> per kernel front plus the bar chart, balanced tags, escaped names and
// no external resources.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "optimizer/probe_csv.h"
#include "optimizer/report.h"
#include "tests/test_paths.h"

namespace ucudnn::optimizer {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

std::string data_path(const std::string& name) {
  return ucudnn_test::source_dir() + "/tests/data/" + name;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

std::string ms4(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f ms", v);
  return buf;
}

// AlexNet's five forward convolutions at batch 256, their (real) shapes, and a
// graph whose Conv nodes carry names that need escaping.
struct Fixture {
  ir::Graph graph;
  std::vector<NamedKernel> named;
  std::vector<ConvKernel> kernels;
  int64_t batch = 0;
};

Fixture alexnet_fixture() {
  Fixture f;
  auto data = load_probe_csv(data_path("h200_cudnn919_conv_probe.csv"));
  EXPECT_TRUE(data.has_value()) << data.status().to_string();
  if (!data) return f;
  f.batch = data->batch;
  const std::vector<Shape> x = {{256, 3, 224, 224}, {256, 64, 27, 27}, {256, 192, 13, 13}, {256, 384, 13, 13}, {256, 256, 13, 13}};
  const std::vector<Shape> w = {{64, 3, 11, 11}, {192, 64, 5, 5}, {384, 192, 3, 3}, {256, 384, 3, 3}, {256, 256, 3, 3}};
  for (int layer = 1; layer <= 5; ++layer) {
    const std::string key = "alexnet/conv" + std::to_string(layer) + "/fwd";
    auto it = data->kernels.find(key);
    EXPECT_NE(it, data->kernels.end()) << key;
    if (it == data->kernels.end()) continue;
    ir::Node node;
    node.op = OpKind::kConv;
    node.name = layer == 2 ? "features.<conv2>&\"x\"" : "conv" + std::to_string(layer);
    f.graph.nodes.push_back(node);
    f.named.push_back({key, it->second});
    ConvKernel kernel;
    kernel.nodes = {static_cast<ir::NodeId>(f.graph.nodes.size() - 1)};
    kernel.x_shape = x[layer - 1];
    kernel.w_shape = w[layer - 1];
    f.kernels.push_back(kernel);
  }
  return f;
}

PlanResult wrap(const Fixture& f, Policy policy, size_t workspace, PolicyResult policy_result) {
  PlanResult result;
  result.options.policy = policy;
  result.options.workspace_bytes = workspace;
  result.kernels = f.kernels;
  result.timings = f.named;
  result.policy = std::move(policy_result);
  result.plan.workspace_pool_bytes = result.policy.pool_bytes;
  result.kernels_benchmarked = 2;
  result.kernels_reused = 3;
  return result;
}

struct Case {
  const char* name;
  Policy policy;
  size_t workspace;
};

class ReportOnProbe : public ::testing::TestWithParam<Case> {};

TEST_P(ReportOnProbe, TextJsonAndHtmlAgreeWithThePolicy) {
  const Case c = GetParam();
  const Fixture f = alexnet_fixture();
  ASSERT_EQ(f.named.size(), 5u);
  auto policy = c.policy == Policy::kWd ? plan_wd(f.named, f.batch, c.workspace) : plan_wr(f.named, f.batch, c.workspace);
  ASSERT_TRUE(policy.has_value()) << policy.status().to_string();
  const PlanResult result = wrap(f, c.policy, c.workspace, *policy);
  const PolicyResult& p = result.policy;
  ASSERT_EQ(p.kernels.size(), 5u);

  double undivided = 0, unlimited = 0, predicted = 0;
  for (const KernelPlan& k : p.kernels) {
    ASSERT_GE(k.undivided_time_ms, 0) << k.kernel;  // AlexNet fwd always has an undivided algorithm here
    undivided += k.undivided_time_ms;
    unlimited += k.unlimited_time_ms;
    predicted += k.config.time_ms;
  }
  EXPECT_NEAR(predicted, p.total_time_ms, 1e-9);

  // Text: every kernel, its configuration, and the network totals.
  const std::string text = report_text(result, f.graph, "alexnet.onnx");
  for (const ir::Node& node : f.graph.nodes) EXPECT_NE(text.find(node.name), std::string::npos) << node.name;
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_NE(text.find("kernel " + std::to_string(k + 1) + "/5"), std::string::npos);
    EXPECT_NE(text.find(format_configuration(p.kernels[k].config, f.named[k].timings)), std::string::npos);
    EXPECT_NE(text.find(ms4(p.kernels[k].config.time_ms)), std::string::npos);
  }
  const size_t network = text.find("network: 5 kernels, 5 convolution nodes");
  ASSERT_NE(network, std::string::npos) << text;
  const std::string totals = text.substr(network);
  EXPECT_NE(totals.find("predicted          " + ms4(p.total_time_ms)), std::string::npos) << totals;
  EXPECT_NE(totals.find("undivided          " + ms4(undivided)), std::string::npos) << totals;
  EXPECT_NE(totals.find("unlimited          " + ms4(unlimited)), std::string::npos) << totals;
  EXPECT_NE(totals.find("kernels benchmarked 2, reused from the database 3"), std::string::npos);
  EXPECT_EQ(totals.find("ILP:") != std::string::npos, c.policy == Policy::kWd);

  // JSON: the numbers are the PolicyResult's, also after a dump/parse round trip.
  const nlohmann::json j = nlohmann::json::parse(report_json(result, f.graph, "alexnet.onnx").dump());
  EXPECT_EQ(j["policy"], policy_name(c.policy));
  EXPECT_EQ(j["batch"], f.batch);
  ASSERT_EQ(j["kernels"].size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    const nlohmann::json& jk = j["kernels"][k];
    const KernelPlan& kp = p.kernels[k];
    EXPECT_EQ(jk["nodes"][0], f.graph.nodes[k].name);
    EXPECT_EQ(jk["predicted_ms"].get<double>(), kp.config.time_ms);
    EXPECT_EQ(jk["workspace_bytes"].get<size_t>(), kp.config.workspace_bytes);
    EXPECT_EQ(jk["workspace_slice_bytes"].get<size_t>(), kp.workspace_size);
    EXPECT_EQ(jk["workspace_offset"].get<size_t>(), kp.workspace_offset);
    EXPECT_EQ(jk["undivided_ms"].get<double>(), kp.undivided_time_ms);
    EXPECT_EQ(jk["unlimited_ms"].get<double>(), kp.unlimited_time_ms);
    EXPECT_EQ(jk["input_shape"].get<Shape>(), f.kernels[k].x_shape);
    ASSERT_EQ(jk["micro_batches"].size(), kp.config.parts.size());
    for (size_t i = 0; i < kp.config.parts.size(); ++i) {
      EXPECT_EQ(jk["micro_batches"][i]["size"].get<int64_t>(), kp.config.parts[i].size);
      EXPECT_EQ(jk["micro_batches"][i]["algorithm"].get<int>(), kp.config.parts[i].algorithm);
    }
    EXPECT_FALSE(jk["pareto_front"].empty());
    // The chosen time is never better than the front's best within its own workspace.
    double best = 1e300;
    for (const auto& point : jk["pareto_front"])
      if (point["workspace_bytes"].get<size_t>() <= kp.config.workspace_bytes) best = std::min(best, point["time_ms"].get<double>());
    EXPECT_LE(best, kp.config.time_ms * (1 + 1e-12));
  }
  EXPECT_EQ(j["totals"]["predicted_ms"].get<double>(), p.total_time_ms);
  EXPECT_NEAR(j["totals"]["undivided_ms"].get<double>(), undivided, 1e-9);
  EXPECT_NEAR(j["totals"]["unlimited_ms"].get<double>(), unlimited, 1e-9);
  EXPECT_EQ(j["pool_bytes"].get<size_t>(), p.pool_bytes);
  if (c.policy == Policy::kWd) {
    ASSERT_TRUE(j["ilp"].is_object());
    EXPECT_EQ(j["ilp"]["objective_ms"].get<double>(), p.ilp.objective_ms);
    EXPECT_EQ(j["ilp"]["status"], p.ilp.status);
    EXPECT_LE(p.pool_bytes, c.workspace);
  } else {
    EXPECT_TRUE(j["ilp"].is_null());
  }

  // HTML: one plot per kernel front plus the bar chart, balanced, escaped, self-contained.
  const std::string html = report_html(result, f.graph, "alexnet.onnx");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(html, "<svg"), 6u);
  EXPECT_EQ(count(html, "</svg>"), 6u);
  EXPECT_EQ(count(html, "<html"), count(html, "</html>"));
  EXPECT_EQ(count(html, "<table"), count(html, "</table>"));
  EXPECT_EQ(count(html, "<figure>"), 5u);
  EXPECT_EQ(count(html, "stroke=\"#d62728\""), 5u);  // one chosen point per front
  EXPECT_EQ(html.find("<conv2>"), std::string::npos);
  EXPECT_NE(html.find("features.&lt;conv2&gt;&amp;&quot;x&quot;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(count(html, "http"), count(html, "http://www.w3.org/2000/svg"));  // only the SVG namespace
}

INSTANTIATE_TEST_SUITE_P(Policies, ReportOnProbe,
                         ::testing::Values(Case{"wr_64MiB", Policy::kWr, 64 * kMiB},
                                           Case{"wr_8MiB", Policy::kWr, 8 * kMiB},
                                           Case{"wd_64MiB", Policy::kWd, 64 * kMiB},
                                           Case{"wd_512MiB", Policy::kWd, 512 * kMiB}),
                         [](const auto& info) { return std::string(info.param.name); });

KernelTimings named_table() {
  KernelTimings t;
  t.by_batch[64] = {{1, "IMPLICIT_PRECOMP_GEMM", 1.0, 100, true}, {4, "FFT", 0.5, 1000, true}};
  t.by_batch[32] = {{1, "IMPLICIT_PRECOMP_GEMM", 0.6, 50, true}, {4, "FFT", 0.3, 500, true}};
  return t;
}

TEST(FormatConfiguration, NamesAlgorithmsAndGroupsRepeatedParts) {
  const KernelTimings t = named_table();
  Configuration c;
  c.parts = {{64, 1}, {32, 4}};
  EXPECT_EQ(format_configuration(c, t), "64×IMPLICIT_PRECOMP_GEMM(1) + 32×FFT(4)");
  c.parts = {{64, 1}, {64, 1}, {32, 4}};
  EXPECT_EQ(format_configuration(c, t), "2 × (64×IMPLICIT_PRECOMP_GEMM(1)) + 32×FFT(4)");
  c.parts = {{256, 3}};
  EXPECT_EQ(format_configuration(c, t), "256×algo 3");  // not measured: no name known
  EXPECT_EQ(format_configuration(Configuration{}, t), "(none)");
}

TEST(FormatSize, Units) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(64 * kMiB), "64.0 MiB");
  EXPECT_EQ(format_bytes(SIZE_MAX), "unlimited");
}

TEST(HtmlEscape, EscapesMarkupCharacters) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(html_escape("plain"), "plain");
}

// A kernel whose full batch fits no algorithm under the limit: only the divided
// configuration exists, so "undivided" is n/a / null and the network total too.
TEST(Report, KernelWithoutUndividedAlgorithm) {
  KernelTimings t;
  t.by_batch[2] = {{0, "GEMM", 1.0, 100, true}};
  t.by_batch[1] = {{0, "GEMM", 0.4, 50, true}};
  const std::vector<NamedKernel> named = {{"k", t}};
  auto policy = plan_wr(named, 2, 60);
  ASSERT_TRUE(policy.has_value()) << policy.status().to_string();
  ASSERT_EQ(policy->kernels[0].undivided_time_ms, -1);
  PlanResult result;
  result.options.policy = Policy::kWr;
  result.options.workspace_bytes = 60;
  result.timings = named;
  result.policy = *policy;
  ir::Graph graph;  // kernels without nodes are named after the policy's kernel
  const ReportData data = build_report(result, graph);
  ASSERT_EQ(data.kernels.size(), 1u);
  EXPECT_EQ(data.kernels[0].configuration, "2 × (1×GEMM(0))");
  EXPECT_EQ(data.kernels[0].batch, 2);
  EXPECT_EQ(data.kernels_without_undivided, 1);

  const std::string text = report_text(data);
  EXPECT_NE(text.find("undivided          n/a (within 60 B)"), std::string::npos) << text;
  EXPECT_NE(text.find("1 kernels have no undivided algorithm"), std::string::npos) << text;
  const nlohmann::json j = report_json(data);
  EXPECT_TRUE(j["kernels"][0]["undivided_ms"].is_null());
  EXPECT_TRUE(j["kernels"][0]["speedup_vs_undivided"].is_null());
  EXPECT_TRUE(j["totals"]["undivided_ms"].is_null());
  EXPECT_EQ(j["totals"]["predicted_ms"].get<double>(), 0.8);
  const std::string html = report_html(data);
  EXPECT_EQ(count(html, "<svg"), 2u);
  EXPECT_EQ(count(html, "</svg>"), 2u);
  EXPECT_NE(html.find("n/a"), std::string::npos);
}

// wd with --share-workspace: the report states what the unshared model would give.
TEST(Report, SharedWorkspaceShowsTheUnsharedTotal) {
  const Fixture f = alexnet_fixture();
  ASSERT_EQ(f.named.size(), 5u);
  PolicyOptions options;
  options.share_workspace = true;
  auto policy = plan_wd(f.named, f.batch, 64 * (size_t{1} << 20), options);
  ASSERT_TRUE(policy.has_value()) << policy.status().to_string();
  ASSERT_GT(policy->unshared_time_ms, policy->total_time_ms);
  const ReportData data =
      build_report(wrap(f, Policy::kWd, 64 * (size_t{1} << 20), std::move(policy).value()), f.graph, "alexnet");
  EXPECT_NE(report_text(data).find("without sharing"), std::string::npos);
  EXPECT_NEAR(report_json(data)["totals"]["unshared_ms"].get<double>(), data.unshared_ms, 1e-12);
  EXPECT_NE(report_html(data).find("without sharing"), std::string::npos);
  // Without sharing the field is null.
  auto unshared = plan_wd(f.named, f.batch, 64 * (size_t{1} << 20));
  ASSERT_TRUE(unshared.has_value());
  const ReportData plain =
      build_report(wrap(f, Policy::kWd, 64 * (size_t{1} << 20), std::move(unshared).value()), f.graph, "alexnet");
  EXPECT_TRUE(report_json(plain)["totals"]["unshared_ms"].is_null());
  EXPECT_EQ(report_text(plain).find("without sharing"), std::string::npos);
}

// --streams 2: the report names the convolutions on the side stream, in every format.
TEST(Report, ListsTheSideStreamConvolutions) {
  const Fixture f = alexnet_fixture();
  auto policy = plan_wd(f.named, f.batch, 64 * (size_t{1} << 20));
  ASSERT_TRUE(policy.has_value()) << policy.status().to_string();
  PlanResult result = wrap(f, Policy::kWd, 64 * (size_t{1} << 20), std::move(policy).value());
  result.options.streams = 2;
  ASSERT_FALSE(f.graph.nodes.empty());
  result.side_steps = {0};
  const std::string side = f.graph.nodes[0].name;
  const ReportData data = build_report(result, f.graph, "alexnet");
  EXPECT_NE(report_text(data).find("side stream        1 convolutions beside the main branch: " + side),
            std::string::npos)
      << report_text(data);
  EXPECT_EQ(report_json(data)["streams"].get<int>(), 2);
  EXPECT_EQ(report_json(data)["side_stream_nodes"], nlohmann::json::array({side}));
  EXPECT_NE(report_html(data).find("side stream"), std::string::npos);
  // One stream: no such line.
  result.options.streams = 1;
  result.side_steps.clear();
  EXPECT_EQ(report_text(build_report(result, f.graph, "alexnet")).find("side stream"), std::string::npos);
}

// An unlimited workspace (SIZE_MAX) is reported as what bounded the timings instead:
// the memory free on the device they were measured on.
TEST(Report, UnlimitedWorkspaceSaysWhatBoundedTheTimings) {
  const Fixture f = alexnet_fixture();
  for (Policy policy : {Policy::kWr, Policy::kWd}) {
    SCOPED_TRACE(policy_name(policy));
    auto planned = policy == Policy::kWd ? plan_wd(f.named, f.batch, SIZE_MAX) : plan_wr(f.named, f.batch, SIZE_MAX);
    ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
    PlanResult result = wrap(f, policy, SIZE_MAX, std::move(planned).value());
    result.plan.device = "cuda";
    ReportData data = build_report(result, f.graph, "alexnet");
    const char* scope = policy == Policy::kWd ? "total budget" : "per-kernel limit";
    EXPECT_NE(report_text(data).find(std::string(scope) + " unlimited (benchmarked with the free device memory)"),
              std::string::npos)
        << report_text(data);
    EXPECT_EQ(report_json(data)["workspace_limit"], "unlimited (benchmarked with the free device memory)");
    EXPECT_TRUE(report_json(data)["workspace_limit_bytes"].is_null());
    EXPECT_NE(report_html(data).find("unlimited (benchmarked with the free device memory)"), std::string::npos);
    // No kernel is held back by a limit: none is slower than its fastest undivided algorithm.
    EXPECT_LE(data.total_predicted_ms, data.total_unlimited_ms * (1 + 1e-12));
    result.plan.device = "cpu";
    EXPECT_NE(report_text(build_report(result, f.graph, "alexnet")).find("unlimited (benchmarked with the free host memory)"),
              std::string::npos);
  }
  // A limit is just its size.
  ReportData limited;
  limited.workspace_limit = 64 * kMiB;
  EXPECT_EQ(format_workspace_limit(limited), "64.0 MiB");
}

// The report says which layout the plan runs and, when several were planned
// (--layout auto on the GPU), that it is the faster by measured timings, in every format.
TEST(Report, NamesTheLayoutAndHowItWasChosen) {
  const Fixture f = alexnet_fixture();
  auto policy = plan_wr(f.named, f.batch, 64 * kMiB);
  ASSERT_TRUE(policy.has_value()) << policy.status().to_string();
  PlanResult result = wrap(f, Policy::kWr, 64 * kMiB, std::move(policy).value());
  result.plan.device = "cuda";
  result.plan.layout = "nhwc";
  const std::string note = "predicted convolution time: nchw 9.000 ms, nhwc 7.000 ms";
  const ReportData chosen = build_report(result, f.graph, "alexnet", note);
  const std::string expected = "nhwc, the faster of the layouts planned (--layout auto) by measured timings: " + note;
  EXPECT_NE(report_text(chosen).find("\nlayout:   " + expected + "\n"), std::string::npos) << report_text(chosen);
  EXPECT_EQ(report_json(chosen)["layout"], "nhwc");
  EXPECT_EQ(report_json(chosen)["layout_choice"], note);
  EXPECT_NE(report_html(chosen).find("<th>layout</th><td>" + html_escape(expected) + "</td>"), std::string::npos);
  // One layout planned (asked for, or the CPU's): just its name.
  result.plan.layout = "nchw";
  const ReportData asked = build_report(result, f.graph, "alexnet");
  EXPECT_NE(report_text(asked).find("\nlayout:   nchw\n"), std::string::npos) << report_text(asked);
  EXPECT_EQ(report_json(asked)["layout"], "nchw");
  EXPECT_TRUE(report_json(asked)["layout_choice"].is_null());
  EXPECT_NE(report_html(asked).find("<th>layout</th><td>nchw</td>"), std::string::npos);
}

// An NHWC plan that keeps some Convs in NCHW names them (Note [layout regions]); a plan with its
// workspaces in the arena says so instead of a pool size (Note [workspace in the arena]).
TEST(Report, NamesTheNchwRegionsAndWhereTheWorkspacesAre) {
  const Fixture f = alexnet_fixture();
  auto policy = plan_wr(f.named, f.batch, 64 * kMiB);
  ASSERT_TRUE(policy.has_value()) << policy.status().to_string();
  PlanResult result = wrap(f, Policy::kWr, 64 * kMiB, std::move(policy).value());
  result.plan.layout = "nhwc";
  result.plan.nchw_convs = {"conv1", "conv2"};
  result.plan.workspace_in_arena = true;
  result.plan.workspace_pool_bytes = 0;
  result.plan.steps.assign(2, runtime::PlanStep{});
  result.plan.steps[1].workspace_bytes = 9 * kMiB;
  const ReportData data = build_report(result, f.graph, "alexnet");
  const std::string text = report_text(data);
  EXPECT_NE(text.find("\nlayout:   nhwc except 2 Conv nodes in nchw (conv1, conv2)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("in the plan's activation arena instead (largest step 9.0 MiB)"), std::string::npos) << text;
  EXPECT_EQ(report_json(data)["nchw_convs"], nlohmann::json({"conv1", "conv2"}));
  EXPECT_EQ(report_json(data)["workspace_in_arena"], true);
  EXPECT_NE(report_html(data).find("(largest step 9.0 MiB)"), std::string::npos);
}

TEST(Report, NoConvolutions) {
  PlanResult result;
  ir::Graph graph;
  const ReportData data = build_report(result, graph, "m.onnx");
  EXPECT_NE(report_text(data).find("network: 0 kernels"), std::string::npos);
  EXPECT_EQ(report_json(data)["kernels"].size(), 0u);
  const std::string html = report_html(data);
  EXPECT_EQ(count(html, "<svg"), 1u);  // the (empty) bar chart only
  EXPECT_EQ(count(html, "</svg>"), 1u);
}

}  // namespace
}  // namespace ucudnn::optimizer
