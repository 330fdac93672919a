// Op-table cases of the batch_norm_train family (BatchNormTrain, BatchNormGrad; docs/TRAINING.md):
// images with a batch of several and of one, rank 2 ([N, C], BatchNorm1d) and rank 3, values far
// from zero (a mean much larger than the spread: no E[x²] − mean² cancellation), other epsilon and
// momentum, and a plane large enough for the reductions to be split across threads and blocks. The
// fused forms (Note [batch norm with its activation]): BatchNormTrain with a Relu, a residual Z or
// both; BatchNormGrad with a Relu (its Y input holding exact zeros too: Relu'(0) = 0), with and
// without dZ, again on the large plane; channels and planes that are multiples of 4 (the GPU's 4-wide
// loads), 136 channels (more than one block of them channels-last).
#include "tests/op_cases.h"

namespace ucudnn_test {

using ucudnn::OpKind;
using ucudnn::Shape;

namespace {

// BatchNormTrain over X of `shape`: scale, B, running mean and running var [C] (variances positive).
OpCase train_case(const std::string& name, const Shape& x, AttrList attrs = {}, double low = -1, double high = 1) {
  const Shape c = {x[1]};
  return {"batch_norm_train_" + name, OpKind::kBatchNormTrain, 17,
          {input(x, low, high), weight(c, 0.5, 1.5), weight(c), input(c), input(c, 0.5, 2.0)}, attrs, 5, x};
}

// BatchNormGrad over X of `shape`: dY, X, scale, saved mean and saved inverse deviation (positive).
OpCase grad_case(const std::string& name, const Shape& x) {
  const Shape c = {x[1]};
  return {"batch_norm_grad_" + name, OpKind::kBatchNormGrad, 17,
          {input(x), input(x), weight(c, 0.5, 1.5), input(c, -0.2, 0.2), input(c, 0.5, 2.0)}, {}, 3, x};
}

AttrList relu() { return {{"activation", std::string("Relu")}}; }

// The fused BatchNormTrain: a residual Z like X when `residual`, the Relu when `with_relu`.
OpCase fused_train_case(const std::string& name, const Shape& x, bool residual, bool with_relu) {
  OpCase c = train_case(name, x, with_relu ? relu() : AttrList{});
  if (residual) c.inputs.push_back(input(x));
  return c;
}

// The fused BatchNormGrad: the forward's Y (random, or holding `y` repeated), dZ as output 3 when
// `residual`.
OpCase fused_grad_case(const std::string& name, const Shape& x, bool residual, std::vector<double> y = {}) {
  OpCase c = grad_case(name, x);
  c.attrs = relu();
  c.inputs.push_back(y.empty() ? input(x) : input_values(x, std::move(y)));
  c.outputs = residual ? 4 : 3;
  return c;
}

}  // namespace

std::vector<OpCase> batch_norm_train_cases() {
  return {
      train_case("image", {4, 3, 5, 5}),
      train_case("batch1", {1, 4, 3, 3}),
      train_case("rank2", {8, 5}),
      train_case("rank3", {3, 4, 7}),
      train_case("two_values_per_channel", {2, 3}),
      train_case("offset_values", {2, 3, 4, 4}, {}, 100.0, 100.5),
      train_case("epsilon_momentum", {3, 2, 4, 5}, {{"epsilon", 1e-3f}, {"momentum", 0.5f}}),
      train_case("large_plane", {16, 6, 24, 24}),
      grad_case("image", {4, 3, 5, 5}),
      grad_case("batch1", {1, 4, 3, 3}),
      grad_case("rank2", {8, 5}),
      grad_case("rank3", {3, 4, 7}),
      grad_case("large_plane", {16, 6, 24, 24}),
      fused_train_case("relu", {4, 3, 5, 5}, false, true),
      fused_train_case("residual", {4, 3, 5, 5}, true, false),
      fused_train_case("residual_relu", {4, 3, 5, 5}, true, true),
      fused_train_case("residual_relu_rank2", {8, 5}, true, true),
      fused_train_case("residual_relu_large_plane", {16, 6, 24, 24}, true, true),
      fused_grad_case("relu", {4, 3, 5, 5}, false),
      fused_grad_case("relu_dz", {4, 3, 5, 5}, true),
      fused_grad_case("relu_dz_rank3", {3, 4, 7}, true),
      fused_grad_case("relu_dz_zeros", {2, 3, 4, 5}, true, {0.0, 0.5, -0.25, 0.0, 1.0, 0.0, -1.0}),
      fused_grad_case("relu_dz_large_plane", {16, 6, 24, 24}, true),
      // Channels a multiple of 4 (and odd planes): the GPU's 4-wide loads in both layouts.
      train_case("channels_by_four", {6, 8, 5, 7}),
      fused_train_case("residual_relu_channels_by_four", {4, 136, 3, 5}, true, true),
      grad_case("channels_by_four", {6, 8, 5, 7}),
      fused_grad_case("relu_dz_channels_by_four", {4, 136, 3, 5}, true),
      fused_grad_case("relu_inner_by_four", {3, 5, 4, 4}, false),
  };
}

}  // namespace ucudnn_test
