// Gemm through oneDNN's matmul (runtime/cpu/onednn_gemm.h, Note [oneDNN Gemm]): which Gemms it takes
// (the rest fall back to the Eigen kernel, whose results the op table checks like these), that it
// keeps B reordered from its first run on, shared between calls of the same B, and runs again with
// another B pointer. Its results against the reference are the op table's gemm cases. Skipped in a
// build without oneDNN.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/backend/backend.h"
#include "runtime/cpu/onednn_conv.h"
#include "runtime/cpu/onednn_gemm.h"
#include "tests/support/one_node_graph.h"

namespace {

using ucudnn::OpKind;
using ucudnn::Shape;
using ucudnn::Tensor;
using ucudnn::runtime::TensorRef;
using ucudnn_test::AttrList;
using ucudnn_test::InputSpec;
using ucudnn_test::input;
using ucudnn_test::weight;

ucudnn_test::OneNodeGraph gemm(std::vector<InputSpec> inputs, const AttrList& attrs) {
  auto built = ucudnn_test::make_one_node_graph("gemm", OpKind::kGemm, 13, std::move(inputs), attrs, 1, 7);
  EXPECT_TRUE(built.has_value()) << built.status().to_string();
  return std::move(*built);
}

std::unique_ptr<ucudnn::runtime::Kernel> prepared(const ucudnn_test::OneNodeGraph& g) {
  return ucudnn::cpu::onednn::prepare_gemm(ucudnn::runtime::kernel_request(g.graph, g.node(), 0, -1));
}

class OnednnGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ucudnn::cpu::onednn::built_in()) GTEST_SKIP() << "this build has no oneDNN";
  }
};

TEST_F(OnednnGemm, TakesConstantBWithABiasRowAndLeavesTheRest) {
  const AttrList trans_b = {{"transB", int64_t{1}}};
  EXPECT_NE(prepared(gemm({input({16, 96}), weight({130, 96}), weight({130})}, trans_b)), nullptr);
  EXPECT_NE(prepared(gemm({input({3, 20}), weight({20, 9}), weight({1, 9})}, {})), nullptr);
  EXPECT_NE(prepared(gemm({input({2, 5}), weight({5, 6})}, {})), nullptr);
  // B a runtime input, transA, alpha, a C of [M, N], beta other than 1: the Eigen kernel's.
  EXPECT_EQ(prepared(gemm({input({2, 5}), input({5, 6})}, {})), nullptr);
  EXPECT_EQ(prepared(gemm({input({5, 2}), weight({5, 6})}, {{"transA", int64_t{1}}})), nullptr);
  EXPECT_EQ(prepared(gemm({input({2, 5}), weight({5, 6})}, {{"alpha", 0.5f}})), nullptr);
  EXPECT_EQ(prepared(gemm({input({2, 5}), weight({5, 6}), weight({2, 6})}, {})), nullptr);
  EXPECT_EQ(prepared(gemm({input({2, 5}), weight({5, 6}), weight({6})}, {{"beta", 2.0f}})), nullptr);
}

TEST_F(OnednnGemm, KeepsBReorderedFromTheFirstRunAndFollowsANewB) {
  const auto g = gemm({input({4, 8}), weight({8, 3})}, {});
  auto first = prepared(g), second = prepared(g);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->kept().bytes, 0u);  // nothing before the first run
  std::vector<float> a(32), b(24), y(12);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 5) - 2.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 3);
  auto run = [&](ucudnn::runtime::Kernel& k, std::vector<float>& bv) {
    const std::vector<TensorRef> src = {{ucudnn::DType::kFloat32, Shape{4, 8}, a.data()},
                                        {ucudnn::DType::kFloat32, Shape{8, 3}, bv.data()}};
    const std::vector<TensorRef> dst = {{ucudnn::DType::kFloat32, Shape{4, 3}, y.data()}};
    ASSERT_TRUE(k.run({src, dst}).is_ok());
  };
  auto expect_product = [&](const std::vector<float>& bv) {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 3; ++j) {
        float want = 0;
        for (int k = 0; k < 8; ++k) want += a[static_cast<size_t>(i * 8 + k)] * bv[static_cast<size_t>(k * 3 + j)];
        EXPECT_FLOAT_EQ(y[static_cast<size_t>(i * 3 + j)], want) << i << "," << j;
      }
  };
  run(*first, b);
  expect_product(b);
  EXPECT_GT(first->kept().bytes, 0u);
  std::vector<float> same_b = b;  // equal values at another address: the held copy
  run(*second, same_b);
  EXPECT_EQ(second->kept().id, first->kept().id);
  std::vector<float> other_b(24, 1.0f);  // another B: reordered again, the product follows it
  run(*first, other_b);
  expect_product(other_b);
  EXPECT_NE(first->kept().id, second->kept().id);
}

}  // namespace
