// Small graphs and nodes the fusion-pass tests build (tests/fuse_pointwise_test.cc,
// tests/gpu_fusion_passes_test.cc): elementwise nodes with broadcasting, 1×1 and depthwise Convs
// with biases, a DenseNet-like block, and the FusedPointwise nodes of a graph.
#pragma once

#include <initializer_list>
#include <utility>
#include <vector>

#include "runtime/ir/graph.h"
#include "tests/support/graph_builder.h"

namespace ucudnn::optimizer {

// `op` on x, the output shaped like x (activations).
ir::ValueId unary(ucudnn_test::GraphBuilder& b, OpKind op, ir::ValueId x, ir::Attributes attrs = {});
// `op` on x and y, the output of their broadcast shape.
ir::ValueId binary(ucudnn_test::GraphBuilder& b, OpKind op, ir::ValueId x, ir::ValueId y);
// A float32 scalar constant.
ir::ValueId scalar(ucudnn_test::GraphBuilder& b, float value);
ir::Attributes float_attrs(std::initializer_list<std::pair<const char*, float>> values);

// A 1×1 Conv of x with k filters over c channels and a bias, its constants seeded from `seed`.
ir::ValueId conv_1x1(ucudnn_test::GraphBuilder& b, ir::ValueId x, int64_t k, int64_t c, uint32_t seed);
// A 3×3 depthwise Conv of x [2, 6, 7, 7] with a bias, padding 1.
ir::ValueId depthwise(ucudnn_test::GraphBuilder& b, ir::ValueId x);
// Conv → (Conv, Conv) → Concat → BN → Relu → Conv on x [2, 3, 6, 6].
ir::Graph dense_block();

std::vector<const ir::Node*> fused_nodes(const ir::Graph& graph);

}  // namespace ucudnn::optimizer
