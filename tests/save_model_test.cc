// save_model_with_initializers (onnx_import.h): a model saved with new weights — BatchNorm's running
// statistics included — loads back through the importer with exactly those values and everything else
// unchanged, and passes onnx.checker (through the system Python, skipped where it has no onnx); and
// every replacement the model cannot take is refused before anything is written.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "onnx_import/onnx_import.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tensor_checks.h"
#include "tests/test_paths.h"

namespace ucudnn_test {
namespace {

namespace onnx_import = ucudnn::onnx_import;
using ucudnn::StatusCode;
using ucudnn::Tensor;

std::string tiny_cnn() { return source_dir() + "/models/tiny/tiny_cnn/model.onnx"; }

ucudnn::Expected<ucudnn::ir::Graph> load(const std::string& path) { return onnx_import::load_model(path, {}); }

// The constant value named `name` in `graph` (ADD_FAILURE and an empty tensor when absent).
Tensor constant(const ucudnn::ir::Graph& graph, const std::string& name) {
  const ucudnn::ir::ValueId id = graph.find_value(name);
  if (id == ucudnn::ir::kNoValue || !graph.value(id).constant) {
    ADD_FAILURE() << "no constant '" << name << "'";
    return Tensor();
  }
  return *graph.value(id).constant;
}

// Every float initializer of tiny_cnn with new values (BatchNorm's variance kept positive).
std::map<std::string, Tensor> trained_weights(const ucudnn::ir::Graph& original) {
  std::map<std::string, Tensor> weights;
  std::mt19937 random(7);
  for (const char* name : {"w1", "bn_scale", "bn_bias", "bn_mean", "bn_var", "w2", "b2", "wf", "bf"}) {
    const Tensor old = constant(original, name);
    weights[name] = make_random_tensor(ucudnn::DType::kFloat32, old.shape(), random, 0.1, 2.0);
  }
  return weights;
}

TEST(SaveModel, ReloadsWithTheNewValues) {
  TempDir dir("save_model_test");
  auto original = load(tiny_cnn());
  ASSERT_TRUE(original.has_value()) << original.status().to_string();
  const std::map<std::string, Tensor> weights = trained_weights(*original);
  const std::string out = dir.file("trained.onnx");
  const ucudnn::Status saved = onnx_import::save_model_with_initializers(tiny_cnn(), out, weights);
  ASSERT_TRUE(saved.is_ok()) << saved.to_string();

  auto reloaded = load(out);
  ASSERT_TRUE(reloaded.has_value()) << reloaded.status().to_string();
  for (const auto& [name, tensor] : weights) expect_close(constant(*reloaded, name), tensor, {0, 0}, name);
  ASSERT_EQ(reloaded->nodes.size(), original->nodes.size());
  for (size_t i = 0; i < original->nodes.size(); ++i) EXPECT_EQ(reloaded->nodes[i].op, original->nodes[i].op);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1) << "a temporary file was left";
}

TEST(SaveModel, OnlySomeReplacedKeepsTheRest) {
  TempDir dir("save_model_test");
  auto original = load(tiny_cnn());
  ASSERT_TRUE(original.has_value()) << original.status().to_string();
  const std::string out = dir.file("trained.onnx");
  std::map<std::string, Tensor> some{{"bn_var", Tensor::from_floats({4}, std::vector<float>{1, 2, 3, 4})}};
  ASSERT_TRUE(onnx_import::save_model_with_initializers(tiny_cnn(), out, some).is_ok());
  // Saving over its own input works too.
  some["bn_mean"] = Tensor::from_floats({4}, std::vector<float>{-1, 0, 1, 2});
  ASSERT_TRUE(onnx_import::save_model_with_initializers(out, out, some).is_ok());
  auto reloaded = load(out);
  ASSERT_TRUE(reloaded.has_value()) << reloaded.status().to_string();
  expect_close(constant(*reloaded, "bn_var"), some["bn_var"], {0, 0}, "bn_var");
  expect_close(constant(*reloaded, "bn_mean"), some["bn_mean"], {0, 0}, "bn_mean");
  expect_close(constant(*reloaded, "w1"), constant(*original, "w1"), {0, 0}, "w1 (not replaced)");
}

TEST(SaveModel, PassesTheOnnxChecker) {
  if (std::system("/usr/bin/python3 -c 'import onnx' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import onnx: onnx.checker not run";
  TempDir dir("save_model_test");
  auto original = load(tiny_cnn());
  ASSERT_TRUE(original.has_value()) << original.status().to_string();
  const std::string out = dir.file("trained.onnx");
  ASSERT_TRUE(onnx_import::save_model_with_initializers(tiny_cnn(), out, trained_weights(*original)).is_ok());
  const std::string command =
      "/usr/bin/python3 -c 'import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' '" +
      out + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

// The save fails with `code`, mentioning `phrase`, and writes nothing.
void expect_refused(const std::map<std::string, Tensor>& weights, StatusCode code, const std::string& phrase,
                    const std::string& model = tiny_cnn()) {
  TempDir dir("save_model_test");
  const std::string out = dir.file("trained.onnx");
  const ucudnn::Status status = onnx_import::save_model_with_initializers(model, out, weights);
  EXPECT_EQ(status.code(), code) << status.to_string();
  EXPECT_NE(status.message().find(phrase), std::string::npos) << status.message();
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(SaveModel, RefusesWhatTheModelCannotTake) {
  const Tensor four = Tensor::from_floats({4}, std::vector<float>{1, 2, 3, 4});
  expect_refused({{"bn_varx", four}}, StatusCode::kNotFound, "has no initializer named 'bn_varx'");
  expect_refused({{"w1", four}}, StatusCode::kInvalidArgument,
                 "initializer 'w1' of '" + tiny_cnn() + "' has shape [4, 3, 3, 3]; the new value is float32[4]");
  expect_refused({{"bn_var", Tensor::from_int64s({4}, std::vector<int64_t>{1, 2, 3, 4})}},
                 StatusCode::kInvalidArgument, "must be a float32 tensor");
  const std::string reshape = source_dir() + "/models/tiny/tiny_reshape/model.onnx";
  expect_refused({{"axes0", Tensor::from_floats({1}, std::vector<float>{0})}}, StatusCode::kInvalidArgument,
                 "has dtype int64; only float32, float16 and bfloat16 initializers are replaced", reshape);
  expect_refused({}, StatusCode::kNotFound, "does not exist", source_dir() + "/models/tiny/none.onnx");
}

}  // namespace
}  // namespace ucudnn_test
