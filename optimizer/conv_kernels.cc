// Collecting the convolution kernels of a graph (see conv_kernels.h).
#include "optimizer/conv_kernels.h"

#include <unordered_map>

#include "runtime/cpu/conv_algorithms.h"

namespace ucudnn::optimizer {

Expected<std::vector<ConvKernel>> collect_conv_kernels(const ir::Graph& graph, const ConvKernelKey& device_key) {
  std::vector<ConvKernel> kernels;
  std::unordered_map<std::string, size_t> index_of;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    if (node.op != OpKind::kConv) continue;
    const Shape& x = graph.value(node.inputs[0]).shape;
    const Shape& w = graph.value(node.inputs[1]).shape;
    UCUDNN_ASSIGN_OR_RETURN(cpu::ConvProblem p, cpu::conv_problem(node, x, w));
    ConvKernelKey key = device_key;
    key.n = p.batch;
    key.c = p.in_channels;
    key.h = p.in_h;
    key.w = p.in_w;
    key.k = p.out_channels;
    key.r = p.kernel_h;
    key.s = p.kernel_w;
    key.pad_h = p.pad_top;
    key.pad_w = p.pad_left;
    // Asymmetric padding changes the output size: fold it into the key through the
    // stride fields' neighbours is not possible, so such convs get a distinct layout tag.
    const int64_t symmetric_h = (p.in_h + 2 * p.pad_top - p.dilation_h * (p.kernel_h - 1) - 1) / p.stride_h + 1;
    const int64_t symmetric_w = (p.in_w + 2 * p.pad_left - p.dilation_w * (p.kernel_w - 1) - 1) / p.stride_w + 1;
    if (symmetric_h != p.out_h || symmetric_w != p.out_w)
      key.layout += ";out=" + std::to_string(p.out_h) + "x" + std::to_string(p.out_w);
    key.stride_h = p.stride_h;
    key.stride_w = p.stride_w;
    key.dilation_h = p.dilation_h;
    key.dilation_w = p.dilation_w;
    key.groups = p.group;
    key.direction = ConvDirection::kForward;
    const std::string text = key.to_string();
    auto it = index_of.find(text);
    if (it != index_of.end()) {
      kernels[it->second].nodes.push_back(static_cast<ir::NodeId>(n));
      continue;
    }
    index_of[text] = kernels.size();
    kernels.push_back({key, {static_cast<ir::NodeId>(n)}, x, w});
  }
  return kernels;
}

}  // namespace ucudnn::optimizer
