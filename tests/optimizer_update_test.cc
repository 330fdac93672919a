// SgdUpdate and AdamWUpdate against PyTorch: five successive torch.optim.SGD / torch.optim.AdamW
// steps per case (tests/data/training/optimizer_steps.txt, from scripts/gen_optimizer_reference.py),
// replayed on the CPU kernel in place (every output bound to its input, as the trainer runs it) and
// on the double reference the op table trusts; the lr changes between steps. Also what the shape
// rules refuse and the CPU's refusal of step 0. (The GPU kernels meet the reference in op_table_test.)
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_kernel.h"
#include "tests/reference/training_reference.h"
#include "tests/support/one_node_graph.h"
#include "tests/support/tensor_checks.h"
#include "tests/test_paths.h"

namespace ucudnn_test {
namespace {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Tensor;

struct TorchStep {
  float lr = 0;
  std::vector<float> grad, param;
  std::vector<std::pair<std::string, std::vector<float>>> states;  // PyTorch's state names
};

struct TorchCase {
  std::string name;
  OpKind op = OpKind::kSgdUpdate;
  AttrList attrs;
  std::vector<float> init;
  std::vector<TorchStep> steps;
};

std::vector<float> read_floats(std::istringstream& in) {
  std::vector<float> values;
  for (float v; in >> v;) values.push_back(v);
  return values;
}

// Parses optimizer_steps.txt (format in scripts/gen_optimizer_reference.py).
std::vector<TorchCase> torch_cases() {
  std::ifstream file(source_dir() + "/tests/data/training/optimizer_steps.txt");
  std::vector<TorchCase> cases;
  for (std::string line; std::getline(file, line);) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "case") {
      TorchCase c;
      std::string kind, option;
      in >> c.name >> kind;
      c.op = kind == "sgd" ? OpKind::kSgdUpdate : OpKind::kAdamWUpdate;
      while (in >> option) {
        const std::string name = option.substr(0, option.find('=')), value = option.substr(option.find('=') + 1);
        if (name == "nesterov") c.attrs.push_back({name, static_cast<int64_t>(std::stoll(value))});
        else c.attrs.push_back({name, std::stof(value)});
      }
      cases.push_back(std::move(c));
    } else if (key == "init") {
      cases.back().init = read_floats(in);
    } else if (key == "step") {
      TorchStep step;
      in >> step.lr;
      step.grad = read_floats(in);
      cases.back().steps.push_back(std::move(step));
    } else if (key == "param") {
      cases.back().steps.back().param = read_floats(in);
    } else if (key == "state") {
      std::string name;
      in >> name;
      cases.back().steps.back().states.push_back({name, read_floats(in)});
    }
  }
  return cases;
}

Tensor floats(const std::vector<float>& values) {
  return Tensor::from_floats({static_cast<int64_t>(values.size())}, values);
}

Tensor filled(size_t n, float value) { return floats(std::vector<float>(n, value)); }

// Where our outputs hold PyTorch's state: SgdUpdate's output 1, AdamWUpdate's outputs 1 and 2.
size_t output_of_state(const std::string& name) { return name == "exp_avg_sq" ? 2 : 1; }

constexpr Tolerance kTolerance{1e-7, 2e-6};

class TorchSteps : public ::testing::Test {
 protected:
  void SetUp() override {
    cases_ = torch_cases();
    ASSERT_EQ(cases_.size(), 8u) << "tests/data/training/optimizer_steps.txt: regenerate it with "
                                    "scripts/gen_optimizer_reference.py";
  }
  std::vector<TorchCase> cases_;
};

TEST_F(TorchSteps, CpuKernelInPlaceMatchesPyTorch) {
  for (const TorchCase& c : cases_) {
    const bool sgd = c.op == OpKind::kSgdUpdate;
    const size_t state_count = sgd ? 1 : 2, n = c.init.size();
    const ucudnn::ir::Node node = make_node(c.name, c.op, c.attrs, 3 + state_count, 1 + static_cast<int>(state_count));
    Tensor param = floats(c.init), grad = filled(n, 0);
    // SGD's buffer is not read on step 1 (PyTorch has none yet): garbage must not leak in.
    std::vector<Tensor> state{filled(n, sgd ? 1e3f : 0.0f), filled(n, 0.0f)};
    state.resize(state_count);
    for (size_t k = 0; k < c.steps.size(); ++k) {
      const TorchStep& step = c.steps[k];
      grad = floats(step.grad);
      Tensor lr = floats({step.lr});
      Tensor step_number = Tensor::from_int64s({1}, std::vector<int64_t>{static_cast<int64_t>(k + 1)});
      std::vector<const Tensor*> src{&param, &grad};
      std::vector<Tensor*> dst{&param};
      for (Tensor& s : state) {
        src.push_back(&s);
        dst.push_back(&s);
      }
      src.push_back(&lr);
      src.push_back(&step_number);
      const ucudnn::Status status = ucudnn::cpu::cpu_kernel(c.op).run(ucudnn::cpu::KernelArgs{node, src, dst});
      ASSERT_TRUE(status.is_ok()) << status.to_string();
      const std::string what = c.name + " step " + std::to_string(k + 1);
      expect_close(param, floats(step.param), kTolerance, what + " param");
      for (const auto& [name, values] : step.states)
        expect_close(state[output_of_state(name) - 1], floats(values), kTolerance, what + " " + name);
    }
  }
}

TEST_F(TorchSteps, ReferenceMatchesPyTorch) {
  for (const TorchCase& c : cases_) {
    const bool sgd = c.op == OpKind::kSgdUpdate;
    const size_t state_count = sgd ? 1 : 2, n = c.init.size();
    const ucudnn::ir::Node node = make_node(c.name, c.op, c.attrs, 3 + state_count, 1 + static_cast<int>(state_count));
    std::vector<Tensor> values{floats(c.init), filled(n, 0), filled(n, 0)};  // param, then the state
    values.resize(1 + state_count);
    for (size_t k = 0; k < c.steps.size(); ++k) {
      const TorchStep& step = c.steps[k];
      Tensor grad = floats(step.grad), lr = floats({step.lr});
      Tensor step_number = Tensor::from_int64s({1}, std::vector<int64_t>{static_cast<int64_t>(k + 1)});
      std::vector<const Tensor*> inputs{&values[0], &grad};
      for (size_t s = 1; s < values.size(); ++s) inputs.push_back(&values[s]);
      inputs.push_back(&lr);
      inputs.push_back(&step_number);
      auto out = ucudnn::reference::optimizer_update_reference(node, inputs);
      ASSERT_TRUE(out.has_value()) << out.status().to_string();
      values = std::move(*out);
      const std::string what = c.name + " reference step " + std::to_string(k + 1);
      expect_close(values[0], floats(step.param), kTolerance, what + " param");
      for (const auto& [name, state] : step.states)
        expect_close(values[output_of_state(name)], floats(state), kTolerance, what + " " + name);
    }
  }
}

// --- what the shape rules and the CPU refuse ---------------------------------------

InputSpec lr_input() { return input_values({1}, {0.1}); }
InputSpec step_input(double step = 1) { return typed_input(DType::kInt64, {1}, {step}); }

void expect_refused(OpKind op, const std::vector<InputSpec>& inputs, const AttrList& attrs, int outputs,
                    const std::string& phrase) {
  auto built = make_one_node_graph("update", op, 17, inputs, attrs, outputs, 1);
  ASSERT_FALSE(built.has_value()) << "accepted; expected a refusal mentioning '" << phrase << "'";
  EXPECT_NE(built.status().message().find(phrase), std::string::npos) << built.status().to_string();
  EXPECT_NE(built.status().message().find("node 'update'"), std::string::npos) << built.status().to_string();
}

TEST(OptimizerUpdateRules, RefuseInconsistentNodes) {
  const OpKind sgd = OpKind::kSgdUpdate, adamw = OpKind::kAdamWUpdate;
  expect_refused(sgd, {input({2, 3}), input({3, 2}), input({2, 3}), lr_input(), step_input()}, {}, 2,
                 "grad must have param's shape");
  expect_refused(sgd, {input({4}), input({4}), input({4}), input_values({2}, {0.1, 0.2}), step_input()}, {}, 2,
                 "lr must be one float32 value");
  expect_refused(sgd, {input({4}), input({4}), input({4}), lr_input(), input_values({1}, {1})}, {}, 2, "int64");
  expect_refused(sgd, {input({4}), input({4}), input({4}), lr_input(), step_input()},
                 {{"momentum", 0.9f}, {"dampening", 0.1f}, {"nesterov", int64_t{1}}}, 2, "nesterov = 1 requires");
  expect_refused(sgd, {input({4}), input({4}), input({4}), lr_input(), step_input()}, {{"momentum", -0.5f}}, 2,
                 "momentum");
  expect_refused(adamw, {input({4}), input({4}), input({4}), input({5}), lr_input(), step_input()}, {}, 3,
                 "v must have param's shape");
  expect_refused(adamw, {input({4}), input({4}), input({4}), input({4}), lr_input(), step_input()},
                 {{"beta2", 1.0f}}, 3, "beta2");
}

TEST(OptimizerUpdateRules, CpuRefusesStepZero) {
  auto built = make_one_node_graph("update", OpKind::kSgdUpdate, 17,
                                   {input({4}), input({4}), input({4}), lr_input(), step_input(0)}, {}, 2, 1);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  std::vector<const Tensor*> src = built->node_inputs();
  Tensor param = filled(4, 0), buffer = filled(4, 0);
  const ucudnn::Status status =
      ucudnn::cpu::cpu_kernel(OpKind::kSgdUpdate).run(ucudnn::cpu::KernelArgs{built->node(), src, {&param, &buffer}});
  EXPECT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("step 0 must be >= 1"), std::string::npos) << status.to_string();
}

}  // namespace
}  // namespace ucudnn_test
