// Collecting the convolution kernels of a graph (see conv_kernels.h).
#include "optimizer/conv_kernels.h"

#include <unordered_map>

#include "runtime/ir/layout.h"
#include "runtime/ops/conv_problem.h"

namespace ucudnn::optimizer {

namespace {

// The forward convolution's X, W and Y of one convolution node (see conv_kernels.h).
struct ForwardShapes {
  Shape x, w, y;
};

// A backward node's shape attribute (input_shape, filter_shape), checked to be a shape of `rank`.
Expected<Shape> shape_attribute(const ir::Node& node, const char* name, size_t rank) {
  if (!node.attrs.has(name))
    return invalid_argument(node.describe() + ": the attribute '" + name +
                            "' (the forward convolution's shape) is missing; the training-graph builder sets it");
  const std::vector<int64_t>& dims = node.attrs.get_ints(name);
  Shape shape(dims.begin(), dims.end());
  if (shape.size() != rank)
    return invalid_argument(node.describe() + ": the attribute '" + name + "' " + shape_to_string(shape) +
                            " does not have the rank " + std::to_string(rank) + " of the node's tensors");
  for (int64_t d : shape)
    if (d < 1) return invalid_argument(node.describe() + ": the attribute '" + name + "' " + shape_to_string(shape) +
                                       " has a dimension below 1");
  return shape;
}

// A shape attribute (NCHW's order, as the training-graph builder wrote it) in the node's memory order:
// NHWC (KRSC for a filter) on a channels-last node (Note [channels-last]).
Shape in_memory_order(const ir::Node& node, const Shape& nchw) {
  return ir::is_channels_last(node) && nchw.size() == 4 ? ir::nchw_to_nhwc(nchw) : nchw;
}

Expected<ForwardShapes> forward_shapes(const ir::Graph& graph, const ir::Node& node) {
  const auto input = [&](size_t i) -> Expected<Shape> {
    if (i >= node.inputs.size() || node.inputs[i] == ir::kNoValue)
      return invalid_argument(node.describe() + ": input " + std::to_string(i) + " is missing");
    return graph.value(node.inputs[i]).shape;
  };
  if (node.outputs.empty() || node.outputs[0] == ir::kNoValue)
    return invalid_argument(node.describe() + ": output 0 is missing");
  ForwardShapes shapes;
  switch (node.op) {
    case OpKind::kConv: {
      UCUDNN_ASSIGN_OR_RETURN(shapes.x, input(0));
      UCUDNN_ASSIGN_OR_RETURN(shapes.w, input(1));
      shapes.y = graph.value(node.outputs[0]).shape;
      return shapes;
    }
    case OpKind::kConvGradData: {  // (dY, W) → dX
      UCUDNN_ASSIGN_OR_RETURN(shapes.y, input(0));
      UCUDNN_ASSIGN_OR_RETURN(shapes.w, input(1));
      UCUDNN_ASSIGN_OR_RETURN(shapes.x, shape_attribute(node, "input_shape", shapes.y.size()));
      shapes.x = in_memory_order(node, shapes.x);
      if (!shapes.y.empty()) shapes.x[0] = shapes.y[0];  // the call's batch is dY's
      return shapes;
    }
    case OpKind::kConvGradFilter: {  // (X, dY) → dW
      UCUDNN_ASSIGN_OR_RETURN(shapes.x, input(0));
      UCUDNN_ASSIGN_OR_RETURN(shapes.y, input(1));
      UCUDNN_ASSIGN_OR_RETURN(shapes.w, shape_attribute(node, "filter_shape", shapes.x.size()));
      shapes.w = in_memory_order(node, shapes.w);
      return shapes;
    }
    default:
      return invalid_argument(node.describe() + " is not a convolution");
  }
}

// ConvProblem keeps only the begin pads; when symmetric padding would not give
// its output size, the (smallest) end pad that does.
int64_t end_pad(int64_t in, int64_t begin, int64_t kernel, int64_t stride, int64_t dilation, int64_t out) {
  const int64_t span = dilation * (kernel - 1) + 1;
  if ((in + 2 * begin - span) / stride + 1 == out) return begin;
  return (out - 1) * stride + span - in - begin;
}

Expected<ConvKernelKey> kernel_key(const ir::Node& node, const ForwardShapes& shapes, ConvDirection direction,
                                   const ConvKernelKey& device_key) {
  // The key's parameters are NCHW's; a channels-last node's shapes are NHWC (Note [channels-last]).
  const bool nhwc = ir::is_channels_last(node);
  const auto nchw = [&](const Shape& s) { return nhwc && s.size() == 4 ? ir::nhwc_to_nchw(s) : s; };
  UCUDNN_ASSIGN_OR_RETURN(ConvProblem p, conv_problem(node, shapes.x, shapes.w));  // reads NHWC itself
  const Shape y = nchw(shapes.y);
  if (y.size() != shapes.x.size() || y[0] != p.batch || y[1] != p.out_channels || y.back() != p.out_w ||
      (y.size() == 4 && y[2] != p.out_h))
    return invalid_argument(node.describe() + ": the convolution's output " + shape_to_string(shapes.y) +
                            " does not follow from X " + shape_to_string(shapes.x) + " and W " +
                            shape_to_string(shapes.w) + " and its attributes");
  ConvKernelKey key = device_key;
  key.layout = nhwc ? "nhwc" : "nchw";
  key.n = p.batch;
  key.c = p.in_channels;
  key.h = p.in_h;
  key.w = p.in_w;
  key.k = p.out_channels;
  key.r = p.kernel_h;
  key.s = p.kernel_w;
  key.pad_h = p.pad_top;
  key.pad_w = p.pad_left;
  key.pad_h_end = end_pad(p.in_h, p.pad_top, p.kernel_h, p.stride_h, p.dilation_h, p.out_h);
  key.pad_w_end = end_pad(p.in_w, p.pad_left, p.kernel_w, p.stride_w, p.dilation_w, p.out_w);
  key.stride_h = p.stride_h;
  key.stride_w = p.stride_w;
  key.dilation_h = p.dilation_h;
  key.dilation_w = p.dilation_w;
  key.groups = p.group;
  key.direction = direction;
  return key;
}

}  // namespace

std::optional<ConvDirection> conv_node_direction(const ir::Node& node) {
  switch (node.op) {
    case OpKind::kConv: return ConvDirection::kForward;
    case OpKind::kConvGradData: return ConvDirection::kBackwardData;
    case OpKind::kConvGradFilter: return ConvDirection::kBackwardFilter;
    default: return std::nullopt;
  }
}

Expected<std::vector<ConvKernel>> collect_conv_kernels(const ir::Graph& graph, const ConvKernelKey& device_key) {
  std::vector<ConvKernel> kernels;
  std::unordered_map<std::string, size_t> index_of;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    const std::optional<ConvDirection> direction = conv_node_direction(node);
    if (!direction) continue;
    UCUDNN_ASSIGN_OR_RETURN(ForwardShapes shapes, forward_shapes(graph, node));
    UCUDNN_ASSIGN_OR_RETURN(ConvKernelKey key, kernel_key(node, shapes, *direction, device_key));
    const std::string text = key.to_string();
    auto it = index_of.find(text);
    if (it != index_of.end()) {
      kernels[it->second].nodes.push_back(static_cast<ir::NodeId>(n));
      continue;
    }
    index_of[text] = kernels.size();
    kernels.push_back({std::move(key), {static_cast<ir::NodeId>(n)}, shapes.x, shapes.w, shapes.y});
  }
  return kernels;
}

}  // namespace ucudnn::optimizer
