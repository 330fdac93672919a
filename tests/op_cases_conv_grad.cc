// Op-table cases of the conv_grad family (ConvGradData, ConvGradFilter; docs/TRAINING.md): for each
// forward geometry — padding (also asymmetric), stride 2 (with input rows no window reads), dilation,
// groups, depthwise, 1x1, ResNet's 7x7 stride-2 stem, 1-D — one case per direction, the
// attributes as Conv's gradient rule writes them (explicit pads, input_shape / filter_shape).
// Some run as micro-batches: ConvGradFilter's calls after the first accumulate into dW. Then ConvTranspose's
// cases (conv_transpose_cases).
#include "tests/op_cases.h"

namespace ucudnn_test {

using ucudnn::OpKind;
using ucudnn::Shape;
using IntList = std::vector<int64_t>;

namespace {

struct Geometry {
  std::string name;
  Shape x, w, y;  // the forward convolution's X, W and Y
  AttrList attrs;
  std::vector<int64_t> micro_batches = {};
};

// ConvGradData (dY, W) → dX and ConvGradFilter (X, dY) → dW of one forward geometry.
void add_directions(const Geometry& g, std::vector<OpCase>* cases) {
  AttrList data_attrs = g.attrs;
  data_attrs.emplace_back("input_shape", IntList(g.x.begin(), g.x.end()));
  cases->push_back({"conv_grad_data_" + g.name, OpKind::kConvGradData, 17, {input(g.y), weight(g.w)}, data_attrs, 1,
                    g.x, g.micro_batches});
  AttrList filter_attrs = g.attrs;
  filter_attrs.emplace_back("filter_shape", IntList(g.w.begin(), g.w.end()));
  cases->push_back({"conv_grad_filter_" + g.name, OpKind::kConvGradFilter, 17, {input(g.x), input(g.y)},
                    filter_attrs, 1, g.w, g.micro_batches});
}

}  // namespace

std::vector<OpCase> conv_grad_cases() {
  const std::vector<Geometry> geometries = {
      {"3x3_pad1", {2, 3, 7, 6}, {4, 3, 3, 3}, {2, 4, 7, 6}, {{"pads", IntList{1, 1, 1, 1}}}},
      {"stride2", {3, 4, 9, 8}, {5, 4, 3, 3}, {3, 5, 4, 3}, {{"strides", IntList{2, 2}}}},
      // The last row and column of X are read by no window: their dX is 0.
      {"stride2_unread_edge", {2, 3, 8, 8}, {4, 3, 3, 3}, {2, 4, 3, 3}, {{"strides", IntList{2, 2}}}},
      {"1x1", {2, 8, 5, 5}, {6, 8, 1, 1}, {2, 6, 5, 5}, {}},
      {"1x1_stride2", {2, 8, 5, 5}, {6, 8, 1, 1}, {2, 6, 3, 3}, {{"strides", IntList{2, 2}}}},
      {"groups", {2, 6, 6, 5}, {9, 2, 3, 2}, {2, 9, 6, 4}, {{"group", int64_t{3}}, {"pads", IntList{1, 0, 1, 0}}}},
      {"1x1_groups", {2, 8, 3, 4}, {6, 4, 1, 1}, {2, 6, 3, 4}, {{"group", int64_t{2}}}},
      {"depthwise", {2, 4, 7, 7}, {4, 1, 3, 3}, {2, 4, 4, 7},
       {{"group", int64_t{4}}, {"pads", IntList{1, 1, 1, 1}}, {"strides", IntList{2, 1}}}},
      {"dilation", {2, 3, 9, 8}, {4, 3, 3, 3}, {2, 4, 9, 6},
       {{"dilations", IntList{2, 2}}, {"pads", IntList{2, 1, 2, 1}}}},
      {"asymmetric_pads", {2, 3, 7, 8}, {4, 3, 3, 3}, {2, 4, 7, 7}, {{"pads", IntList{2, 0, 0, 1}}}},
      {"resnet_stem_7x7_stride2", {2, 3, 16, 16}, {8, 3, 7, 7}, {2, 8, 8, 8},
       {{"kernel_shape", IntList{7, 7}}, {"pads", IntList{3, 3, 3, 3}}, {"strides", IntList{2, 2}}}},
      {"1d", {2, 3, 10}, {4, 3, 3}, {2, 4, 5}, {{"pads", IntList{1, 1}}, {"strides", IntList{2}}}},
      // Run as micro-batches: dY, X and dX cut along the batch; dW accumulated over the calls.
      {"micro_batches", {8, 6, 9, 10}, {5, 6, 3, 3}, {8, 5, 9, 5},
       {{"pads", IntList{1, 1, 1, 1}}, {"strides", IntList{1, 2}}}, {3, 1, 4}},
      {"1x1_micro_batches", {4, 8, 5, 5}, {6, 8, 1, 1}, {4, 6, 5, 5}, {}, {1, 3}},
      {"groups_micro_batches", {5, 6, 6, 5}, {9, 2, 3, 2}, {5, 9, 3, 4},
       {{"group", int64_t{3}}, {"pads", IntList{1, 0, 1, 0}}, {"strides", IntList{2, 1}}}, {2, 2, 1}},
  };
  std::vector<OpCase> cases;
  for (const Geometry& g : geometries) add_directions(g, &cases);
  return cases;
}

// ConvTranspose, which runs as ConvGradData (+ its bias): Note [ConvTranspose as ConvGradData]. Its
// reference computes the transposed convolution directly, not as a gradient.
std::vector<OpCase> conv_transpose_cases() {
  return {
      {"conv_transpose_3x3_bias", OpKind::kConvTranspose, 17, {input({2, 3, 5, 4}), weight({3, 4, 3, 3}),
       weight({4})}, {}, 1, Shape{2, 4, 7, 6}},
      // The decoder's doubling up-sampling (DCGAN, U-Net): kernel 4, stride 2, pads 1.
      {"conv_transpose_4x4_stride2_pad1", OpKind::kConvTranspose, 17, {input({2, 4, 5, 5}), weight({4, 3, 4, 4}),
       weight({3})}, {{"strides", IntList{2, 2}}, {"pads", IntList{1, 1, 1, 1}}}, 1, Shape{2, 3, 10, 10}},
      {"conv_transpose_output_padding", OpKind::kConvTranspose, 17, {input({1, 3, 4, 5}), weight({3, 2, 3, 3})},
       {{"strides", IntList{2, 2}}, {"pads", IntList{1, 1, 1, 1}}, {"output_padding", IntList{1, 1}}}, 1,
       Shape{1, 2, 8, 10}},
      {"conv_transpose_groups_dilation", OpKind::kConvTranspose, 17, {input({2, 4, 5, 5}), weight({4, 3, 3, 3}),
       weight({6})}, {{"group", int64_t{2}}, {"dilations", IntList{2, 2}}, {"pads", IntList{1, 0, 0, 2}}}, 1,
       Shape{2, 6, 8, 7}},
      {"conv_transpose_depthwise_stride2", OpKind::kConvTranspose, 17, {input({2, 4, 5, 6}), weight({4, 1, 3, 3})},
       {{"group", int64_t{4}}, {"strides", IntList{2, 2}}}, 1, Shape{2, 4, 11, 13}},
      {"conv_transpose_output_shape_same_upper", OpKind::kConvTranspose, 17, {input({1, 2, 3, 3}),
       weight({2, 2, 3, 3})}, {{"strides", IntList{2, 2}}, {"output_shape", IntList{6, 6}},
       {"auto_pad", std::string("SAME_UPPER")}}, 1, Shape{1, 2, 6, 6}},
      // One row more than the kernel reaches (ONNX's test_convtranspose_output_shape): it holds the bias.
      {"conv_transpose_output_shape_past_the_kernel", OpKind::kConvTranspose, 17, {input({1, 2, 3, 3}),
       weight({2, 2, 3, 3}), weight({2})}, {{"strides", IntList{2, 2}}, {"output_shape", IntList{8, 7}}}, 1,
       Shape{1, 2, 8, 7}},
      {"conv_transpose_same_lower", OpKind::kConvTranspose, 17, {input({1, 2, 3, 4}), weight({2, 3, 3, 3})},
       {{"strides", IntList{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}}, 1, Shape{1, 3, 6, 8}},
      // 3-D: one 2-D data gradient per output depth (Note [3-D ConvTranspose as 2-D ones],
      // onnx_import/lowering/volumetric.h).
      {"conv_transpose_3d_stride2_bias", OpKind::kConvTranspose, 17,
       {input({2, 3, 3, 4, 5}), weight({3, 2, 3, 3, 3}), weight({2})},
       {{"strides", IntList{2, 2, 1}}, {"pads", IntList{1, 0, 1, 1, 1, 0}}, {"output_padding", IntList{1, 1, 0}}}},
      {"conv_transpose_3d_groups_dilation", OpKind::kConvTranspose, 17,
       {input({1, 4, 4, 3, 3}), weight({4, 1, 2, 2, 2})},
       {{"group", int64_t{2}}, {"dilations", IntList{2, 1, 1}}, {"strides", IntList{3, 1, 2}}}},
      {"conv_transpose_3d_runtime_weight", OpKind::kConvTranspose, 17, {input({2, 2, 3, 2, 3}), input({2, 3, 2, 3, 2})},
       {{"strides", IntList{2, 1, 1}}, {"pads", IntList{0, 1, 0, 1, 1, 0}}}},
      {"conv_transpose_3d_same_upper", OpKind::kConvTranspose, 17, {input({1, 2, 3, 3, 2}), weight({2, 2, 3, 3, 3})},
       {{"auto_pad", std::string("SAME_UPPER")}, {"strides", IntList{2, 2, 2}}}},
      {"conv_transpose_1d", OpKind::kConvTranspose, 17, {input({2, 3, 6}), weight({3, 2, 3}), weight({2})},
       {{"strides", IntList{2}}, {"pads", IntList{1, 1}}}, 1, Shape{2, 2, 11}},
  };
}

}  // namespace ucudnn_test
