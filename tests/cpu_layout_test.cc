// Channels-last sessions on the CPU (Note [channels-last], runtime/ir/layout.h): in a build with
// oneDNN every tiny model gives the NCHW session's outputs in NHWC (oneDNN's convolutions on the
// tensors as they lie, the pools' NHWC loops; the two differ only by summation order), --layout
// auto plans both and runs one, and the plan's convolutions are oneDNN's or Winograd's (whose GEMMs are
// oneDNN's). Without oneDNN NHWC is
// refused with what to do. The op table (op_table_test) checks each Conv and pool case in NHWC.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/cpu/conv_algorithms.h"
#include "tests/support/tensor_checks.h"
#include "tests/test_paths.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {
namespace {

std::string model_path(const std::string& name) {
  return ucudnn_test::source_dir() + "/models/tiny/" + name + "/model.onnx";
}

SessionOptions cpu_options(Layout layout) {
  SessionOptions options;
  options.device = Device::kCpu;
  options.batch = 3;
  options.layout = layout;
  options.progress = false;
  return options;
}

// The session's outputs on `inputs` (random ones, stored there, when empty).
std::vector<Tensor> run(Session& session, std::vector<Tensor>& inputs) {
  if (inputs.empty()) {
    std::mt19937 rng(5);
    for (const TensorInfo& info : session.inputs())
      inputs.push_back(ucudnn_test::make_random_tensor(info.dtype, info.shape, rng));
  }
  auto outputs = session.run(inputs);
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  return outputs ? std::move(*outputs) : std::vector<Tensor>{};
}

void expect_close(const std::vector<Tensor>& want, const std::vector<Tensor>& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(want[o].shape(), got[o].shape()) << what;
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      const float w = want[o].data<float>()[i];
      ASSERT_NEAR(w, got[o].data<float>()[i], 1e-4 * (1 + std::abs(w)))
          << what << ", output " << o << ", element " << i;
    }
  }
}

const char* const kTinyModels[] = {"tiny_cnn",        "tiny_residual", "tiny_branches", "tiny_reshape",
                                   "tiny_downsample", "tiny_decoder",  "tiny_upsample"};

// Loads `name` in NCHW and in `layout`, runs both on the same random inputs and expects the same outputs;
// returns the `layout` session (null after a reported failure).
std::unique_ptr<Session> expect_matches_nchw(const std::string& name, Layout layout) {
  auto nchw = Session::load(model_path(name), cpu_options(Layout::kNchw));
  auto other = Session::load(model_path(name), cpu_options(layout));
  EXPECT_TRUE(nchw.has_value()) << nchw.status().to_string();
  EXPECT_TRUE(other.has_value()) << other.status().to_string();
  if (!nchw || !other) return nullptr;
  std::vector<Tensor> inputs;
  const std::vector<Tensor> want = run(**nchw, inputs);
  expect_close(want, run(**other, inputs), name + " " + layout_name(layout));
  return std::move(*other);
}

// The plan's Conv steps; each micro-batch's algorithm is checked with `check`.
int conv_steps(const Session& session, const std::function<void(int algorithm, const std::string& step)>& check) {
  const nlohmann::json plan = nlohmann::json::parse(session.plan_json());
  int convs = 0;
  for (const nlohmann::json& step : plan.at("steps")) {
    if (step.value("op", "") != "Conv") continue;
    ++convs;
    for (const nlohmann::json& part : step.at("micro_batches")) check(part.at("algorithm").get<int>(), step.dump());
  }
  return convs;
}

TEST(CpuLayout, NhwcMatchesNchwOnEveryTinyModel) {
  if (!cpu::cpu_runs_channels_last()) GTEST_SKIP() << "this build has no oneDNN: the CPU runs NCHW only";
  for (const char* name : kTinyModels) {
    SCOPED_TRACE(name);
    const std::unique_ptr<Session> nhwc = expect_matches_nchw(name, Layout::kNhwc);
    ASSERT_NE(nhwc, nullptr);
    // Every Conv of the NHWC plan runs one of oneDNN's algorithms or Winograd (the only ones there).
    const int convs = conv_steps(*nhwc, [](int algorithm, const std::string& step) {
      EXPECT_TRUE(cpu::is_onednn_algorithm(algorithm) ||
                  algorithm == static_cast<int>(cpu::CpuConvAlgorithm::kWinograd4x3))
          << step;
    });
    // A model without convolutions has nothing to lay out: it runs NCHW whatever was asked.
    EXPECT_EQ(nhwc->layout(), convs > 0 ? Layout::kNhwc : Layout::kNchw);
  }
}

TEST(CpuLayout, AutoPlansBothLayoutsAndRunsOne) {
  if (!cpu::cpu_runs_channels_last()) GTEST_SKIP() << "this build has no oneDNN: the CPU runs NCHW only";
  for (const char* name : kTinyModels) {
    SCOPED_TRACE(name);
    const std::unique_ptr<Session> automatic = expect_matches_nchw(name, Layout::kAuto);
    ASSERT_NE(automatic, nullptr);
    auto planned = plan(model_path(name), cpu_options(Layout::kAuto));
    ASSERT_TRUE(planned.has_value()) << planned.status().to_string();
    // "measured run: nchw … ms, nhwc … ms; predicted time (convolutions + layout transposes): nchw … ms, …"; a model
    // without convolutions has one graph in both layouts, so nothing is run (only the prediction).
    const std::string& note = planned->summary().layout_note;
    EXPECT_NE(note.find("predicted time (convolutions + layout transposes): nchw"), std::string::npos) << note;
    EXPECT_NE(note.find("nhwc"), std::string::npos) << note;
    const bool has_convs = conv_steps(*automatic, [](int, const std::string&) {}) > 0;
    EXPECT_EQ(note.find("measured run: nchw") != std::string::npos, has_convs) << note;
  }
}

TEST(CpuLayout, NhwcWithoutOneDnnIsRefusedSayingWhy) {
  if (cpu::cpu_runs_channels_last()) GTEST_SKIP() << "this build has oneDNN: NHWC runs (the tests above)";
  auto session = Session::load(model_path("tiny_cnn"), cpu_options(Layout::kNhwc));
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(session.status().message().find("oneDNN, which this build lacks"), std::string::npos)
      << session.status().to_string();
  auto automatic = Session::load(model_path("tiny_cnn"), cpu_options(Layout::kAuto));
  ASSERT_TRUE(automatic.has_value()) << automatic.status().to_string();
  EXPECT_EQ((*automatic)->layout(), Layout::kNchw);
}

}  // namespace
}  // namespace ucudnn
