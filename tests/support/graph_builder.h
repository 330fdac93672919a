// GraphBuilder: small ir::Graphs written by hand in tests, one node per call —
// both the inputs of a pass and the graphs the pass is expected to make.
// Nodes are appended in call order (so calls must be in topological order),
// their outputs are named "v<id>" unless `output` names them, and every node's
// attributes are exactly those its call sets, so two graphs built alike compare
// equal (tests/support/graph_compare.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn_test {

// A float32 tensor of `shape` with elements uniform in [low, high), the same for the same seed.
ucudnn::Tensor random_tensor(const ucudnn::Shape& shape, uint32_t seed, float low = -1.0f, float high = 1.0f);

struct ConvOptions {
  int64_t stride = 1;
  int64_t pad = 0;
  std::string activation;                            // ir::kFusedActivationAttr when not empty
  ucudnn::ir::ValueId residual = ucudnn::ir::kNoValue;  // a fused Conv's fourth input z
  bool channels_last = false;  // X, W and Y NHWC / [K, R, S, C] and attribute channels_last = 1
};

class GraphBuilder {
 public:
  GraphBuilder();

  ucudnn::ir::ValueId input(const std::string& name, const ucudnn::Shape& shape,
                            ucudnn::DType dtype = ucudnn::DType::kFloat32);
  ucudnn::ir::ValueId constant(const std::string& name, ucudnn::Tensor tensor);
  // Makes `id` the next graph output and, when `name` is given, renames it (the model's interface).
  void output(ucudnn::ir::ValueId id, const std::string& name = "");

  // Any node; output i has `dtype` and shapes[i].
  std::vector<ucudnn::ir::ValueId> node(ucudnn::OpKind op, std::vector<ucudnn::ir::ValueId> inputs,
                                        const std::vector<ucudnn::Shape>& shapes, ucudnn::ir::Attributes attrs = {},
                                        ucudnn::DType dtype = ucudnn::DType::kFloat32);
  // A one-output node whose output has input 0's dtype and shape (elementwise ops).
  ucudnn::ir::ValueId same_shape(ucudnn::OpKind op, std::vector<ucudnn::ir::ValueId> inputs,
                                 ucudnn::ir::Attributes attrs = {});

  // Conv with attributes group, pads, strides (square kernels, dilation 1). `bias` may be kNoValue.
  ucudnn::ir::ValueId conv(ucudnn::ir::ValueId x, ucudnn::ir::ValueId weight, ucudnn::ir::ValueId bias,
                           const ConvOptions& options = {});
  ucudnn::ir::ValueId batch_norm(ucudnn::ir::ValueId x, ucudnn::ir::ValueId scale, ucudnn::ir::ValueId bias,
                                 ucudnn::ir::ValueId mean, ucudnn::ir::ValueId variance, float epsilon);
  ucudnn::ir::ValueId relu(ucudnn::ir::ValueId x);
  // Add with `activation` fused when not empty (what fuse_add_activation makes).
  ucudnn::ir::ValueId add(ucudnn::ir::ValueId a, ucudnn::ir::ValueId b, const std::string& activation = "");
  ucudnn::ir::ValueId identity(ucudnn::ir::ValueId x);
  // Dropout (inference); with `mask` it has the second output too: returns {output, mask}.
  std::vector<ucudnn::ir::ValueId> dropout(ucudnn::ir::ValueId x, bool mask);
  ucudnn::ir::ValueId transpose(ucudnn::ir::ValueId x, const std::vector<int64_t>& perm);
  ucudnn::ir::ValueId concat(std::vector<ucudnn::ir::ValueId> inputs, int64_t axis);
  // MaxPool with a square window, no padding; NHWC in and out when `channels_last`.
  ucudnn::ir::ValueId max_pool(ucudnn::ir::ValueId x, int64_t window, int64_t stride, bool channels_last = false);
  ucudnn::ir::ValueId global_average_pool(ucudnn::ir::ValueId x, bool channels_last = false);
  ucudnn::ir::ValueId flatten(ucudnn::ir::ValueId x);

  const ucudnn::ir::Graph& graph() const { return graph_; }
  const ucudnn::Shape& shape(ucudnn::ir::ValueId id) const { return graph_.value(id).shape; }
  // The graph; a test failure when it is invalid.
  ucudnn::ir::Graph finish() const;

 private:
  ucudnn::ir::Graph graph_;
};

}  // namespace ucudnn_test
