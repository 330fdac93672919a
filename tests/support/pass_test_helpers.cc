// The pass tests' shared helpers (see pass_test_helpers.h).
#include "tests/support/pass_test_helpers.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "runtime/cpu/cpu_backend.h"
#include "runtime/executor/executor.h"
#include "tests/support/backend_runner.h"

namespace ucudnn::optimizer {

// The one place these tests choose how a graph runs on the CPU: runtime::Executor
// over the CPU backend with whole_steps_cpu_plan (tests/support/backend_runner.h).
Expected<std::vector<Tensor>> run_on_cpu(const ir::Graph& graph, const std::vector<Tensor>& inputs) {
  UCUDNN_RETURN_IF_ERROR(graph.validate());  // a broken pass's graph is an error here, not a crash
  const std::unique_ptr<runtime::Backend> backend = cpu::make_cpu_backend();
  UCUDNN_RETURN_IF_ERROR(backend->check_support(graph));  // as a session does, before planning
  runtime::Plan plan = ucudnn_test::whole_steps_cpu_plan(graph);
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executor> executor,
                          runtime::Executor::create(*backend, graph, std::move(plan)));
  return executor->run(inputs);
}

void expect_same_outputs(const ir::Graph& before, const ir::Graph& after) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < before.inputs.size(); ++i)
    inputs.push_back(ucudnn_test::random_tensor(before.value(before.inputs[i]).shape, static_cast<uint32_t>(100 + i)));
  auto expected = run_on_cpu(before, inputs);
  ASSERT_TRUE(expected.has_value()) << "the graph before the pass: " << expected.status().to_string();
  auto actual = run_on_cpu(after, inputs);
  ASSERT_TRUE(actual.has_value()) << "the graph after the pass: " << actual.status().to_string();
  ASSERT_EQ(expected->size(), actual->size());
  for (size_t o = 0; o < expected->size(); ++o) {
    const Tensor& e = (*expected)[o];
    const Tensor& a = (*actual)[o];
    ASSERT_EQ(e.shape(), a.shape()) << "output " << o;
    int64_t differing = 0;
    for (int64_t i = 0; i < e.numel(); ++i) {
      const float ev = e.data<float>()[i], av = a.data<float>()[i];
      if (std::abs(ev - av) <= 1e-4f * (1.0f + std::abs(ev))) continue;
      if (++differing <= 3) ADD_FAILURE() << "output " << o << " element " << i << ": before " << ev << ", after " << av;
    }
    EXPECT_EQ(differing, 0) << "elements of output " << o << " that the pass changed";
  }
}

PassStats run_pass(Pass pass, ir::Graph& graph) {
  PassStats stats;
  const Status status = pass(graph, &stats);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return stats;
}

PassStats run_passes(ir::Graph& graph, const InferencePassOptions& options) {
  auto stats = run_inference_passes(graph, options);
  EXPECT_TRUE(stats.has_value()) << stats.status().to_string();
  return stats.has_value() ? *stats : PassStats{};
}

void expect_unchanged(Pass pass, const std::vector<UnchangedCase>& cases) {
  for (const UnchangedCase& c : cases) {
    SCOPED_TRACE("must not rewrite: " + c.why);
    const ir::Graph expected = c.build();
    ir::Graph graph = c.build();
    const PassStats stats = run_pass(pass, graph);
    EXPECT_TRUE(ucudnn_test::same_graph(expected, graph));
    EXPECT_EQ(stats.identities_removed + stats.batch_norms_folded + stats.activations_fused + stats.residuals_fused +
                  stats.channels_last_nodes + stats.layout_transposes + stats.batch_norms_decomposed +
                  stats.pointwise_fused + stats.pointwise_nodes_replaced + stats.reduce_means_made_global_pools +
                  stats.channel_shuffles_made_gathers + stats.pads_folded + stats.matmuls_made_gemms +
                  stats.biases_folded_into_gemms + stats.constant_reshapes_folded,
              0);
  }
}

BatchNormParameters random_batch_norm(int64_t channels, uint32_t seed) {
  using ucudnn_test::random_tensor;
  return {random_tensor({channels}, seed, 0.5f, 1.5f), random_tensor({channels}, seed + 1, -0.5f, 0.5f),
          random_tensor({channels}, seed + 2, -0.3f, 0.3f), random_tensor({channels}, seed + 3, 0.5f, 1.5f), 1e-3f};
}

ir::ValueId add_batch_norm(ucudnn_test::GraphBuilder& builder, ir::ValueId x, const BatchNormParameters& p) {
  return builder.batch_norm(x, builder.constant("scale", p.scale), builder.constant("shift", p.bias),
                            builder.constant("mean", p.mean), builder.constant("variance", p.variance), p.epsilon);
}

ConvConstants fold_reference(const Tensor& weight, const Tensor* bias, const BatchNormParameters& p) {
  const int64_t channels = weight.dim(0);
  const int64_t per_filter = weight.numel() / channels;
  std::vector<float> w(static_cast<size_t>(weight.numel())), b(static_cast<size_t>(channels));
  for (int64_t k = 0; k < channels; ++k) {
    const double scale = p.scale.data<float>()[k] / std::sqrt(double{p.variance.data<float>()[k]} + p.epsilon);
    for (int64_t i = 0; i < per_filter; ++i)
      w[k * per_filter + i] = static_cast<float>(weight.data<float>()[k * per_filter + i] * scale);
    const double old_bias = bias ? bias->data<float>()[k] : 0.0;
    b[k] = static_cast<float>((old_bias - p.mean.data<float>()[k]) * scale + p.bias.data<float>()[k]);
  }
  return {Tensor::from_floats(weight.shape(), w), Tensor::from_floats({channels}, b)};
}

}  // namespace ucudnn::optimizer
