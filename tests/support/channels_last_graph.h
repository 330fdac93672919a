// One-node graphs in the channels-last layout (Note [channels-last], runtime/ir/layout.h), for
// tests that run a node NHWC and compare with a reference computed NCHW: the node as the
// channels-last pass leaves it, and 4-D tensors permuted between the two layouts.
#pragma once

#include "runtime/core/tensor.h"
#include "tests/support/one_node_graph.h"

namespace ucudnn_test {

// A float32 [N, C, H, W] tensor as [N, H, W, C] (also [K, C, R, S] → [K, R, S, C]), and back.
ucudnn::Tensor to_nhwc(const ucudnn::Tensor& t);
ucudnn::Tensor to_nchw(const ucudnn::Tensor& t);

// `built`'s 4-D node with the attribute channels_last = 1: X (input 0), Y (output 0) and a
// Conv's residual input z (input 3) in NHWC, a Conv's W (input 1) as [K, R, S, C/group] (a training
// op, optimizer::is_training_layout_op: every 4-D input and output, a filter or its gradient as KRSC); their feeds and constants
// permuted alike. Other inputs (a bias, per-channel values) are unchanged.
OneNodeGraph to_channels_last(const OneNodeGraph& built);

}  // namespace ucudnn_test
