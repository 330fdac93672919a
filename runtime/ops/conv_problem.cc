// conv_problem (see conv_problem.h): a Conv node's attributes and shapes read as a 2-D problem.
#include "runtime/ops/conv_problem.h"

#include <string>

#include "runtime/ir/layout.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn {

Expected<ConvProblem> conv_problem(const ir::Node& node, const Shape& given_x, const Shape& given_w) {
  const std::string where =
      node.describe() + " with X " + shape_to_string(given_x) + ", W " + shape_to_string(given_w) + ": ";
  const bool channels_last = ir::is_channels_last(node);
  if (channels_last && (given_x.size() != 4 || given_w.size() != 4))
    return unsupported(where + "a channels-last CPU convolution is 2-D, with X [N, H, W, C] and W [M, R, S, C/group]");
  // The problem's dims are NCHW's; a channels-last node's shapes are read through the permutation.
  const Shape x = channels_last ? ir::nhwc_to_nchw(given_x) : given_x;
  const Shape w = channels_last ? ir::nhwc_to_nchw(given_w) : given_w;
  if (x.size() != w.size() || (x.size() != 3 && x.size() != 4))
    return unsupported(where + "the CPU convolution handles 1-D and 2-D convolutions with X and W of equal rank");
  ConvProblem p;
  p.group = node.attrs.has("group") ? node.attrs.get_int("group") : 1;
  if (p.group < 1 || x[1] % p.group != 0 || w[0] % p.group != 0 || w[1] * p.group != x[1])
    return invalid_argument(where + "channels and group " + std::to_string(p.group) + " do not fit");
  auto geometry = compute_window_geometry(node.attrs, Shape(x.begin() + 2, x.end()), Shape(w.begin() + 2, w.end()),
                                          /*ceil_mode=*/false);
  if (!geometry) return Status(geometry.status().code(), where + geometry.status().message());
  const bool two_d = x.size() == 4;
  const size_t last = two_d ? 1 : 0;
  p.batch = x[0];
  p.in_channels = x[1];
  p.out_channels = w[0];
  p.in_w = x.back();
  p.kernel_w = w.back();
  p.stride_w = geometry->stride[last];
  p.dilation_w = geometry->dilation[last];
  p.pad_left = geometry->pad_begin[last];
  p.out_w = geometry->output[last];
  if (two_d) {
    p.in_h = x[2];
    p.kernel_h = w[2];
    p.stride_h = geometry->stride[0];
    p.dilation_h = geometry->dilation[0];
    p.pad_top = geometry->pad_begin[0];
    p.out_h = geometry->output[0];
  }
  p.channels_last = channels_last;
  return p;
}

}  // namespace ucudnn
