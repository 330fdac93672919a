// Upsample's scales, read by its shape rule (upsample.cc) and by its lowering into a Resize
// (onnx_import/lowering/upsample.h).
#pragma once

#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// The scales of Upsample `node`: its `scales` attribute (opset 7) or `input`, its constant second input (opset 9;
// nullptr when absent). InvalidModel when they are missing or not float32.
Expected<std::vector<float>> upsample_scales(const ir::Node& node, const Tensor* input);

}  // namespace ucudnn
