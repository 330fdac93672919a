// load_model's constant folding and the older opsets' forms (onnx_import/upgrade.cc,
// onnx_import/constant_folding.cc), on small models built here with the ONNX protobuf classes.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>

#include "onnx_import/onnx_import.h"
#include "runtime/cpu/cpu_kernel.h"
#include "tests/onnx_import_test_helpers.h"
#include "tests/onnx_test_models.h"

namespace ucudnn {
namespace {

using namespace ucudnn::testing;
using onnx_import::ImportOptions;

// Shape → Gather → Unsqueeze → Concat → Reshape: the reshape target becomes a
// constant [batch, -1] and only Reshape is left.
TEST(OnnxImport, ShapeChainFolds) {
  REQUIRE_OPS(OpKind::kGather, OpKind::kUnsqueeze, OpKind::kConcat, OpKind::kReshape);
  TempDir dir;
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", {"N", "3", "4"});
  add_int64_initializer(m, "zero", {}, {0});
  add_int64_initializer(m, "axes0", {1}, {0});
  add_int64_initializer(m, "minus_one", {1}, {-1});
  add_node(m, "Shape", {"x"}, {"s"});
  add_int_attr(add_node(m, "Gather", {"s", "zero"}, {"n"}), "axis", 0);
  add_node(m, "Unsqueeze", {"n", "axes0"}, {"n1"});
  add_int_attr(add_node(m, "Concat", {"n1", "minus_one"}, {"target"}), "axis", 0);
  add_node(m, "Reshape", {"x", "target"}, {"y"}, "flatten");
  add_output(m, "y", {"N", "12"});
  ImportOptions options;
  options.batch = 2;
  auto g = load(write_model(dir, m), options);
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->nodes[0].name, "flatten");
  const ir::Value& target = g->value(g->nodes[0].inputs[1]);
  ASSERT_TRUE(target.constant.has_value());
  auto values = target.constant->to_int64_vector();
  ASSERT_TRUE(values.has_value());
  EXPECT_EQ(*values, (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(g->value(g->outputs[0]).shape, (Shape{2, 12}));
}

// Gelu (opset 20, what PyTorch's default exporter writes for nn.GELU) is lowered into the elementwise ops of
// its formula (onnx_import/lowering/gelu.h); its approximate attribute is checked.
TEST(OnnxImport, GeluLowersIntoItsFormula) {
  for (const char* approximate : {"none", "tanh"}) {
    TempDir dir;
    onnx::ModelProto m = make_model(20);
    add_input(m, "x", {"2", "3"});
    onnx::NodeProto* gelu = add_node(m, "Gelu", {"x"}, {"y"}, "gelu");
    onnx::AttributeProto* a = gelu->add_attribute();
    a->set_name("approximate");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(approximate);
    add_output(m, "y", {"2", "3"});
    auto g = load(write_model(dir, m));
    ASSERT_TRUE(g.has_value()) << approximate << ": " << g.status().to_string();
    bool has_erf = false, has_tanh = false;
    for (const ir::Node& node : g->nodes) {
      EXPECT_NE(node.op, OpKind::kGelu) << approximate;
      has_erf = has_erf || node.op == OpKind::kErf;
      has_tanh = has_tanh || node.op == OpKind::kTanh;
    }
    EXPECT_EQ(has_erf, std::string(approximate) == "none");
    EXPECT_EQ(has_tanh, std::string(approximate) == "tanh");
    EXPECT_EQ(g->value(g->outputs[0]).shape, (Shape{2, 3}));
  }
  TempDir dir;
  onnx::ModelProto m = make_model(20);
  add_input(m, "x", {"2"});
  onnx::AttributeProto* a = add_node(m, "Gelu", {"x"}, {"y"}, "gelu")->add_attribute();
  a->set_name("approximate");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("erf");
  add_output(m, "y", {"2"});
  expect_error(load(write_model(dir, m)), StatusCode::kInvalidModel, {"node 'gelu'", "approximate 'erf'"});
}

TEST(OnnxImport, SliceOpset9AttributesBecomeInputs) {
  REQUIRE_OPS(OpKind::kSlice);
  TempDir dir;
  onnx::ModelProto m = make_model(9);
  add_input(m, "x", {"4", "6"});
  auto* s = add_node(m, "Slice", {"x"}, {"y"}, "slice");
  add_ints_attr(s, "starts", {1});
  add_ints_attr(s, "ends", {3});
  add_ints_attr(s, "axes", {1});
  add_output(m, "y", {"4", "2"});
  auto g = load(write_model(dir, m));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  ASSERT_EQ(g->nodes.size(), 1u);
  const ir::Node& node = g->nodes[0];
  ASSERT_EQ(node.inputs.size(), 4u);
  EXPECT_FALSE(node.attrs.has("starts"));
  const std::vector<std::vector<int64_t>> expected = {{1}, {3}, {1}};
  for (size_t i = 1; i < 4; ++i) {
    const ir::Value& v = g->value(node.inputs[i]);
    ASSERT_TRUE(v.constant.has_value()) << i;
    EXPECT_EQ(*v.constant->to_int64_vector(), expected[i - 1]);
  }
  EXPECT_EQ(g->value(g->outputs[0]).shape, (Shape{4, 2}));
}

TEST(OnnxImport, ClipOpset6AttributesBecomeInputs) {
  REQUIRE_OPS(OpKind::kClip);
  TempDir dir;
  onnx::ModelProto m = make_model(7);
  add_input(m, "x", {"5"});
  auto* c = add_node(m, "Clip", {"x"}, {"y"});
  add_float_attr(c, "min", -1.0f);
  add_float_attr(c, "max", 6.0f);
  add_output(m, "y", {"5"});
  auto g = load(write_model(dir, m));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  const ir::Node& node = g->nodes[0];
  ASSERT_EQ(node.inputs.size(), 3u);
  EXPECT_EQ(g->value(node.inputs[1]).constant->data<float>()[0], -1.0f);
  EXPECT_EQ(g->value(node.inputs[2]).constant->data<float>()[0], 6.0f);
  EXPECT_TRUE(g->value(node.inputs[1]).shape.empty());
}

// Each older form loads through upgrade.cc and gets the newest form's shape.
TEST(OnnxImport, OlderOpsetFormsLoad) {
  struct Case {
    const char* name;
    OpKind op;
    int opset;
    std::function<void(onnx::NodeProto*)> attrs;
    std::vector<std::string> in_dims;
    Shape out;
    size_t inputs_after;  // node inputs once attributes became inputs
  };
  const std::vector<Case> cases = {
      {"Pad", OpKind::kPad, 7, [](onnx::NodeProto* n) { add_ints_attr(n, "pads", {0, 1, 0, 2}); add_float_attr(n, "value", 1.5f); },
       {"2", "3"}, {2, 6}, 3},
      {"Squeeze", OpKind::kSqueeze, 11, [](onnx::NodeProto* n) { add_ints_attr(n, "axes", {1}); }, {"2", "1", "3"}, {2, 3}, 2},
      {"Unsqueeze", OpKind::kUnsqueeze, 11, [](onnx::NodeProto* n) { add_ints_attr(n, "axes", {0}); }, {"2", "3"}, {1, 2, 3}, 2},
      {"ReduceMean", OpKind::kReduceMean, 13, [](onnx::NodeProto* n) { add_ints_attr(n, "axes", {1}); add_int_attr(n, "keepdims", 0); },
       {"2", "3"}, {2}, 2},
      {"Dropout", OpKind::kDropout, 10, [](onnx::NodeProto* n) { add_float_attr(n, "ratio", 0.25f); }, {"2", "3"}, {2, 3}, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    if (cpu::cpu_kernel(c.op).run == nullptr) {
      std::printf("skipping %s: not implemented yet\n", c.name);
      continue;
    }
    TempDir dir;
    onnx::ModelProto m = make_model(c.opset);
    add_input(m, "x", c.in_dims);
    c.attrs(add_node(m, c.name, {"x"}, {"y"}, "old"));
    std::vector<std::string> out_dims;
    for (int64_t d : c.out) out_dims.push_back(std::to_string(d));
    add_output(m, "y", out_dims);
    auto g = load(write_model(dir, m));
    ASSERT_TRUE(g.has_value()) << g.status().to_string();
    EXPECT_EQ(g->value(g->outputs[0]).shape, c.out);
    if (c.op == OpKind::kDropout && g->nodes.empty()) continue;  // a pass may already drop it
    ASSERT_EQ(g->nodes.size(), 1u);
    EXPECT_EQ(g->nodes[0].inputs.size(), c.inputs_after);
    for (size_t i = 1; i < g->nodes[0].inputs.size(); ++i)
      EXPECT_TRUE(g->value(g->nodes[0].inputs[i]).constant.has_value()) << "input " << i;
  }
}

TEST(OnnxImport, Split11SizesBecomeAnInput) {
  REQUIRE_OPS(OpKind::kSplit);
  TempDir dir;
  onnx::ModelProto m = make_model(11);
  add_input(m, "x", {"6", "2"});
  auto* s = add_node(m, "Split", {"x"}, {"a", "b"});
  add_ints_attr(s, "split", {2, 4});
  add_output(m, "a", {"2", "2"});
  add_output(m, "b", {"4", "2"});
  auto g = load(write_model(dir, m));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  EXPECT_EQ(g->value(g->outputs[1]).shape, (Shape{4, 2}));
  ASSERT_EQ(g->nodes[0].inputs.size(), 2u);
  EXPECT_EQ(*g->value(g->nodes[0].inputs[1]).constant->to_int64_vector(), (std::vector<int64_t>{2, 4}));
}

// Note [ConstantOfShape as Expand]: a ConstantOfShape becomes an Expand of its value, which folds at import.
TEST(OnnxImport, ConstantOfShapeFoldsAsAnExpandOfItsValue) {
  for (const bool with_value : {true, false}) {
    SCOPED_TRACE(with_value ? "value 1.5" : "no value: 0");
    TempDir dir;
    onnx::ModelProto m = make_model(13);
    add_input(m, "x", {"2", "3"});
    add_node(m, "Shape", {"x"}, {"s"});
    auto* c = add_node(m, "ConstantOfShape", {"s"}, {"c"}, "fill");
    if (with_value) add_float_tensor_attr(c, "value", {1}, {1.5f});
    add_node(m, "Add", {"x", "c"}, {"y"});
    add_output(m, "y", {"2", "3"});
    auto g = load(write_model(dir, m));
    ASSERT_TRUE(g.has_value()) << g.status().to_string();
    ASSERT_EQ(g->nodes.size(), 1u);
    ASSERT_EQ(g->nodes[0].op, OpKind::kAdd);
    const ir::Value& filled = g->value(g->nodes[0].inputs[1]);
    ASSERT_TRUE(filled.constant.has_value());
    EXPECT_EQ(filled.shape, (Shape{2, 3}));
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(filled.constant->data<float>()[i], with_value ? 1.5f : 0.0f) << i;
  }
}

// Above kMaxFoldBytes the Expand stays, to run on the backend.
TEST(OnnxImport, ConstantOfShapeTooLargeToFoldRunsAsExpand) {
  TempDir dir;
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", {"4096", "8192"});  // 128 MiB of float32
  add_node(m, "Shape", {"x"}, {"s"});
  add_node(m, "ConstantOfShape", {"s"}, {"c"}, "fill");
  add_node(m, "Add", {"x", "c"}, {"y"});
  add_output(m, "y", {"4096", "8192"});
  auto g = load(write_model(dir, m));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  ASSERT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[0].op, OpKind::kExpand);
  EXPECT_EQ(g->nodes[0].name, "fill");
  EXPECT_EQ(g->value(g->nodes[0].outputs[0]).shape, (Shape{4096, 8192}));
}

TEST(OnnxImport, ConstantOfShapeValueOfTwoElementsRejected) {
  TempDir dir;
  onnx::ModelProto m = make_model(13);
  add_int64_initializer(m, "s", {1}, {3});
  add_float_tensor_attr(add_node(m, "ConstantOfShape", {"s"}, {"c"}, "fill"), "value", {2}, {1.0f, 2.0f});
  add_output(m, "c", {"3"});
  expect_error(load(write_model(dir, m)), StatusCode::kInvalidModel, {"node 'fill'", "one element", "holds 2"});
}

// Note [legacy broadcasting]: opset 6's Add(broadcast=1, axis=1) of B [3] to A [2, 3, 4] adds B per channel:
// B becomes [3, 1] (a Reshape the importer folds when B is constant), which numpy broadcasting aligns there.
TEST(OnnxImport, LegacyBroadcastAxisReshapesB) {
  for (const bool constant_b : {true, false}) {
    SCOPED_TRACE(constant_b ? "B an initializer" : "B an input");
    TempDir dir;
    onnx::ModelProto m = make_model(6);
    add_input(m, "a", {"2", "3", "4"});
    if (constant_b) {
      add_float_initializer(m, "b", {3}, {1.0f, 2.0f, 3.0f});
    } else {
      add_input(m, "b", {"3"});
    }
    auto* add = add_node(m, "Add", {"a", "b"}, {"y"}, "add");
    add_int_attr(add, "broadcast", 1);
    add_int_attr(add, "axis", 1);
    add_output(m, "y", {"2", "3", "4"});
    auto g = load(write_model(dir, m));
    ASSERT_TRUE(g.has_value()) << g.status().to_string();
    ASSERT_EQ(g->nodes.size(), constant_b ? 1u : 2u);
    const ir::Node& node = g->nodes.back();
    EXPECT_EQ(node.op, OpKind::kAdd);
    EXPECT_FALSE(node.attrs.has("legacy_broadcast"));
    const ir::Value& b = g->value(node.inputs[1]);
    EXPECT_EQ(b.shape, (Shape{3, 1}));
    if (constant_b) {
      ASSERT_TRUE(b.constant.has_value());
      EXPECT_EQ(b.constant->data<float>()[2], 3.0f);
    } else {
      EXPECT_EQ(g->nodes[0].op, OpKind::kReshape);
    }
    EXPECT_EQ(g->value(g->outputs[0]).shape, (Shape{2, 3, 4}));
  }
}

TEST(OnnxImport, LegacyBroadcastRulesChecked) {
  struct Case {
    const char* name;
    std::vector<std::string> b_dims;
    std::vector<std::pair<const char*, int64_t>> attrs;
    std::vector<std::string> message;
  };
  const std::vector<Case> cases = {
      {"no broadcast flag", {"4"}, {}, {"node 'mul'", "A [2, 3, 4], B [4]", "broadcast=1"}},
      {"B past A's end", {"3", "4"}, {{"broadcast", 1}, {"axis", 2}}, {"node 'mul'", "does not fit", "axis 2"}},
      {"dims differ", {"4"}, {{"broadcast", 1}, {"axis", 1}}, {"node 'mul'", "B's dim 0", "A's dim 1"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    onnx::ModelProto m = make_model(6);
    add_input(m, "a", {"2", "3", "4"});
    add_input(m, "b", c.b_dims);
    auto* mul = add_node(m, "Mul", {"a", "b"}, {"y"}, "mul");
    for (const auto& [name, value] : c.attrs) add_int_attr(mul, name, value);
    add_output(m, "y", {"2", "3", "4"});
    auto g = load(write_model(dir, m));
    ASSERT_FALSE(g.has_value());
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidModel) << g.status().to_string();
    for (const std::string& part : c.message) EXPECT_NE(g.status().message().find(part), std::string::npos) << part;
  }
}

// PRelu-6's slope of one value per channel ([C]) applies along axis 1.
TEST(OnnxImport, LegacyPReluSlopePerChannel) {
  TempDir dir;
  onnx::ModelProto m = make_model(6);
  add_input(m, "x", {"2", "3", "4", "5"});
  add_float_initializer(m, "slope", {3}, {0.1f, 0.2f, 0.3f});
  add_node(m, "PRelu", {"x", "slope"}, {"y"}, "prelu");
  add_output(m, "y", {"2", "3", "4", "5"});
  auto g = load(write_model(dir, m));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->value(g->nodes[0].inputs[1]).shape, (Shape{3, 1, 1}));
}

// Opset 1's forms: Reshape's shape attribute, Concat's default axis 1, Pad's `paddings`, Cast's type name,
// `consumed_inputs` (ignored).
TEST(OnnxImport, OpsetOneFormsLoad) {
  TempDir dir;
  onnx::ModelProto m = make_model(1);
  add_input(m, "x", {"2", "3"});
  auto* relu = add_node(m, "Relu", {"x"}, {"r"});
  add_ints_attr(relu, "consumed_inputs", {0});
  add_ints_attr(add_node(m, "Reshape", {"r"}, {"r2"}), "shape", {3, 2});
  add_node(m, "Concat", {"r2", "r2"}, {"c"});
  auto* pad = add_node(m, "Pad", {"c"}, {"p"});
  add_ints_attr(pad, "paddings", {1, 0, 1, 0});
  auto* cast = add_node(m, "Cast", {"p"}, {"y"});
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::STRING);
  to->set_s("INT32");
  add_output(m, "y", {"5", "4"}, onnx::TensorProto::INT32);
  auto g = load(write_model(dir, m));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  EXPECT_EQ(g->value(g->outputs[0]).shape, (Shape{5, 4}));
  EXPECT_EQ(g->value(g->outputs[0]).dtype, DType::kInt32);
}

TEST(OnnxImport, LegacyCastTypeNameChecked) {
  TempDir dir;
  onnx::ModelProto m = make_model(5);
  add_input(m, "x", {"2"});
  auto* to = add_node(m, "Cast", {"x"}, {"y"}, "cast")->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::STRING);
  to->set_s("FLOAT33");
  add_output(m, "y", {"2"});
  expect_error(load(write_model(dir, m)), StatusCode::kInvalidModel, {"node 'cast'", "FLOAT33"});
}

// Before opset 7 BatchNormalization's is_test defaulted to 0: the batch's own statistics, which ucudnn does
// not compute; is_test=1 loads.
TEST(OnnxImport, LegacyBatchNormNeedsIsTest) {
  for (const bool is_test : {true, false}) {
    SCOPED_TRACE(is_test ? "is_test=1" : "is_test absent");
    TempDir dir;
    onnx::ModelProto m = make_model(6);
    add_input(m, "x", {"1", "2", "3", "3"});
    for (const char* p : {"scale", "bias", "mean", "var"}) add_float_initializer(m, p, {2}, {1.0f, 1.0f});
    auto* bn = add_node(m, "BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn");
    if (is_test) add_int_attr(bn, "is_test", 1);
    add_output(m, "y", {"1", "2", "3", "3"});
    auto g = load(write_model(dir, m));
    if (is_test) {
      EXPECT_TRUE(g.has_value()) << g.status().to_string();
    } else {
      expect_error(g, StatusCode::kUnsupported, {"node 'bn'", "is_test=0"});
    }
  }
}

// onnx_import/typed_forms.cc: Neg of integers runs as Sub(0, X) (and folds when X is constant), Pow's
// integer exponent is cast to float32.
TEST(OnnxImport, IntegerNegAndExponentRewritten) {
  TempDir dir;
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", {"3"});
  add_input(m, "axes", {"2"}, onnx::TensorProto::INT64);
  add_input(m, "e", {"3"}, onnx::TensorProto::INT32);
  add_int64_initializer(m, "k", {2}, {1, -2});
  add_node(m, "Neg", {"axes"}, {"negated"}, "neg_runtime");
  add_node(m, "Neg", {"k"}, {"negated_constant"}, "neg_folded");
  add_node(m, "Add", {"negated", "negated_constant"}, {"sum"});
  add_node(m, "Pow", {"x", "e"}, {"power"}, "pow");
  add_output(m, "sum", {"2"}, onnx::TensorProto::INT64);
  add_output(m, "power", {"3"});
  auto g = load(write_model(dir, m));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  std::vector<OpKind> ops;
  for (const ir::Node& node : g->nodes) ops.push_back(node.op);
  EXPECT_EQ(ops, (std::vector<OpKind>{OpKind::kSub, OpKind::kAdd, OpKind::kCast, OpKind::kPow}));
  const ir::Value& folded = g->value(g->nodes[1].inputs[1]);
  ASSERT_TRUE(folded.constant.has_value());
  EXPECT_EQ(*folded.constant->to_int64_vector(), (std::vector<int64_t>{-1, 2}));
  EXPECT_EQ(g->value(g->nodes[3].inputs[1]).dtype, DType::kFloat32);
}

TEST(OnnxImport, BatchNormSpatialZeroRejected) {
  TempDir dir;
  onnx::ModelProto m = make_model(7);
  add_input(m, "x", {"1", "2", "3", "3"});
  for (const char* p : {"scale", "bias", "mean", "var"}) add_float_initializer(m, p, {2}, {1.0f, 1.0f});
  add_int_attr(add_node(m, "BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn"), "spatial", 0);
  add_output(m, "y", {"1", "2", "3", "3"});
  expect_error(load(write_model(dir, m)), StatusCode::kUnsupported, {"node 'bn'", "spatial"});
}

}  // namespace
}  // namespace ucudnn
