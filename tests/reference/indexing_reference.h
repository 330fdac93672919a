// Naive references of GatherElements, ScatterElements, ScatterND (runtime/ops/indexing.h), GatherND and OneHot
// (onnx_import/lowering/gather_nd.h, one_hot.h), from the spec's
// definitions, index by index (op_reference.cc dispatches here).
#pragma once

#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn::reference {

// Unsupported for another op.
Expected<std::vector<Tensor>> indexing_reference(const ir::Node& node, const std::vector<const Tensor*>& in);

}  // namespace ucudnn::reference
