// Collecting the convolution kernels of a graph (see conv_kernels.h).
#include "optimizer/conv_kernels.h"

#include <unordered_map>

#include "runtime/cpu/conv_algorithms.h"
#include "runtime/ir/layout.h"

namespace ucudnn::optimizer {

Expected<std::vector<ConvKernel>> collect_conv_kernels(const ir::Graph& graph, const ConvKernelKey& device_key) {
  std::vector<ConvKernel> kernels;
  std::unordered_map<std::string, size_t> index_of;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    if (node.op != OpKind::kConv) continue;
    const Shape& x = graph.value(node.inputs[0]).shape;
    const Shape& w = graph.value(node.inputs[1]).shape;
    // The key's parameters are NCHW's; a channels-last node's shapes are NHWC (Note [channels-last]).
    const bool nhwc = ir::is_channels_last(node);
    UCUDNN_ASSIGN_OR_RETURN(cpu::ConvProblem p, cpu::conv_problem(node, nhwc ? ir::nhwc_to_nchw(x) : x,
                                                                  nhwc ? ir::nhwc_to_nchw(w) : w));
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
    // ConvProblem keeps only the begin pads; when symmetric padding would not give
    // its output size, record the (smallest) end pad that does.
    auto end_pad = [](int64_t in, int64_t begin, int64_t kernel, int64_t stride, int64_t dilation, int64_t out) {
      const int64_t span = dilation * (kernel - 1) + 1;
      if ((in + 2 * begin - span) / stride + 1 == out) return begin;
      return (out - 1) * stride + span - in - begin;
    };
    key.pad_h_end = end_pad(p.in_h, p.pad_top, p.kernel_h, p.stride_h, p.dilation_h, p.out_h);
    key.pad_w_end = end_pad(p.in_w, p.pad_left, p.kernel_w, p.stride_w, p.dilation_w, p.out_w);
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
