// Op-table cases of the pooling_grad family (MaxPoolGrad, AveragePoolGrad; docs/TRAINING.md): for
// each forward geometry — non-overlapping and overlapping windows, padding (also asymmetric and
// SAME_UPPER), ceil_mode with a window reaching past the padding, dilation, 1-D, a whole-plane
// (global) window, batches of 1 and several — a MaxPoolGrad case and AveragePoolGrad cases with
// count_include_pad 0 and 1, the attributes as the pools' gradient rules write them. Then the
// MaxPoolGrad choices: ties (constant planes, repeated maxima: the first one wins), NaNs.
#include <cmath>

#include "tests/op_cases.h"

namespace ucudnn_test {

using ucudnn::OpKind;
using ucudnn::Shape;
using IntList = std::vector<int64_t>;

namespace {

struct Geometry {
  std::string name;
  Shape x, y;  // the forward pool's X and Y
  AttrList attrs;
};

void add_geometry(const Geometry& g, std::vector<OpCase>* cases) {
  cases->push_back({"max_pool_grad_" + g.name, OpKind::kMaxPoolGrad, 17, {input(g.y), input(g.x)}, g.attrs, 1, g.x});
  for (int64_t include_pad : {0, 1}) {
    AttrList attrs = g.attrs;
    attrs.emplace_back("input_shape", IntList(g.x.begin(), g.x.end()));
    attrs.emplace_back("count_include_pad", include_pad);
    cases->push_back({"average_pool_grad_" + g.name + (include_pad ? "_include_pad" : ""), OpKind::kAveragePoolGrad,
                      17, {input(g.y)}, attrs, 1, g.x});
  }
}

}  // namespace

std::vector<OpCase> pooling_grad_cases() {
  const AttrList k3s2p1 = {{"kernel_shape", IntList{3, 3}}, {"strides", IntList{2, 2}}, {"pads", IntList{1, 1, 1, 1}}};
  const std::vector<Geometry> geometries = {
      {"2x2_stride2", {2, 3, 6, 6}, {2, 3, 3, 3}, {{"kernel_shape", IntList{2, 2}}, {"strides", IntList{2, 2}}}},
      // ResNet's stem pool: overlapping windows, padding; a batch of several and of one.
      {"3x3_stride2_pad1", {3, 4, 7, 7}, {3, 4, 4, 4}, k3s2p1},
      {"3x3_stride2_pad1_batch1", {1, 2, 8, 8}, {1, 2, 4, 4}, k3s2p1},
      {"3x3_stride1_pad1", {2, 2, 5, 6}, {2, 2, 5, 6},
       {{"kernel_shape", IntList{3, 3}}, {"pads", IntList{1, 1, 1, 1}}}},
      // ceil_mode: the last window starts inside the input and reaches past its end padding.
      {"ceil_mode", {1, 2, 6, 6}, {1, 2, 4, 4},
       {{"kernel_shape", IntList{3, 3}}, {"strides", IntList{2, 2}}, {"pads", IntList{1, 1, 1, 1}},
        {"ceil_mode", int64_t{1}}}},
      {"ceil_mode_no_pad", {2, 1, 7, 8}, {2, 1, 3, 4},
       {{"kernel_shape", IntList{3, 2}}, {"strides", IntList{3, 2}}, {"ceil_mode", int64_t{1}}}},
      {"asymmetric_pads", {1, 3, 5, 6}, {1, 3, 3, 5},
       {{"kernel_shape", IntList{2, 3}}, {"strides", IntList{2, 1}}, {"pads", IntList{0, 1, 1, 0}}}},
      {"same_upper", {2, 2, 5, 5}, {2, 2, 3, 3},
       {{"kernel_shape", IntList{3, 3}}, {"strides", IntList{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}},
      {"dilated", {1, 2, 7, 7}, {1, 2, 5, 3},
       {{"kernel_shape", IntList{2, 2}}, {"dilations", IntList{2, 2}}, {"strides", IntList{1, 2}}}},
      {"1d", {2, 3, 9}, {2, 3, 5}, {{"kernel_shape", IntList{3}}, {"strides", IntList{2}}, {"pads", IntList{1, 1}}}},
      {"whole_plane", {3, 5, 4, 6}, {3, 5, 1, 1}, {{"kernel_shape", IntList{4, 6}}}},
      {"resnet_sized", {4, 8, 16, 16}, {4, 8, 8, 8}, k3s2p1},
      // Rows wide enough for the CPU's vectorised interior windows (runtime/cpu/max_pool_rows.h): whole
      // vectors at stride 2 and 1, a strided dilated window, and more than one chunk of 128 columns.
      {"wide_stem", {2, 2, 7, 70}, {2, 2, 4, 35}, k3s2p1},
      {"wide_stride1", {1, 2, 4, 40}, {1, 2, 4, 40}, {{"kernel_shape", IntList{3, 3}}, {"pads", IntList{1, 1, 1, 1}}}},
      {"wide_stride3_dilated", {1, 2, 8, 50}, {1, 2, 2, 16},
       {{"kernel_shape", IntList{2, 3}}, {"strides", IntList{3, 3}}, {"dilations", IntList{2, 2}}}},
      {"wide_chunks", {1, 1, 3, 300}, {1, 1, 3, 300}, {{"kernel_shape", IntList{3, 3}}, {"pads", IntList{1, 1, 1, 1}}}},
  };
  std::vector<OpCase> cases;
  for (const Geometry& g : geometries) add_geometry(g, &cases);

  const AttrList k3s1p1 = {{"kernel_shape", IntList{3, 3}}, {"pads", IntList{1, 1, 1, 1}}};
  const AttrList k2s1 = {{"kernel_shape", IntList{2, 2}}};
  const double nan = std::nan("");
  // Ties: a constant plane (every tap maximal: the window's first tap inside the input wins),
  // repeated maxima in a pattern, and NaNs (the window's last NaN gets the gradient).
  cases.push_back({"max_pool_grad_ties_constant", OpKind::kMaxPoolGrad, 17,
                   {input({2, 2, 5, 5}), input_values({2, 2, 5, 5}, {0.5})}, k3s1p1, 1, Shape{2, 2, 5, 5}});
  cases.push_back({"max_pool_grad_ties_pattern", OpKind::kMaxPoolGrad, 17,
                   {input({1, 2, 5, 5}), input_values({1, 2, 5, 5}, {1, 0, 1, 1, 0, 0, 1})}, k3s1p1, 1,
                   Shape{1, 2, 5, 5}});
  cases.push_back({"max_pool_grad_ties_stride2", OpKind::kMaxPoolGrad, 17,
                   {input({2, 1, 5, 5}), input_values({2, 1, 9, 9}, {2, 2, 1})}, k3s2p1, 1, Shape{2, 1, 9, 9}});
  // The same choices in rows wide enough for the vectorised interior windows.
  cases.push_back({"max_pool_grad_ties_wide", OpKind::kMaxPoolGrad, 17,
                   {input({2, 1, 5, 35}), input_values({2, 1, 9, 70}, {2, 2, 1})}, k3s2p1, 1, Shape{2, 1, 9, 70}});
  cases.push_back({"max_pool_grad_nan_wide", OpKind::kMaxPoolGrad, 17,
                   {input({1, 2, 3, 21}),
                    input_values({1, 2, 6, 41}, {0.5, nan, 2, nan, 2, 3, 0, 3, 4, 1, -2, 3, 0.25, 2, 2, -3, 1, 0, 3, 1,
                                                 2, -1, 4})},
                   k3s2p1, 1, Shape{1, 2, 6, 41}});
  cases.push_back({"max_pool_grad_nan", OpKind::kMaxPoolGrad, 17,
                   {input({1, 1, 3, 3}), input_values({1, 1, 4, 4}, {0.5, nan, 2, -1, nan, 3, 0, 1, 4})}, k2s1, 1,
                   Shape{1, 1, 4, 4}});
  return cases;
}

}  // namespace ucudnn_test
