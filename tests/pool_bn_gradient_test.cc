// The gradient rules of the pools (runtime/ops/pooling.cc: MaxPool, AveragePool, GlobalAveragePool,
// GlobalMaxPool) and of BatchNormTrain (runtime/ops/batch_norm_train.cc) against central finite
// differences (tests/support/gradient_check.h); the rules' refusals; the shape rules of the
// pooling_grad and batch_norm_train families; BatchNormTrain and BatchNormGrad on every backend
// present against PyTorch's numbers (tests/data/training/batch_norm_torch.txt, from
// scripts/gen_batch_norm_reference.py).
// Max pools get inputs whose values are all 0.01 apart, so no finite-difference step (1e-3)
// changes which tap of a window is the maximum.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>

#include "tests/support/backend_runner.h"
#include "tests/support/gradient_check.h"
#include "tests/test_paths.h"
#include "training/autodiff.h"

namespace ucudnn_test {
namespace {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Shape;
using ucudnn::StatusCode;
using ucudnn::Tensor;
using IntList = std::vector<int64_t>;
namespace ir = ucudnn::ir;

// A float input of `shape` holding distinct values 0.01 apart in scrambled order, around 0.
InputSpec distinct_input(const Shape& shape) {
  const int64_t n = ucudnn::shape_numel(shape);
  int64_t stride = 37;
  while (std::gcd(stride, n) != 1) ++stride;
  std::vector<double> values;
  for (int64_t k = 0; k < n; ++k) values.push_back(0.01 * static_cast<double>((k * stride) % n - n / 2));
  return input_values(shape, values);
}

// --- the pools' rules ---

TEST(PoolGradient, MaxPoolOverlappingPadded) {
  check_gradients({.name = "max_pool_3x3_s2_p1",
                   .op = OpKind::kMaxPool,
                   .opset = 12,
                   .inputs = {distinct_input({2, 2, 7, 7})},
                   .attrs = {{"kernel_shape", IntList{3, 3}}, {"strides", IntList{2, 2}},
                             {"pads", IntList{1, 1, 1, 1}}},
                   .max_elements = 98});
}

TEST(PoolGradient, MaxPoolCeilModeAsymmetric1D) {
  check_gradients({.name = "max_pool_1d_ceil",
                   .op = OpKind::kMaxPool,
                   .opset = 12,
                   .inputs = {distinct_input({2, 3, 10})},
                   .attrs = {{"kernel_shape", IntList{3}}, {"strides", IntList{2}}, {"pads", IntList{0, 1}},
                             {"ceil_mode", int64_t{1}}}});
}

TEST(PoolGradient, MaxPoolDilated) {
  check_gradients({.name = "max_pool_dilated",
                   .op = OpKind::kMaxPool,
                   .opset = 12,
                   .inputs = {distinct_input({1, 2, 6, 7})},
                   .attrs = {{"kernel_shape", IntList{2, 3}}, {"dilations", IntList{2, 1}}}});
}

TEST(PoolGradient, AveragePool) {
  for (int64_t include_pad : {0, 1}) {
    check_gradients({.name = "average_pool_include_pad_" + std::to_string(include_pad),
                     .op = OpKind::kAveragePool,
                     .opset = 19,
                     .inputs = {input({2, 2, 6, 6})},
                     .attrs = {{"kernel_shape", IntList{3, 3}}, {"strides", IntList{2, 2}},
                               {"pads", IntList{1, 1, 1, 1}}, {"ceil_mode", int64_t{1}},
                               {"count_include_pad", include_pad}},
                     .max_elements = 72});
  }
}

TEST(PoolGradient, AveragePoolSameUpper1D) {
  check_gradients({.name = "average_pool_same_upper",
                   .op = OpKind::kAveragePool,
                   .opset = 19,
                   .inputs = {input({2, 3, 9})},
                   .attrs = {{"kernel_shape", IntList{4}}, {"strides", IntList{2}},
                             {"auto_pad", std::string("SAME_UPPER")}}});
}

TEST(PoolGradient, GlobalPools) {
  check_gradients({.name = "global_average_pool", .op = OpKind::kGlobalAveragePool, .opset = 1,
                   .inputs = {input({2, 3, 4, 5})}});
  check_gradients({.name = "global_average_pool_1d", .op = OpKind::kGlobalAveragePool, .opset = 1,
                   .inputs = {input({3, 2, 7})}});
  check_gradients({.name = "global_average_pool_3d", .op = OpKind::kGlobalAveragePool, .opset = 1,
                   .inputs = {input({2, 2, 3, 2, 4})}});
  check_gradients({.name = "global_max_pool", .op = OpKind::kGlobalMaxPool, .opset = 1,
                   .inputs = {distinct_input({2, 3, 4, 5})}});
}

// --- BatchNormTrain's rule: X, scale and B through Y; the running statistics get none ---

TEST(BatchNormGradient, Image) {
  check_gradients({.name = "batch_norm_train",
                   .op = OpKind::kBatchNormTrain,
                   .inputs = {input({3, 2, 3, 4}), input({2}, 0.5, 1.5), input({2}), input({2}), input({2}, 0.5, 2)},
                   .outputs = 5,
                   .seeded_outputs = {0},
                   .wrt = {0, 1, 2},
                   .max_elements = 72});
}

TEST(BatchNormGradient, Rank2AndEpsilon) {
  check_gradients({.name = "batch_norm_train_rank2",
                   .op = OpKind::kBatchNormTrain,
                   .inputs = {input({5, 3}), input({3}, 0.5, 1.5), input({3}), input({3}), input({3}, 0.5, 2)},
                   .attrs = {{"epsilon", 1e-2f}, {"momentum", 0.8f}},
                   .outputs = 5,
                   .seeded_outputs = {0},
                   .wrt = {0, 1, 2}});
}

// --- BatchNormTrain and BatchNormGrad against PyTorch ---

struct TorchBatchNorm {
  std::string name;
  Shape shape;
  float epsilon = 0, momentum = 0;
  std::map<std::string, std::vector<double>> tensors;  // x, scale, ..., dbias (the script's names)
};

// Parses batch_norm_torch.txt (format in scripts/gen_batch_norm_reference.py).
std::vector<TorchBatchNorm> torch_batch_norms() {
  std::ifstream file(source_dir() + "/tests/data/training/batch_norm_torch.txt");
  std::vector<TorchBatchNorm> cases;
  for (std::string line; std::getline(file, line);) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key.empty() || key[0] == '#') continue;
    if (key == "case") {
      TorchBatchNorm c;
      std::string shape, epsilon, momentum;
      in >> c.name >> shape >> epsilon >> momentum;
      std::istringstream dims(shape.substr(shape.find('=') + 1));
      for (std::string d; std::getline(dims, d, ',');) c.shape.push_back(std::stoll(d));
      c.epsilon = std::stof(epsilon.substr(epsilon.find('=') + 1));
      c.momentum = std::stof(momentum.substr(momentum.find('=') + 1));
      cases.push_back(std::move(c));
    } else if (!cases.empty()) {
      std::vector<double>& values = cases.back().tensors[key];
      for (double v; in >> v;) values.push_back(v);
    }
  }
  return cases;
}

Tensor float_tensor(const Shape& shape, const std::vector<double>& values) {
  return Tensor::from_floats(shape, std::vector<float>(values.begin(), values.end()));
}

// The one node of `op` over runtime inputs holding the case's tensors `names`, run on `backend`.
std::vector<Tensor> run_case(ucudnn::runtime::Backend& backend, const TorchBatchNorm& c, OpKind op,
                             const std::vector<std::string>& names, AttrList attrs, int outputs) {
  std::vector<InputSpec> inputs;
  for (const std::string& name : names) {
    const Shape shape = name == "x" || name == "dy" ? c.shape : Shape{c.shape[1]};
    inputs.push_back(input_values(shape, c.tensors.at(name)));
  }
  auto built = make_one_node_graph(c.name, op, 17, inputs, attrs, outputs, 1);
  EXPECT_TRUE(built.has_value()) << built.status().to_string();
  if (!built) return {};
  auto got = run_on_backend(backend, built->graph, built->feeds);
  EXPECT_TRUE(got.has_value()) << got.status().to_string();
  return got ? std::move(*got) : std::vector<Tensor>{};
}

TEST(BatchNormTorch, TrainAndGradMatchPyTorch) {
  const std::vector<TorchBatchNorm> cases = torch_batch_norms();
  ASSERT_EQ(cases.size(), 4u) << "tests/data/training/batch_norm_torch.txt: regenerate it with "
                                 "scripts/gen_batch_norm_reference.py";
  for (const BackendConfig& config : backend_configs()) {
    const SharedBackend shared = shared_backend(config);
    if (!shared.skip_reason.empty() || !shared.error.is_ok()) {
      EXPECT_NE(config.kind, BackendConfig::Kind::kCpu) << shared.error.to_string();
      continue;  // no GPU here: the CPU's run still counts
    }
    const Tolerance tolerance = {2e-5, 2e-5};
    for (const TorchBatchNorm& c : cases) {
      const Shape channels = {c.shape[1]};
      const std::string what = config.name + " " + c.name;
      std::vector<Tensor> train =
          run_case(*shared.backend, c, OpKind::kBatchNormTrain, {"x", "scale", "bias", "running_mean", "running_var"},
                   {{"epsilon", c.epsilon}, {"momentum", c.momentum}}, 5);
      const char* const train_outputs[] = {"y", "new_running_mean", "new_running_var", "saved_mean", "saved_inv_std"};
      ASSERT_EQ(train.size(), 5u) << what;
      for (size_t o = 0; o < 5; ++o)
        expect_close(train[o], float_tensor(o == 0 ? c.shape : channels, c.tensors.at(train_outputs[o])), tolerance,
                     what + " " + train_outputs[o]);
      std::vector<Tensor> grad = run_case(*shared.backend, c, OpKind::kBatchNormGrad,
                                          {"dy", "x", "scale", "saved_mean", "saved_inv_std"}, {}, 3);
      const char* const grad_outputs[] = {"dx", "dscale", "dbias"};
      ASSERT_EQ(grad.size(), 3u) << what;
      for (size_t o = 0; o < 3; ++o)
        expect_close(grad[o], float_tensor(o == 0 ? c.shape : channels, c.tensors.at(grad_outputs[o])), tolerance,
                     what + " " + grad_outputs[o]);
    }
  }
}

// --- refusals ---

// The gradient of the node's input 0 with a seed of ones on each output in `seeded`.
ucudnn::Status differentiate(OneNodeGraph& built, const std::vector<size_t>& seeded) {
  ir::Graph& g = built.graph;
  std::vector<ucudnn::training::GradientSeed> seeds;
  for (size_t o : seeded) {
    const ir::ValueId out = g.nodes.front().outputs[o];
    ir::Value seed;
    seed.name = "seed" + std::to_string(o);
    seed.dtype = DType::kFloat32;
    seed.shape = g.value(out).shape;
    seed.constant = Tensor::from_floats(seed.shape, std::vector<float>(ucudnn::shape_numel(seed.shape), 1.0f));
    seeds.push_back({out, g.add_value(std::move(seed))});
  }
  return ucudnn::training::append_gradients(g, seeds, {g.nodes.front().inputs[0]}).status();
}

TEST(BatchNormGradient, RefusesGradientIntoSavedStatistics) {
  const Shape c = {2};
  auto built = make_one_node_graph("bn", OpKind::kBatchNormTrain, 17,
                                   {input({2, 2, 3}), input(c), input(c), input(c), input(c, 0.5, 2)}, {}, 5, 3);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  const ucudnn::Status status = differentiate(*built, {0, 3});
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.to_string();
  EXPECT_NE(status.message().find("saved_mean"), std::string::npos) << status.to_string();
  EXPECT_NE(status.message().find("'bn'"), std::string::npos) << status.to_string();
}

TEST(PoolGradient, RefusesGlobalMaxPoolOver3D) {
  auto built = make_one_node_graph("gmp3d", OpKind::kGlobalMaxPool, 1, {input({1, 2, 2, 3, 2})}, {}, 1, 3);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  const ucudnn::Status status = differentiate(*built, {0});
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.to_string();
  EXPECT_NE(status.message().find("3-D global pooling"), std::string::npos) << status.to_string();
}

// --- shape rules ---

TEST(PoolBatchNormShapes, RefusesBadNodes) {
  struct Bad {
    std::string name;
    OpKind op;
    std::vector<InputSpec> inputs;
    AttrList attrs;
    int outputs;
    StatusCode code;
    std::string mentions;
  };
  const AttrList k2 = {{"kernel_shape", IntList{2, 2}}};
  const Shape c = {3};
  const std::vector<Bad> cases = {
      {"max_dy_mismatch", OpKind::kMaxPoolGrad, {input({1, 3, 3, 3}), input({1, 3, 5, 5})}, k2, 1,
       StatusCode::kInvalidModel, "is not the pool's output [1, 3, 4, 4]"},
      {"max_3d", OpKind::kMaxPoolGrad, {input({1, 1, 1, 1, 1}), input({1, 1, 2, 2, 2})},
       {{"kernel_shape", IntList{2, 2, 2}}}, 1, StatusCode::kUnsupported, "3-D pooling"},
      {"average_channels", OpKind::kAveragePoolGrad, {input({1, 2, 2, 2})},
       {{"kernel_shape", IntList{2, 2}}, {"strides", IntList{2, 2}}, {"input_shape", IntList{1, 3, 4, 4}}}, 1,
       StatusCode::kInvalidModel, "is not the pool's output"},
      {"bn_one_value_per_channel", OpKind::kBatchNormTrain,
       {input({1, 3, 1, 1}), input(c), input(c), input(c), input(c)}, {}, 5, StatusCode::kInvalidModel,
       "expected more than 1 value per channel when training"},
      {"bn_rank2_batch1", OpKind::kBatchNormTrain, {input({1, 3}), input(c), input(c), input(c), input(c)}, {}, 5,
       StatusCode::kInvalidModel, "more than 1 value per channel"},
      {"bn_scale_shape", OpKind::kBatchNormTrain, {input({2, 3, 2}), input({4}), input(c), input(c), input(c)}, {},
       5, StatusCode::kInvalidModel, "scale must have shape [3]"},
      {"bn_momentum", OpKind::kBatchNormTrain, {input({2, 3, 2}), input(c), input(c), input(c), input(c)},
       {{"momentum", 1.5f}}, 5, StatusCode::kInvalidModel, "momentum"},
      {"bn_grad_dy_shape", OpKind::kBatchNormGrad,
       {input({2, 3, 3}), input({2, 3, 2}), input(c), input(c), input(c)}, {}, 3, StatusCode::kInvalidModel,
       "must have X's shape"},
      {"bn_grad_one_value", OpKind::kBatchNormGrad,
       {input({1, 3}), input({1, 3}), input(c), input(c), input(c)}, {}, 3, StatusCode::kInvalidModel,
       "more than 1 value per channel"},
  };
  for (const Bad& b : cases) {
    auto built = make_one_node_graph(b.name, b.op, 17, b.inputs, b.attrs, b.outputs, 3);
    ASSERT_FALSE(built.has_value()) << b.name << " was accepted";
    EXPECT_EQ(built.status().code(), b.code) << built.status().to_string();
    EXPECT_NE(built.status().message().find(b.mentions), std::string::npos) << built.status().to_string();
    EXPECT_NE(built.status().message().find("'" + b.name + "'"), std::string::npos) << built.status().to_string();
  }
}

}  // namespace
}  // namespace ucudnn_test
