// Op-table cases of the softmax_loss family (docs/TRAINING.md): SoftmaxGrad and
// LogSoftmaxGrad over several axes, SoftmaxCrossEntropyMean and its gradient for several
// N and C with label smoothing 0 and 0.1, ReduceSum (axes variants, keepdims both ways,
// the all-axes and no-op forms, a long box for the GPU's block-per-output path) and
// Expand (broadcasting the input up, the shape up, both, and a lower-rank shape).
#include "tests/op_cases.h"

namespace ucudnn_test {

using ucudnn::DType;
using ucudnn::OpKind;

namespace {

// Labels for `rows` rows of `classes` classes, covering the first and last class.
InputSpec labels(int64_t rows, int64_t classes) {
  std::vector<double> values;
  for (int64_t r = 0; r < rows; ++r) values.push_back(static_cast<double>((r * 7 + (r % 2) * (classes - 1)) % classes));
  return typed_input(DType::kInt64, {rows}, values);
}

std::vector<OpCase> softmax_grad_cases() {
  const float smooth = 0.1f;
  return {
      {"softmax_grad_last_axis", OpKind::kSoftmaxGrad, 13, {input({4, 10}), input({4, 10}, 0.0, 0.5)}},
      {"softmax_grad_channels", OpKind::kSoftmaxGrad, 13, {input({2, 3, 4, 5}), input({2, 3, 4, 5}, 0.0, 1.0)},
       {{"axis", int64_t{1}}}},
      {"softmax_grad_axis0", OpKind::kSoftmaxGrad, 13, {input({5, 3}), input({5, 3}, 0.0, 1.0)},
       {{"axis", int64_t{0}}}},
      {"log_softmax_grad_last_axis", OpKind::kLogSoftmaxGrad, 13, {input({3, 7}), input({3, 7}, -4.0, 0.0)}},
      {"log_softmax_grad_middle", OpKind::kLogSoftmaxGrad, 13, {input({2, 6, 5}), input({2, 6, 5}, -4.0, 0.0)},
       {{"axis", int64_t{-2}}}},
      // --- the loss: outputs (loss [], log_prob [N, C]) ---
      {"cross_entropy_small", OpKind::kSoftmaxCrossEntropyMean, 13, {input({4, 5}, -3, 3), labels(4, 5)}, {}, 2,
       {ucudnn::Shape{}}},
      {"cross_entropy_smoothed", OpKind::kSoftmaxCrossEntropyMean, 13, {input({7, 10}, -3, 3), labels(7, 10)},
       {{"label_smoothing", smooth}}, 2},
      {"cross_entropy_one_row", OpKind::kSoftmaxCrossEntropyMean, 13,
       {input_values({1, 3}, {2.0, -1.0, 0.5}), typed_input(DType::kInt64, {1}, {2})}, {}, 2},
      // Scores far from 0: only the max-subtracted log-sum-exp stays finite.
      {"cross_entropy_large_scores", OpKind::kSoftmaxCrossEntropyMean, 13, {input({16, 100}, -90, 90), labels(16, 100)},
       {{"label_smoothing", smooth}}, 2},
      {"cross_entropy_many_classes", OpKind::kSoftmaxCrossEntropyMean, 13, {input({3, 1000}, -5, 5), labels(3, 1000)},
       {}, 2},
      // --- the ONNX losses (lowered at import: onnx_import/lowering/nll_loss.h) ---
      {"nll_loss_mean", OpKind::kNegativeLogLikelihoodLoss, 13, {input({4, 5}, -4, 0), labels(4, 5)}, {}, 1,
       {ucudnn::Shape{}}},
      {"nll_loss_none_weight_ignore", OpKind::kNegativeLogLikelihoodLoss, 13,
       {input({3, 4, 2, 3}, -4, 0), typed_input(DType::kInt64, {3, 2, 3}, {0, 1, 2, 3, -1, 3, 2, 2, -1, 0, 1, 1, 3, 0,
                                                                             2, -1, 1, 0}),
        input({4}, 0.5, 2.0)},
       {{"reduction", std::string("none")}, {"ignore_index", int64_t{-1}}}, 1, {{3, 2, 3}}},
      {"nll_loss_mean_weight_ignore", OpKind::kNegativeLogLikelihoodLoss, 13,
       {input({5, 3, 4}, -4, 0), typed_input(DType::kInt64, {5, 4}, {0, 1, 2, 7, 1, 1, 0, 2, 7, 7, 0, 1, 2, 2, 0,
                                                                       1, 0, 7, 2, 1}),
        input({3}, 0.5, 2.0)},
       {{"ignore_index", int64_t{7}}}, 1, {ucudnn::Shape{}}},
      {"softmax_cross_entropy_loss_sum_log_prob", OpKind::kSoftmaxCrossEntropyLoss, 13,
       {input({6, 5, 3}, -3, 3), typed_input(DType::kInt64, {6, 3}, {0, 4, 2, 1, 3, 0, 4, 4, 1, 2, 3, 0, 1, 1, 2,
                                                                       3, 4, 0})},
       {{"reduction", std::string("sum")}}, 2},
      {"softmax_cross_entropy_loss_mean_weight", OpKind::kSoftmaxCrossEntropyLoss, 13,
       {input({7, 10}, -3, 3), labels(7, 10), input({10}, 0.2, 1.0)}},
      {"cross_entropy_grad", OpKind::kSoftmaxCrossEntropyMeanGrad, 13,
       {input_values({}, {1.0}), input({4, 5}, -4, 0), labels(4, 5)}},
      {"cross_entropy_grad_smoothed", OpKind::kSoftmaxCrossEntropyMeanGrad, 13,
       {input_values({}, {0.75}), input({7, 10}, -5, 0), labels(7, 10)}, {{"label_smoothing", smooth}}},
      {"cross_entropy_grad_many_classes", OpKind::kSoftmaxCrossEntropyMeanGrad, 13,
       {input_values({}, {2.0}), input({3, 1000}, -9, -5), labels(3, 1000)}, {{"label_smoothing", smooth}}},
  };
}

std::vector<OpCase> reduce_sum_and_expand_cases() {
  const DType int64 = DType::kInt64;
  const ucudnn::Shape image = {3, 4, 5, 6};
  return {
      {"reduce_sum_axis1", OpKind::kReduceSum, 13, {input({2, 3, 4}), ints({1})}, {}, 1, {{2, 1, 4}}},
      {"reduce_sum_bias_grad", OpKind::kReduceSum, 13, {input(image), ints({0, 2, 3})}, {{"keepdims", int64_t{0}}},
       1, {{4}}},
      {"reduce_sum_negative_axes", OpKind::kReduceSum, 13, {input({2, 3, 4}), ints({-1, -3})}, {}, 1, {{1, 3, 1}}},
      {"reduce_sum_all_keepdims", OpKind::kReduceSum, 13, {input({2, 3, 4})}, {}, 1, {{1, 1, 1}}},
      {"reduce_sum_all", OpKind::kReduceSum, 13, {input({2, 3, 4})}, {{"keepdims", int64_t{0}}}, 1,
       {ucudnn::Shape{}}},
      {"reduce_sum_noop", OpKind::kReduceSum, 13, {input({2, 3}), ints({})}, {{"noop_with_empty_axes", int64_t{1}}},
       1, {{2, 3}}},
      {"reduce_sum_long_box", OpKind::kReduceSum, 13, {input({300, 4}), ints({0})}, {{"keepdims", int64_t{0}}}, 1,
       {{4}}},
      {"reduce_sum_last_long", OpKind::kReduceSum, 13, {input({3, 2, 200}), ints({1, 2})}, {}, 1, {{3, 1, 1}}},
      {"expand_input_up", OpKind::kExpand, 13, {input({3, 1}), ints({2, 3, 4})}, {}, 1, {{2, 3, 4}}},
      {"expand_both_ways", OpKind::kExpand, 13, {input({1, 4}), ints({3, 1})}, {}, 1, {{3, 4}}},
      {"expand_shape_lower_rank", OpKind::kExpand, 13, {input({2, 3, 4}), ints({4})}, {}, 1, {{2, 3, 4}}},
      {"expand_middle", OpKind::kExpand, 13, {input({2, 1, 4}), ints({1, 3, 1})}, {}, 1, {{2, 3, 4}}},
      {"expand_scalar", OpKind::kExpand, 13, {input({}), ints({2, 3})}, {}, 1, {{2, 3}}},
      {"size", OpKind::kSize, 13, {input({2, 3, 4})}, {}, 1, {ucudnn::Shape{}}},
      {"size_int64_empty", OpKind::kSize, 13, {typed_input(int64, {0, 3}, {})}, {}, 1, {ucudnn::Shape{}}},
      // ConstantOfShape: lowered into Expand (Note [lowered ops]), as the importer does with one too large to fold
      {"constant_of_shape_zeros", OpKind::kConstantOfShape, 9, {ints({2, 3})}, {}, 1, {{2, 3}}},
      {"constant_of_shape_value", OpKind::kConstantOfShape, 9, {ints({2, 1, 4})},
       {{"value", ucudnn::Tensor::from_floats({1}, std::vector<float>{2.5f})}}, 1, {{2, 1, 4}}},
      {"constant_of_shape_int64", OpKind::kConstantOfShape, 9, {ints({3})},
       {{"value", ucudnn::Tensor::from_int64s({1}, std::vector<int64_t>{-7})}}, 1, {{3}}},
      {"expand_int64", OpKind::kExpand, 13, {typed_input(int64, {1, 3}, {5, -7, 9}), ints({2, 1})}, {}, 1, {{2, 3}}},
  };
}

}  // namespace

std::vector<OpCase> softmax_loss_cases() {
  std::vector<OpCase> all = softmax_grad_cases();
  for (OpCase& c : reduce_sum_and_expand_cases()) all.push_back(std::move(c));
  return all;
}

}  // namespace ucudnn_test
