// check_gradients (gradient_check.h).
#include "tests/support/gradient_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/reference/op_reference.h"
#include "tests/support/backend_runner.h"
#include "training/autodiff.h"

namespace ucudnn_test {

using ucudnn::DType;
using ucudnn::Tensor;
namespace ir = ucudnn::ir;

namespace {

Tensor clone_or_die(const Tensor& t) {
  auto copy = t.clone();
  EXPECT_TRUE(copy.has_value()) << copy.status().to_string();
  return copy ? std::move(*copy) : Tensor();
}

// Σ_j Σ_i (plus_j[i] − minus_j[i]) · R_j[i] over the seeded outputs.
double weighted_difference(const std::vector<Tensor>& plus, const std::vector<Tensor>& minus,
                           const std::vector<int>& seeded, const std::vector<Tensor>& weights) {
  double sum = 0;
  for (size_t k = 0; k < seeded.size(); ++k) {
    const Tensor& p = plus[seeded[k]];
    const Tensor& m = minus[seeded[k]];
    const float* w = weights[k].data<float>();
    for (int64_t i = 0; i < p.numel(); ++i)
      sum += (static_cast<double>(p.data<float>()[i]) - static_cast<double>(m.data<float>()[i])) * w[i];
  }
  return sum;
}

}  // namespace

void check_gradients(const GradientCheck& check) {
  SCOPED_TRACE("gradient check '" + check.name + "'");
  std::vector<int> wrt = check.wrt;
  if (wrt.empty())
    for (size_t i = 0; i < check.inputs.size(); ++i)
      if (check.inputs[i].dtype == DType::kFloat32) wrt.push_back(static_cast<int>(i));
  std::vector<InputSpec> specs = check.inputs;
  for (int i : wrt) specs[i].constant = false;  // parameters are runtime inputs in training

  auto built = make_one_node_graph(check.name, check.op, check.opset, specs, check.attrs, check.outputs, check.seed);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  ir::Graph graph = built->graph;
  const ir::Node node = built->node();  // graph.nodes.front() unless lowered (ConvTranspose)

  std::vector<int> seeded = check.seeded_outputs;
  if (seeded.empty())
    for (size_t j = 0; j < node.outputs.size(); ++j)
      if (graph.value(node.outputs[j]).dtype == DType::kFloat32) seeded.push_back(static_cast<int>(j));

  // The loss weights R_j, as constants of the graph and the gradient seeds.
  std::mt19937 random(check.seed + 1);
  std::vector<Tensor> weights;
  std::vector<ucudnn::training::GradientSeed> seeds;
  for (int j : seeded) {
    const ir::Value& out = graph.value(node.outputs[j]);
    weights.push_back(make_random_tensor(DType::kFloat32, out.shape, random));
    ir::Value w;
    w.name = "R" + std::to_string(j);
    w.dtype = DType::kFloat32;
    w.shape = out.shape;
    w.constant = weights.back();
    seeds.push_back({node.outputs[j], graph.add_value(std::move(w))});
  }
  std::vector<ir::ValueId> wrt_values;
  for (int i : wrt) wrt_values.push_back(node.inputs[i]);

  auto grads = ucudnn::training::append_gradients(graph, seeds, wrt_values);
  ASSERT_TRUE(grads.has_value()) << grads.status().to_string();
  graph.outputs = *grads;
  ASSERT_TRUE(graph.validate().is_ok()) << graph.validate().to_string();

  ucudnn::runtime::Backend& cpu = *shared_backend(backend_config("cpu")).backend;
  auto analytic = run_on_backend(cpu, graph, built->feeds);
  ASSERT_TRUE(analytic.has_value()) << analytic.status().to_string();

  // The reference's inputs, as copies we may perturb.
  std::vector<Tensor> base;
  std::vector<const Tensor*> pointers;
  for (const Tensor* t : built->node_inputs()) base.push_back(t ? clone_or_die(*t) : Tensor());
  for (size_t i = 0; i < base.size(); ++i) pointers.push_back(built->node_inputs()[i] ? &base[i] : nullptr);

  for (size_t k = 0; k < wrt.size(); ++k) {
    const int i = wrt[k];
    Tensor& x = base[i];
    const Tensor& got = (*analytic)[k];
    ASSERT_EQ(got.shape(), x.shape()) << "gradient of input " << i;
    const int64_t n = x.numel();
    const int64_t count = std::min<int64_t>(n, check.max_elements);
    int failures = 0;
    for (int64_t c = 0; c < count; ++c) {
      const int64_t e = count == n ? c : c * n / count;
      float& element = x.data<float>()[e];
      const float original = element;
      element = static_cast<float>(original + check.step);
      auto plus = ucudnn::reference::reference_outputs(node, pointers);
      element = static_cast<float>(original - check.step);
      auto minus = ucudnn::reference::reference_outputs(node, pointers);
      element = original;
      ASSERT_TRUE(plus.has_value()) << plus.status().to_string();
      ASSERT_TRUE(minus.has_value()) << minus.status().to_string();
      const double numeric = weighted_difference(*plus, *minus, seeded, weights) / (2 * check.step);
      const double analytic_value = got.data<float>()[e];
      if (!(std::abs(analytic_value - numeric) <= check.tolerance.atol + check.tolerance.rtol * std::abs(numeric)) &&
          failures++ < 5)
        ADD_FAILURE() << "input " << i << " ('" << graph.value(node.inputs[i]).name << "') element " << e
                      << ": the rule's gradient " << analytic_value << ", finite differences " << numeric;
    }
    EXPECT_EQ(failures, 0) << "elements of input " << i << " whose gradient disagrees";
  }
}

}  // namespace ucudnn_test
