// The lowering of 3-D convolutions and pools (volumetric.h).
#include "onnx_import/lowering/volumetric.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnx_import/lowering/lowering_builder.h"
#include "runtime/ops/conv_transpose.h"
#include "runtime/ops/window_geometry.h"

namespace ucudnn {

namespace {

using Ints = std::vector<int64_t>;

bool is_volumetric(const ir::Graph& graph, const ir::Node& node) {
  return graph.value(node.inputs[0]).shape.size() == 5;
}

// The geometry of `node`'s window over X's three spatial axes (its shape rule accepted it).
Expected<WindowGeometry> volumetric_geometry(const ir::Graph& graph, const ir::Node& node, const Ints& kernel,
                                             bool ceil_mode) {
  const Shape& x = graph.value(node.inputs[0]).shape;
  auto geometry = compute_window_geometry(node.attrs, Shape(x.begin() + 2, x.end()), kernel, ceil_mode);
  if (!geometry) return internal_error(node.describe() + ": " + geometry.status().message());
  return geometry;
}

// The window attributes of axes `a` and `b` of `g` (an axis past the geometry's: a window of 1), explicit pads.
ir::Attributes window_2d(const WindowGeometry& g, size_t a, size_t b) {
  auto pick = [&](const Ints& v, int64_t none) { return Ints{v[a], b < g.rank() ? v[b] : none}; };
  Ints pads = pick(g.pad_begin, 0);
  const Ints ends = pick(g.pad_end, 0);
  pads.insert(pads.end(), ends.begin(), ends.end());
  ir::Attributes attrs;
  attrs.set("auto_pad", std::string("NOTSET"));
  attrs.set("kernel_shape", pick(g.kernel, 1));
  attrs.set("strides", pick(g.stride, 1));
  attrs.set("dilations", pick(g.dilation, 1));
  attrs.set("pads", pads);
  return attrs;
}

constexpr size_t kNoAxis = 3;  // window_2d's second axis when there is none

// Note [3-D pools as 2-D ones]
Status lower_pool(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  if (!is_volumetric(graph, node)) {
    out.push_back(node);
    return Status::ok();
  }
  const bool ceil_mode = node.attrs.get_int("ceil_mode") != 0;
  UCUDNN_ASSIGN_OR_RETURN(WindowGeometry g,
                          volumetric_geometry(graph, node, node.attrs.get_ints("kernel_shape"), ceil_mode));
  const Shape x = graph.value(node.inputs[0]).shape;
  const int64_t n = x[0], c = x[1], d = x[2], h = x[3], w = x[4];
  const int64_t od = g.output[0], oh = g.output[1], ow = g.output[2];
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  ir::Attributes plane = window_2d(g, 1, 2), depth = window_2d(g, 0, kNoAxis);
  for (const char* shared : {"ceil_mode", "count_include_pad"})
    if (node.attrs.has(shared)) {
      plane.set(shared, node.attrs.get_int(shared));
      depth.set(shared, node.attrs.get_int(shared));
    }
  const DType f32 = DType::kFloat32;
  const ir::ValueId images = build.emit(OpKind::kReshape, "images",
                                        {node.inputs[0], build.int64s("images_shape", {n, c * d, h, w})}, f32,
                                        {n, c * d, h, w});
  const ir::ValueId pooled = build.emit(node.op, "plane_pool", {images}, f32, {n, c * d, oh, ow}, ir::kNoValue, plane);
  const ir::ValueId columns = build.emit(OpKind::kReshape, "depth_columns",
                                         {pooled, build.int64s("depth_columns_shape", {n, c, d, oh * ow})}, f32,
                                         {n, c, d, oh * ow});
  const ir::ValueId deep = build.emit(node.op, "depth_pool", {columns}, f32, {n, c, od, oh * ow}, ir::kNoValue, depth);
  build.emit(OpKind::kReshape, "volume", {deep, build.int64s("volume_shape", {n, c, od, oh, ow})}, f32,
             {n, c, od, oh, ow}, node.outputs[0]);
  return Status::ok();
}

// Note [3-D convolution as 2-D ones]
Status lower_conv(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  if (!is_volumetric(graph, node)) {
    out.push_back(node);
    return Status::ok();
  }
  const Shape x = graph.value(node.inputs[0]).shape;
  const Shape wshape = graph.value(node.inputs[1]).shape;
  const Ints kernel(wshape.begin() + 2, wshape.end());
  UCUDNN_ASSIGN_OR_RETURN(WindowGeometry g, volumetric_geometry(graph, node, kernel, false));
  const int64_t n = x[0], c = x[1], d = x[2], h = x[3], w = x[4];
  const int64_t m = wshape[0], group_channels = wshape[1], kd = wshape[2], kh = wshape[3], kw = wshape[4];
  const int64_t od = g.output[0], oh = g.output[1], ow = g.output[2];
  const int64_t padded_depth = d + g.pad_begin[0] + g.pad_end[0];
  const DType f32 = DType::kFloat32;
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));

  ir::ValueId volume = node.inputs[0];
  if (padded_depth != d) {
    ir::Attributes pad;
    pad.set("mode", std::string("constant"));
    volume = build.emit(OpKind::kPad, "depth_pad",
                        {volume, build.int64s("depth_pads", {0, 0, g.pad_begin[0], 0, 0, 0, 0, g.pad_end[0], 0, 0})},
                        f32, {n, c, padded_depth, h, w}, ir::kNoValue, pad);
  }
  // W [M, C/group, Kd, kh, kw] read as [M, C/group · Kd, kh, kw]: input channel c · Kd + kd.
  const Shape planes_shape = {m, group_channels * kd, kh, kw};
  const ir::ValueId planes = build.emit(OpKind::kReshape, "weight_2d",
                                        {node.inputs[1], build.int64s("weight_2d_shape", planes_shape)}, f32,
                                        planes_shape);
  ir::Attributes conv = window_2d(g, 1, 2);
  conv.set("group", node.attrs.get_int("group"));
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue;
  std::vector<ir::ValueId> depths_out;
  for (int64_t at = 0; at < od; ++at) {
    const std::string i = std::to_string(at);
    // The Kd frames output depth `at` reads, as channels: [N, C, Kd, H, W] → [N, C · Kd, H, W].
    const int64_t first = at * g.stride[0];
    const ir::ValueId frames =
        build.emit(OpKind::kSlice, "frames" + i,
                   {volume, build.int64s("frames_start" + i, {first}),
                    build.int64s("frames_end" + i, {first + (kd - 1) * g.dilation[0] + 1}),
                    build.int64s("frames_axis" + i, {2}), build.int64s("frames_step" + i, {g.dilation[0]})},
                   f32, {n, c, kd, h, w});
    const ir::ValueId images = build.emit(OpKind::kReshape, "images" + i,
                                          {frames, build.int64s("images_shape" + i, {n, c * kd, h, w})}, f32,
                                          {n, c * kd, h, w});
    std::vector<ir::ValueId> inputs = {images, planes};
    if (has_bias) inputs.push_back(node.inputs[2]);
    const ir::ValueId y = build.emit(OpKind::kConv, "conv" + i, inputs, f32, {n, m, oh, ow}, ir::kNoValue, conv);
    depths_out.push_back(build.emit(OpKind::kUnsqueeze, "depth" + i, {y, build.int64s("depth_axis" + i, {2})}, f32,
                                    {n, m, 1, oh, ow}));
  }
  if (depths_out.size() == 1) {
    build.emit(OpKind::kIdentity, "volume", {depths_out[0]}, f32, {n, m, od, oh, ow}, node.outputs[0]);
    return Status::ok();
  }
  ir::Attributes concat;
  concat.set("axis", int64_t{2});
  build.emit(OpKind::kConcat, "volume", depths_out, f32, {n, m, od, oh, ow}, node.outputs[0], concat);
  return Status::ok();
}

// W [C, M/group, Kd, kh, kw] of a 3-D ConvTranspose, its depth taps `taps` (in the order of the frames they
// meet) as [C · P, M/group, kh, kw]: row c · P + p is W[c, :, taps[p]].
Expected<Tensor> depth_taps_as_channels(const Tensor& w, const Ints& taps) {
  const Shape& s = w.shape();
  const int64_t c = s[0], filters = s[1], kd = s[2], plane = s[3] * s[4];
  const auto p = static_cast<int64_t>(taps.size());
  UCUDNN_ASSIGN_OR_RETURN(Tensor out, Tensor::allocate_uninitialized(DType::kFloat32, {c * p, filters, s[3], s[4]}));
  const float* src = w.data<float>();
  float* dst = out.data<float>();
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t pi = 0; pi < p; ++pi)
      for (int64_t f = 0; f < filters; ++f)
        std::copy_n(src + ((ci * filters + f) * kd + taps[static_cast<size_t>(pi)]) * plane, plane,
                    dst + ((ci * p + pi) * filters + f) * plane);
  return out;
}

// Note [3-D ConvTranspose as 2-D ones]
Status lower_conv_transpose(ir::Graph& graph, const ir::Node& node, std::vector<ir::Node>& out) {
  if (!is_volumetric(graph, node)) {
    out.push_back(node);
    return Status::ok();
  }
  const Shape x = graph.value(node.inputs[0]).shape;
  const std::optional<Tensor> weight = graph.value(node.inputs[1]).constant;  // copies: adding values moves them
  const Shape wshape = graph.value(node.inputs[1]).shape;
  auto geometry =
      conv_transpose_geometry(node.attrs, Shape(x.begin() + 2, x.end()), Ints(wshape.begin() + 2, wshape.end()));
  if (!geometry) return internal_error(node.describe() + ": " + geometry.status().message());
  const ConvTransposeGeometry& g = *geometry;
  const int64_t n = x[0], c = x[1], d = x[2], h = x[3], w = x[4];
  const int64_t group = node.attrs.get_int("group"), m = wshape[1] * group, kd = wshape[2];
  const int64_t od = g.output[0], oh = g.output[1], ow = g.output[2];
  const DType f32 = DType::kFloat32;
  LoweringBuilder build(graph, node, out, std::max(node.opset, 13));
  // The plane's data gradient, as lower_conv_transposes writes a 2-D ConvTranspose (a negative pad_end
  // is rows past the kernel's reach that input_shape holds).
  ir::Attributes plane;
  plane.set("kernel_shape", Ints{wshape[3], wshape[4]});
  plane.set("pads", Ints{g.pad_begin[1], g.pad_begin[2], std::max<int64_t>(g.pad_end[1], 0),
                         std::max<int64_t>(g.pad_end[2], 0)});
  plane.set("strides", Ints{g.stride[1], g.stride[2]});
  plane.set("dilations", Ints{g.dilation[1], g.dilation[2]});
  plane.set("group", group);
  plane.set("input_shape", Ints{n, m, oh, ow});
  ir::Attributes depth_axis;
  depth_axis.set("axis", int64_t{2});
  std::vector<ir::ValueId> depths_out;
  // W's `taps` as [C · P, M/group, kh, kw]: a constant made now, or nodes when W is an input.
  const auto taps_weight = [&](const Ints& taps, const std::string& i) -> Expected<ir::ValueId> {
    const auto p = static_cast<int64_t>(taps.size());
    if (weight.has_value()) {
      UCUDNN_ASSIGN_OR_RETURN(Tensor rearranged, depth_taps_as_channels(*weight, taps));
      return build.constant("weight_2d" + i, std::move(rearranged));
    }
    const ir::ValueId picked = build.emit(OpKind::kGather, "weight_taps" + i,
                                          {node.inputs[1], build.int64s("tap_at" + i, taps)}, f32,
                                          {wshape[0], wshape[1], p, wshape[3], wshape[4]}, ir::kNoValue, depth_axis);
    ir::Attributes perm;
    perm.set("perm", Ints{0, 2, 1, 3, 4});
    const ir::ValueId moved = build.emit(OpKind::kTranspose, "weight_taps_first" + i, {picked}, f32,
                                         {wshape[0], p, wshape[1], wshape[3], wshape[4]}, ir::kNoValue, perm);
    const Shape planes = {wshape[0] * p, wshape[1], wshape[3], wshape[4]};
    return build.emit(OpKind::kReshape, "weight_2d" + i, {moved, build.int64s("weight_2d_shape" + i, planes)}, f32,
                      planes);
  };
  std::map<Ints, ir::ValueId> weights_of_taps;  // the inner depths repeat a few sets of taps
  for (int64_t t = 0; t < od; ++t) {
    const std::string i = std::to_string(t);
    Ints frames, taps;  // output depth t = frame · stride - pad_begin + tap · dilation
    for (int64_t k = 0; k < kd; ++k) {
      const int64_t at = t + g.pad_begin[0] - k * g.dilation[0];
      if (at % g.stride[0] == 0 && at >= 0 && at / g.stride[0] < d) {
        frames.push_back(at / g.stride[0]);
        taps.push_back(k);
      }
    }
    const auto p = static_cast<int64_t>(frames.size());
    ir::ValueId y;
    if (p == 0) {  // no frame reaches this depth: zeros (the bias is added below)
      y = build.emit(OpKind::kConstantOfShape, "zeros" + i, {build.int64s("zeros_shape" + i, {n, m, oh, ow})}, f32,
                     {n, m, oh, ow});
    } else {
      const ir::ValueId picked =
          build.emit(OpKind::kGather, "frames" + i, {node.inputs[0], build.int64s("frame_at" + i, frames)}, f32,
                     {n, c, p, h, w}, ir::kNoValue, depth_axis);
      const ir::ValueId images =
          build.emit(OpKind::kReshape, "images" + i, {picked, build.int64s("images_shape" + i, {n, c * p, h, w})}, f32,
                     {n, c * p, h, w});
      auto known = weights_of_taps.find(taps);
      if (known == weights_of_taps.end()) {
        UCUDNN_ASSIGN_OR_RETURN(const ir::ValueId made, taps_weight(taps, i));
        known = weights_of_taps.emplace(taps, made).first;
      }
      const ir::ValueId taps_w = known->second;
      y = build.emit(OpKind::kConvGradData, "plane" + i, {images, taps_w}, f32, {n, m, oh, ow}, ir::kNoValue, plane);
    }
    depths_out.push_back(
        build.emit(OpKind::kUnsqueeze, "depth" + i, {y, build.int64s("depth_axis" + i, {2})}, f32, {n, m, 1, oh, ow}));
  }
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue;
  const ir::ValueId volume_into = has_bias ? ir::kNoValue : node.outputs[0];
  ir::ValueId volume;
  if (depths_out.size() == 1) {
    volume = build.emit(OpKind::kIdentity, "volume", {depths_out[0]}, f32, {n, m, od, oh, ow}, volume_into);
  } else {
    ir::Attributes concat;
    concat.set("axis", int64_t{2});
    volume = build.emit(OpKind::kConcat, "volume", depths_out, f32, {n, m, od, oh, ow}, volume_into, concat);
  }
  if (has_bias) {
    const ir::ValueId bias = build.emit(OpKind::kReshape, "bias",
                                        {node.inputs[2], build.int64s("bias_shape", {m, 1, 1, 1})}, f32, {m, 1, 1, 1});
    build.emit(OpKind::kAdd, "add_bias", {volume, bias}, f32, {n, m, od, oh, ow}, node.outputs[0]);
  }
  return Status::ok();
}

}  // namespace

Status lower_volumetric_conv_transposes(ir::Graph& graph) {
  return lower_each(graph, OpKind::kConvTranspose, lower_conv_transpose, "3-D ConvTranspose");
}

Status lower_volumetric_ops(ir::Graph& graph) {
  UCUDNN_RETURN_IF_ERROR(lower_each(graph, OpKind::kConv, lower_conv, "3-D Conv"));
  UCUDNN_RETURN_IF_ERROR(lower_each(graph, OpKind::kMaxPool, lower_pool, "3-D MaxPool"));
  return lower_each(graph, OpKind::kAveragePool, lower_pool, "3-D AveragePool");
}

}  // namespace ucudnn
