// Convolution kernels of a graph: every convolution call — a Conv's forward
// call and, in a training graph, the backward calls ConvGradData (bwd_data) and
// ConvGradFilter (bwd_filter) — keyed by ConvKernelKey, with nodes of equal key
// grouped so each distinct kernel is benchmarked once (ResNet-50 repeats many
// shapes).
//
// A key's geometry is the FORWARD convolution's in every direction: X [N,C,H,W]
// and W [K,C/g,R,S] of the layer, N the call's batch. So the three calls of one
// layer share n..g and differ only in `direction`:
//   Conv(X, W) → Y               X, W from the inputs
//   ConvGradData(dY, W) → dX     X from the attribute input_shape (its batch dY's), W input 1
//   ConvGradFilter(X, dY) → dW   X input 0, W from the attribute filter_shape
#pragma once

#include <optional>
#include <vector>

#include "optimizer/kernel_key.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn::optimizer {

struct ConvKernel {
  ConvKernelKey key;                 // device part from the benchmarker; layout, geometry, direction from the node
  std::vector<ir::NodeId> nodes;     // the convolution nodes with this key (first one is representative)
  // The forward convolution's shapes at the full batch, whatever the direction (NHWC/KRSC when
  // channels-last): input X, weight W, output Y (= dY of the backward calls).
  Shape x_shape, w_shape, y_shape;
  int64_t batch() const { return x_shape.empty() ? 0 : x_shape[0]; }
  ConvDirection direction() const { return key.direction; }
};

// The direction a convolution node computes: Conv → forward, ConvGradData → backward
// data, ConvGradFilter → backward filter; nullopt for any other op.
std::optional<ConvDirection> conv_node_direction(const ir::Node& node);

// The distinct convolution kernels of `graph` (every ir::is_convolution node), in
// first-use order. `device_key` supplies the device part of every key. InvalidArgument
// naming the node when a backward node lacks its shape attribute or it does not fit.
Expected<std::vector<ConvKernel>> collect_conv_kernels(const ir::Graph& graph, const ConvKernelKey& device_key);

}  // namespace ucudnn::optimizer
