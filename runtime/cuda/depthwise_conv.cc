// UCUDNN_DEPTHWISE (see depthwise_conv.h): prepare checks that the Conv is depthwise and fixes
// the geometry of this call's shapes (a micro-batch has its own batch); run launches
// runtime/cuda/depthwise_conv_kernels.cu's kernel with the node's epilogue.
#include "runtime/cuda/depthwise_conv.h"

#include <cudnn.h>

#include <cstdint>
#include <limits>
#include <string>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/depthwise_conv_kernels.h"
#include "runtime/ir/fusion.h"
#include "runtime/ir/layout.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn::cuda {

static_assert(kDepthwiseForwardAlgorithm == CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
              "UCUDNN_DEPTHWISE's id follows cuDNN's forward algorithms");

namespace {

constexpr size_t kBias = 2;
constexpr size_t kZ = ir::kConvResidualInput;

class DepthwiseConvState final : public KernelState {
 public:
  DepthwiseGeometry geometry;
  bool has_bias = false, has_z = false;
  ir::ConvActivation activation;

  Status run(const RunArgs& a) override {
    DepthwiseEpilogue epilogue;
    epilogue.bias = has_bias ? a.src[kBias].as<const float>() : nullptr;
    epilogue.z = has_z ? a.src[kZ].as<const float>() : nullptr;
    epilogue.activation = activation;
    UCUDNN_CUDA_CHECK(launch_depthwise_conv(a.src[0].as<const float>(), a.src[1].as<const float>(),
                                            a.dst[0].as<float>(), geometry, epilogue, a.ctx.stream()),
                      context + ", UCUDNN_DEPTHWISE");
    return Status::ok();
  }
};

}  // namespace

Expected<std::unique_ptr<KernelState>> prepare_depthwise_conv(const PrepareArgs& a) {
  auto refuse = [&](const std::string& why) { return a.unsupported_error("UCUDNN_DEPTHWISE: " + why); };
  if (a.src_dtype(0) != DType::kFloat32) return refuse("only float32 convolutions");
  const bool nhwc = ir::is_channels_last(a.node);
  if (a.src_shapes[0].size() != 4 || a.src_shapes[1].size() != 4 || a.dst_shapes[0].size() != 4)
    return refuse("only 2-D convolutions");
  // In NCHW order whatever the memory layout; W [K, 1, R, S] (NCHW) or [K, R, S, 1] (NHWC).
  const Shape x = nhwc ? ir::nhwc_to_nchw(a.src_shapes[0]) : a.src_shapes[0];
  const Shape w = nhwc ? ir::nhwc_to_nchw(a.src_shapes[1]) : a.src_shapes[1];
  const Shape y = nhwc ? ir::nhwc_to_nchw(a.dst_shapes[0]) : a.dst_shapes[0];
  const int64_t group = a.node.attrs.has("group") ? a.node.attrs.get_int("group") : 1;
  if (group != x[1] || w[1] != 1 || w[0] % group != 0 || y[1] != w[0] || y[0] != x[0])
    return refuse("only depthwise convolutions (group = input channels, one input channel a filter); this one has "
                  "group " + std::to_string(group));
  UCUDNN_ASSIGN_OR_RETURN(const WindowGeometry g,
                          compute_window_geometry(a.node.attrs, {x[2], x[3]}, {w[2], w[3]}, false));
  if (g.output[0] != y[2] || g.output[1] != y[3])
    return refuse("the output shape " + shape_to_string(a.dst_shapes[0]) + " differs from the window's");
  auto s = std::make_unique<DepthwiseConvState>();
  UCUDNN_ASSIGN_OR_RETURN(s->activation, ir::conv_activation(a.node));  // Note [fused nodes]
  s->has_bias = a.has_src(kBias);
  s->has_z = a.has_src(kZ);
  if (s->has_bias && a.src_shapes[kBias] != Shape{w[0]})
    return refuse("a bias of shape " + shape_to_string(a.src_shapes[kBias]));
  if (s->has_z && a.src_shapes[kZ] != a.dst_shapes[0])
    return refuse("a residual input of shape " + shape_to_string(a.src_shapes[kZ]) + " unlike Y's");
  DepthwiseGeometry& d = s->geometry;
  d.batch = x[0];
  d.channels = x[1];
  d.multiplier = w[0] / group;
  d.height = x[2];
  d.width = x[3];
  d.out_height = y[2];
  d.out_width = y[3];
  d.kernel_h = w[2];
  d.kernel_w = w[3];
  d.stride_h = g.stride[0];
  d.stride_w = g.stride[1];
  d.dilation_h = g.dilation[0];
  d.dilation_w = g.dilation[1];
  d.pad_top = g.pad_begin[0];
  d.pad_left = g.pad_begin[1];
  d.channels_last = nhwc;
  if (depthwise_row_items(d) > std::numeric_limits<int32_t>::max())
    return refuse("an output row of more than 2^31 elements");
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace ucudnn::cuda
