// The reference of any op (see op_reference.h): one switch over the two families.
#include "tests/reference/op_reference.h"

#include "tests/reference/conv_reference.h"
#include "tests/reference/einsum_reference.h"
#include "tests/reference/elementwise_reference.h"
#include "tests/reference/fused_pointwise_reference.h"
#include "tests/reference/grid_sample_reference.h"
#include "tests/reference/indexing_reference.h"
#include "tests/reference/training_reference.h"

namespace ucudnn::reference {

Expected<std::vector<Tensor>> reference_outputs(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  switch (node.op) {
    case OpKind::kConv: case OpKind::kConvTranspose: case OpKind::kBatchNormalization: case OpKind::kLRN: case OpKind::kMaxPool:
    case OpKind::kAveragePool: case OpKind::kGlobalAveragePool: case OpKind::kGlobalMaxPool: case OpKind::kGemm:
    case OpKind::kMatMul: {
      std::vector<Tensor> outputs;
      outputs.push_back(reference_for(node, inputs));
      if (node.op == OpKind::kMaxPool && node.outputs.size() > 1)
        outputs.push_back(reference_max_pool_indices(node, *inputs[0]));
      return outputs;
    }
    case OpKind::kFusedPointwise: return fused_pointwise_reference(node, inputs);
    case OpKind::kGridSample: {
      std::vector<Tensor> outputs;
      outputs.push_back(grid_sample(*inputs[0], *inputs[1], node.attrs));
      return outputs;
    }
    case OpKind::kEinsum: {
      std::vector<Tensor> outputs;
      outputs.push_back(einsum(node, inputs));
      return outputs;
    }
    case OpKind::kGatherElements: case OpKind::kScatterElements: case OpKind::kScatterND: case OpKind::kGatherND:
    case OpKind::kOneHot: case OpKind::kMaxUnpool:
      return indexing_reference(node, inputs);
    default: {
      auto training = training_reference(node, inputs);
      if (training.has_value() || training.status().code() != StatusCode::kUnsupported) return training;
      return elementwise_reference(node, inputs);
    }
  }
}

}  // namespace ucudnn::reference
