// Two training steps side by side (see training_step_compare.h).
#include "tests/support/training_step_compare.h"

#include <gtest/gtest.h>

#include "tests/support/backend_runner.h"
#include "tests/support/graph_builder.h"

namespace ucudnn_test {

using ucudnn::DType;
using ucudnn::Tensor;
namespace ir = ucudnn::ir;

std::vector<Tensor> training_inputs(const ir::Graph& inference, const ir::Graph& graph) {
  std::vector<Tensor> inputs;
  for (ir::ValueId id : graph.inputs) {
    const ir::Value& v = graph.value(id);
    if (v.name == "x") {
      inputs.push_back(random_tensor(v.shape, 7));
    } else if (v.name == "labels") {
      std::vector<double> labels(static_cast<size_t>(v.shape.at(0)));
      for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<double>((i + 1) % 3);
      inputs.push_back(tensor_of_values(DType::kInt64, v.shape, labels));
    } else {
      const ir::ValueId init = inference.find_value(v.name);
      EXPECT_NE(init, ir::kNoValue) << v.name;
      inputs.push_back(init == ir::kNoValue ? Tensor() : *inference.value(init).constant);
    }
  }
  return inputs;
}

void expect_same_step_everywhere(const ir::Graph& want_graph, const ir::Graph& got_graph,
                                 const std::vector<Tensor>& inputs, const std::string& what, StepNeeds needs) {
  int ran = 0;
  for (const BackendConfig& config : backend_configs()) {
    SCOPED_TRACE(config.name);
    const SharedBackend shared = shared_backend(config);
    if (!shared.skip_reason.empty()) continue;  // no GPU here: the CPU alone
    ASSERT_TRUE(shared.error.is_ok()) << config.name << " did not start: " << shared.error.to_string();
    const auto& capabilities = shared.backend->capabilities();
    if (needs == StepNeeds::kFusedBatchNorm && !capabilities.trains_fused_batch_norm()) continue;
    if (needs == StepNeeds::kChannelsLast && !capabilities.trains_channels_last()) continue;
    auto want = run_on_backend(*shared.backend, want_graph, inputs);
    ASSERT_TRUE(want.has_value()) << want.status().to_string();
    auto got = run_on_backend(*shared.backend, got_graph, inputs);
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    const Tolerance tolerance = config.kind == BackendConfig::Kind::kCpu ? Tolerance{1e-5, 1e-4}
                                : config.tf32                            ? Tolerance{2e-3, 2e-2}
                                                                         : Tolerance{1e-4, 1e-3};
    expect_close(*got, *want, tolerance, what + " on " + config.name);
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no backend here runs " << what;
}

}  // namespace ucudnn_test
