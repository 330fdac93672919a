// Convolution kernels of a graph: every Conv node's forward call, keyed by
// ConvKernelKey, with nodes of equal key grouped so each distinct kernel is
// benchmarked once (ResNet-50 repeats many shapes).
#pragma once

#include <vector>

#include "optimizer/kernel_key.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn::optimizer {

struct ConvKernel {
  ConvKernelKey key;                 // device part from the benchmarker; layout from the node
  std::vector<ir::NodeId> nodes;     // the Conv nodes with this key (first one is representative)
  Shape x_shape, w_shape;            // input and weight shapes at the full batch (NHWC/KRSC when channels-last)
  int64_t batch() const { return x_shape.empty() ? 0 : x_shape[0]; }
};

// The distinct forward convolution kernels of `graph`, in first-use order.
// `device_key` supplies the device part of every key.
Expected<std::vector<ConvKernel>> collect_conv_kernels(const ir::Graph& graph, const ConvKernelKey& device_key);

}  // namespace ucudnn::optimizer
