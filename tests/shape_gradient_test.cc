// The gradient rules of the softmax_loss family and of the shape, data-movement and
// matrix ops (runtime/ops/{softmax_loss,reductions,data_movement,shape_ops,matmul}.cc)
// against central finite differences (tests/support/gradient_check.h); the loss and its
// gradient against PyTorch's values (torch.nn.functional.cross_entropy, float64); and the
// rules' refusals.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/backend_runner.h"
#include "tests/support/gradient_check.h"
#include "training/autodiff.h"

namespace ucudnn_test {
namespace {

using ucudnn::DType;
using ucudnn::OpKind;
using ucudnn::Shape;
using ucudnn::StatusCode;
using ucudnn::Tensor;
using IntList = std::vector<int64_t>;
namespace ir = ucudnn::ir;

InputSpec labels(std::vector<double> values) {
  const auto n = static_cast<int64_t>(values.size());
  return typed_input(DType::kInt64, {n}, std::move(values));
}

// --- softmax family and reductions ---

TEST(ShapeGradient, Softmax) {
  check_gradients({.name = "softmax_last", .op = OpKind::kSoftmax, .opset = 13, .inputs = {input({3, 5}, -2, 2)}});
  check_gradients({.name = "softmax_axis1",
                   .op = OpKind::kSoftmax,
                   .opset = 13,
                   .inputs = {input({2, 3, 4}, -2, 2)},
                   .attrs = {{"axis", int64_t{1}}}});
  // Before opset 13 the trailing dims normalise together (default axis 1): [2, 3·4].
  check_gradients(
      {.name = "softmax_opset11", .op = OpKind::kSoftmax, .opset = 11, .inputs = {input({2, 3, 4}, -2, 2)}});
}

TEST(ShapeGradient, LogSoftmax) {
  check_gradients(
      {.name = "log_softmax_last", .op = OpKind::kLogSoftmax, .opset = 13, .inputs = {input({4, 6}, -2, 2)}});
  check_gradients({.name = "log_softmax_axis0",
                   .op = OpKind::kLogSoftmax,
                   .opset = 13,
                   .inputs = {input({3, 4}, -2, 2)},
                   .attrs = {{"axis", int64_t{0}}}});
  check_gradients({.name = "log_softmax_opset11",
                   .op = OpKind::kLogSoftmax,
                   .opset = 11,
                   .inputs = {input({2, 3, 2}, -2, 2)},
                   .attrs = {{"axis", int64_t{1}}}});
}

TEST(ShapeGradient, ReduceMean) {
  check_gradients({.name = "reduce_mean_axis1", .op = OpKind::kReduceMean, .opset = 18,
                   .inputs = {input({2, 3, 4}), ints({1})}});
  check_gradients({.name = "reduce_mean_drop", .op = OpKind::kReduceMean, .opset = 18,
                   .inputs = {input({2, 3, 4}), ints({0, -1})}, .attrs = {{"keepdims", int64_t{0}}}});
  check_gradients({.name = "reduce_mean_all", .op = OpKind::kReduceMean, .opset = 18, .inputs = {input({3, 4})},
                   .attrs = {{"keepdims", int64_t{0}}}});
}

// The normalizations are lowered at import (Note [lowered ops]): their gradient is the pieces' rules.
TEST(ShapeGradient, LoweredNormalizations) {
  check_gradients({.name = "layer_norm", .op = OpKind::kLayerNormalization, .opset = 17,
                   .inputs = {input({2, 3, 4}), input({4}, 0.5, 1.5), input({4})}});
  check_gradients({.name = "instance_norm", .op = OpKind::kInstanceNormalization, .opset = 6,
                   .inputs = {input({2, 3, 2, 3}), input({3}, 0.5, 1.5), input({3})}});
  check_gradients({.name = "group_norm_21", .op = OpKind::kGroupNormalization, .opset = 21,
                   .inputs = {input({2, 4, 3}), input({4}, 0.5, 1.5), input({4})},
                   .attrs = {{"num_groups", int64_t{2}}}});
  check_gradients({.name = "group_norm_18", .op = OpKind::kGroupNormalization, .opset = 18,
                   .inputs = {input({2, 4, 3}), input({2}, 0.5, 1.5), input({2})},
                   .attrs = {{"num_groups", int64_t{2}}}});
}

// Lowered into Reshape/Transpose, Reshape/Expand, Adds and a Mul: trained through their pieces' rules.
TEST(ShapeGradient, LoweredDataMovementAndSums) {
  check_gradients({.name = "depth_to_space_crd", .op = OpKind::kDepthToSpace, .opset = 13,
                   .inputs = {input({1, 8, 2, 3})},
                   .attrs = {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}}});
  check_gradients({.name = "space_to_depth", .op = OpKind::kSpaceToDepth, .opset = 13,
                   .inputs = {input({1, 2, 4, 2})}, .attrs = {{"blocksize", int64_t{2}}}});
  check_gradients({.name = "tile", .op = OpKind::kTile, .opset = 13, .inputs = {input({2, 3}), ints({2, 2})}});
  check_gradients({.name = "mean_broadcast", .op = OpKind::kMean, .opset = 13,
                   .inputs = {input({2, 3}), input({3}), input({2, 1})}});
}

TEST(ShapeGradient, ReduceSum) {
  check_gradients({.name = "reduce_sum_last", .op = OpKind::kReduceSum, .opset = 13,
                   .inputs = {input({2, 3, 4}), ints({-1})}, .attrs = {{"keepdims", int64_t{0}}}});
  check_gradients({.name = "reduce_sum_bias", .op = OpKind::kReduceSum, .opset = 13,
                   .inputs = {input({2, 3, 2, 2}), ints({0, 2, 3})}});
  check_gradients({.name = "reduce_sum_all", .op = OpKind::kReduceSum, .opset = 13, .inputs = {input({3, 4})}});
  check_gradients({.name = "reduce_sum_noop", .op = OpKind::kReduceSum, .opset = 13,
                   .inputs = {input({3, 4}), ints({})},
                   .attrs = {{"noop_with_empty_axes", int64_t{1}}}});
}

TEST(ShapeGradient, Expand) {
  check_gradients(
      {.name = "expand_up", .op = OpKind::kExpand, .opset = 13, .inputs = {input({3, 1}), ints({2, 3, 4})}});
  check_gradients({.name = "expand_both", .op = OpKind::kExpand, .opset = 13, .inputs = {input({1, 4}), ints({3, 1})}});
  check_gradients({.name = "expand_same", .op = OpKind::kExpand, .opset = 13, .inputs = {input({2, 3}), ints({3})}});
}

// --- the loss ---

TEST(ShapeGradient, SoftmaxCrossEntropyMean) {
  // Through the loss alone, and through log_prob too (its gradient adds a LogSoftmaxGrad).
  check_gradients({.name = "cross_entropy",
                   .op = OpKind::kSoftmaxCrossEntropyMean,
                   .opset = 13,
                   .inputs = {input({4, 5}, -3, 3), labels({4, 0, 2, 4})},
                   .outputs = 2,
                   .seeded_outputs = {0}});
  check_gradients({.name = "cross_entropy_smoothed",
                   .op = OpKind::kSoftmaxCrossEntropyMean,
                   .opset = 13,
                   .inputs = {input({6, 3}, -3, 3), labels({0, 1, 2, 2, 1, 0})},
                   .attrs = {{"label_smoothing", 0.1f}},
                   .outputs = 2});
}

// torch.nn.functional.cross_entropy(s, l, label_smoothing=ε) and d/ds in float64 for
// s = [[1, 2, 3], [0.5, -1, 2]], l = [2, 0]: the loss and the gradient the rule builds (dLoss = 1).
TEST(ShapeGradient, CrossEntropyMatchesPyTorch) {
  struct TorchValues {
    float smoothing;
    double loss;
    std::vector<double> grad;
  };
  const std::vector<TorchValues> expected = {
      {0.0f, 1.0744586305507688,
       {0.04501528658519022, 0.12236423552739882, -0.1673795221125891, -0.41235480392998164, 0.019556286635343725,
        0.39279851729463794}},
      {0.1f, 1.124458630550769,
       {0.02834861991852355, 0.10569756886073216, -0.13404618877925578, -0.3790214705966483, 0.0028896199686770582,
        0.3761318506279713}},
  };
  for (const TorchValues& e : expected) {
    SCOPED_TRACE("label_smoothing " + std::to_string(e.smoothing));
    auto built = make_one_node_graph("loss", OpKind::kSoftmaxCrossEntropyMean, 13,
                                     {input_values({2, 3}, {1, 2, 3, 0.5, -1, 2}), labels({2, 0})},
                                     {{"label_smoothing", e.smoothing}}, 2, 1);
    ASSERT_TRUE(built.has_value()) << built.status().to_string();
    ir::Graph& g = built->graph;
    const ir::Node node = g.nodes.front();
    ir::Value one;
    one.name = "one";
    one.dtype = DType::kFloat32;
    one.constant = Tensor::from_floats({}, std::vector<float>{1.0f});
    const ir::ValueId seed = g.add_value(std::move(one));
    auto grads = ucudnn::training::append_gradients(g, {{node.outputs[0], seed}}, {node.inputs[0]});
    ASSERT_TRUE(grads.has_value()) << grads.status().to_string();
    g.outputs = {node.outputs[0], (*grads)[0]};
    auto got = run_on_backend(*shared_backend(backend_config("cpu")).backend, g, built->feeds);
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    EXPECT_NEAR((*got)[0].data<float>()[0], e.loss, 1e-6);
    for (size_t i = 0; i < e.grad.size(); ++i) EXPECT_NEAR((*got)[1].data<float>()[i], e.grad[i], 1e-6) << i;
  }
}

// --- matrix products ---

TEST(ShapeGradient, Gemm) {
  for (int64_t trans_a : {0, 1})
    for (int64_t trans_b : {0, 1}) {
      const Shape a = trans_a ? Shape{4, 3} : Shape{3, 4};
      const Shape b = trans_b ? Shape{5, 4} : Shape{4, 5};
      const std::string name = "gemm_" + std::to_string(trans_a) + std::to_string(trans_b);
      check_gradients({.name = name + "_row_bias",
                       .op = OpKind::kGemm,
                       .opset = 13,
                       .inputs = {input(a), input(b), input({5})},
                       .attrs = {{"transA", trans_a}, {"transB", trans_b}, {"alpha", 0.5f}, {"beta", 2.0f}}});
    }
  check_gradients({.name = "gemm_column_bias", .op = OpKind::kGemm, .opset = 13,
                   .inputs = {input({3, 4}), input({4, 5}), input({3, 1})}, .attrs = {{"beta", 0.25f}}});
  check_gradients({.name = "gemm_full_bias", .op = OpKind::kGemm, .opset = 13,
                   .inputs = {input({3, 4}), input({5, 4}), input({3, 5})}, .attrs = {{"transB", int64_t{1}}}});
  check_gradients({.name = "gemm_scalar_bias", .op = OpKind::kGemm, .opset = 13,
                   .inputs = {input({3, 4}), input({4, 2}), input({})}});
  check_gradients({.name = "gemm_no_bias", .op = OpKind::kGemm, .opset = 13, .inputs = {input({2, 4}), input({4, 3})},
                   .attrs = {{"alpha", -1.5f}}});
}

TEST(ShapeGradient, MatMul) {
  check_gradients({.name = "matmul_2d", .op = OpKind::kMatMul, .opset = 13, .inputs = {input({3, 4}), input({4, 2})}});
  check_gradients({.name = "matmul_batched", .op = OpKind::kMatMul, .opset = 13,
                   .inputs = {input({2, 3, 4}), input({2, 4, 2})}});
  check_gradients({.name = "matmul_broadcast", .op = OpKind::kMatMul, .opset = 13,
                   .inputs = {input({2, 1, 3, 4}), input({3, 4, 2})}});
  check_gradients({.name = "matmul_2d_by_batched", .op = OpKind::kMatMul, .opset = 13,
                   .inputs = {input({3, 4}), input({2, 4, 2})}});
  check_gradients({.name = "matmul_vector_left", .op = OpKind::kMatMul, .opset = 13,
                   .inputs = {input({4}), input({2, 4, 3})}});
  check_gradients({.name = "matmul_vector_right", .op = OpKind::kMatMul, .opset = 13,
                   .inputs = {input({3, 4}), input({4})}});
  check_gradients({.name = "matmul_vectors", .op = OpKind::kMatMul, .opset = 13, .inputs = {input({4}), input({4})}});
}

// --- data movement and shapes ---

TEST(ShapeGradient, ConcatAndSplit) {
  check_gradients({.name = "concat", .op = OpKind::kConcat, .opset = 13,
                   .inputs = {input({2, 1, 3}), input({2, 3, 3}), input({2, 2, 3})}, .attrs = {{"axis", int64_t{1}}}});
  check_gradients({.name = "concat_negative_axis", .op = OpKind::kConcat, .opset = 13,
                   .inputs = {input({2, 2}), input({2, 3})}, .attrs = {{"axis", int64_t{-1}}}});
  check_gradients({.name = "split", .op = OpKind::kSplit, .opset = 13, .inputs = {input({2, 6}), ints({1, 2, 3})},
                   .attrs = {{"axis", int64_t{1}}}, .outputs = 3});
  // The middle output feeds nothing: its part of dX is zeros.
  check_gradients({.name = "split_unused_output", .op = OpKind::kSplit, .opset = 13, .inputs = {input({6, 2})},
                   .outputs = 3, .seeded_outputs = {0, 2}});
}

TEST(ShapeGradient, SliceAndPad) {
  check_gradients({.name = "slice", .op = OpKind::kSlice, .opset = 13,
                   .inputs = {input({4, 5, 3}), ints({1, -4}), ints({3, 100}), ints({0, 1}), ints({1, 1})}});
  check_gradients({.name = "slice_all_axes", .op = OpKind::kSlice, .opset = 13,
                   .inputs = {input({3, 4}), ints({0, 1}), ints({2, 3})}});
  check_gradients({.name = "pad", .op = OpKind::kPad, .opset = 18, .inputs = {input({2, 3}), ints({1, 0, 2, 1})}});
  // Negative pads crop: their gradient pads zeros back.
  check_gradients({.name = "pad_and_crop", .op = OpKind::kPad, .opset = 18,
                   .inputs = {input({3, 4}), ints({-1, 2, 0, -1})}});
  check_gradients({.name = "pad_axes", .op = OpKind::kPad, .opset = 18,
                   .inputs = {input({2, 3, 4}), ints({1, 2}), absent(), ints({2})}});
}

TEST(ShapeGradient, Reshapes) {
  check_gradients({.name = "flatten", .op = OpKind::kFlatten, .opset = 13, .inputs = {input({2, 3, 4})},
                   .attrs = {{"axis", int64_t{2}}}});
  check_gradients(
      {.name = "reshape", .op = OpKind::kReshape, .opset = 14, .inputs = {input({2, 3, 4}), ints({6, -1})}});
  check_gradients({.name = "squeeze", .op = OpKind::kSqueeze, .opset = 13, .inputs = {input({2, 1, 3}), ints({1})}});
  check_gradients({.name = "unsqueeze", .op = OpKind::kUnsqueeze, .opset = 13,
                   .inputs = {input({2, 3}), ints({0, 3})}});
  check_gradients({.name = "identity", .op = OpKind::kIdentity, .opset = 13, .inputs = {input({2, 3})}});
}

TEST(ShapeGradient, Transpose) {
  check_gradients({.name = "transpose", .op = OpKind::kTranspose, .opset = 13, .inputs = {input({2, 3, 4})},
                   .attrs = {{"perm", IntList{2, 0, 1}}}});
  check_gradients({.name = "transpose_reverse", .op = OpKind::kTranspose, .opset = 13, .inputs = {input({2, 3, 4})}});
}

// --- refusals ---

TEST(ShapeGradient, RefusesSliceSteps) {
  auto built = make_one_node_graph("strided", OpKind::kSlice, 13,
                                   {input({6}), ints({0}), ints({6}), ints({0}), ints({2})}, {}, 1, 3);
  ASSERT_TRUE(built.has_value()) << built.status().to_string();
  ir::Graph& g = built->graph;
  const ir::Node node = g.nodes.front();
  ir::Value seed;
  seed.name = "seed";
  seed.dtype = DType::kFloat32;
  seed.shape = {3};
  seed.constant = Tensor::from_floats({3}, std::vector<float>{1, 1, 1});
  const ir::ValueId seed_id = g.add_value(std::move(seed));
  const ucudnn::Status status = ucudnn::training::append_gradients(g, {{node.outputs[0], seed_id}}, {node.inputs[0]})
                                    .status();
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.to_string();
  EXPECT_NE(status.message().find("node 'strided'"), std::string::npos) << status.to_string();
  EXPECT_NE(status.message().find("step"), std::string::npos) << status.to_string();
}

// A label outside [0, C) is refused at run time, naming it and its row (forward and gradient).
TEST(ShapeGradient, LossRefusesLabelsOutOfRange) {
  for (OpKind op : {OpKind::kSoftmaxCrossEntropyMean, OpKind::kSoftmaxCrossEntropyMeanGrad}) {
    const bool gradient = op == OpKind::kSoftmaxCrossEntropyMeanGrad;
    std::vector<InputSpec> inputs = {input({3, 5}), labels({0, 5, 1})};
    if (gradient) inputs.insert(inputs.begin(), input_values({}, {1.0}));
    auto built = make_one_node_graph("bad_labels", op, 13, inputs, {}, gradient ? 1 : 2, 1);
    ASSERT_TRUE(built.has_value()) << built.status().to_string();
    auto got = run_on_backend(*shared_backend(backend_config("cpu")).backend, built->graph, built->feeds);
    ASSERT_FALSE(got.has_value()) << ucudnn::op_name(op) << " accepted label 5 of 5 classes";
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << got.status().to_string();
    EXPECT_NE(got.status().message().find("label 5 at index 1"), std::string::npos) << got.status().to_string();
    EXPECT_NE(got.status().message().find("node 'bad_labels'"), std::string::npos) << got.status().to_string();
  }
}

}  // namespace
}  // namespace ucudnn_test
