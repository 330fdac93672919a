// load_model and summarize_model on small models built here with the ONNX
// protobuf classes, plus the libonnx-testdata files when installed. Constant
// folding and the older opsets' forms: onnx_import_forms_test.cc.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <random>

#include "onnx_import/onnx_import.h"
#include "runtime/cpu/cpu_kernel.h"
#include "tests/onnx_import_test_helpers.h"
#include "tests/onnx_test_models.h"

namespace ucudnn {
namespace {

using namespace ucudnn::testing;
using onnx_import::ImportOptions;

onnx::ModelProto relu_model(const std::vector<std::string>& in_dims, int opset = 13) {
  onnx::ModelProto m = make_model(opset);
  add_input(m, "x", in_dims);
  add_node(m, "Relu", {"x"}, {"y"});
  add_output(m, "y", in_dims);
  return m;
}

TEST(OnnxImport, ReluModelLoads) {
  TempDir dir;
  auto g = load(write_model(dir, relu_model({"2", "3", "4"})));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  ASSERT_EQ(g->nodes.size(), 1u);
  const ir::Node& node = g->nodes[0];
  EXPECT_EQ(node.op, OpKind::kRelu);
  EXPECT_EQ(node.name, "Relu_0");
  EXPECT_EQ(node.opset, 13);
  EXPECT_EQ(g->opset, 13);
  ASSERT_EQ(g->inputs.size(), 1u);
  ASSERT_EQ(g->outputs.size(), 1u);
  EXPECT_EQ(g->value(g->inputs[0]).name, "x");
  const ir::Value& y = g->value(g->outputs[0]);
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.dtype, DType::kFloat32);
  EXPECT_EQ(y.shape, (Shape{2, 3, 4}));
  EXPECT_EQ(y.producer, 0);
  EXPECT_TRUE(g->validate().is_ok());
}

TEST(OnnxImport, SymbolicBatchFromBatchOption) {
  TempDir dir;
  const std::string path = write_model(dir, relu_model({"N", "3", ""}));
  ImportOptions options;
  options.batch = 5;
  auto g = load(path, options);
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  EXPECT_EQ(g->value(g->inputs[0]).shape, (Shape{5, 3, 5}));
  EXPECT_EQ(g->value(g->outputs[0]).shape, (Shape{5, 3, 5}));
}

TEST(OnnxImport, SymbolicBatchFromInputShapes) {
  TempDir dir;
  const std::string path = write_model(dir, relu_model({"N", "3"}));
  ImportOptions options;
  options.input_shapes["x"] = {7, 3};
  auto g = load(path, options);
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  EXPECT_EQ(g->value(g->outputs[0]).shape, (Shape{7, 3}));
}

TEST(OnnxImport, InputShapeRankMismatch) {
  TempDir dir;
  const std::string path = write_model(dir, relu_model({"N", "3"}));
  ImportOptions options;
  options.input_shapes["x"] = {7, 3, 1};
  expect_error(load(path, options), StatusCode::kInvalidArgument, {"'x'", "rank 2", "rank 3"});
}

TEST(OnnxImport, InputShapeForUnknownInput) {
  TempDir dir;
  const std::string path = write_model(dir, relu_model({"2", "3"}));
  ImportOptions options;
  options.input_shapes["nope"] = {1};
  expect_error(load(path, options), StatusCode::kInvalidArgument, {"'nope'"});
}

TEST(OnnxImport, NonPositiveBatchRejected) {
  TempDir dir;
  ImportOptions options;
  options.batch = 0;
  expect_error(load(write_model(dir, relu_model({"N"})), options), StatusCode::kInvalidArgument, {"batch"});
}

TEST(OnnxImport, EmptyFile) {
  TempDir dir;
  const std::string path = dir.file("empty.onnx");
  write_bytes(path, "");
  expect_error(load(path), StatusCode::kInvalidModel, {path, "empty"});
}

TEST(OnnxImport, RandomBytes) {
  TempDir dir;
  std::mt19937 rng(42);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
  const std::string path = dir.file("random.onnx");
  write_bytes(path, bytes);
  expect_error(load(path), StatusCode::kInvalidModel, {path});
}

TEST(OnnxImport, TruncatedModel) {
  TempDir dir;
  onnx::ModelProto m = relu_model({"2", "3"});
  add_float_initializer(m, "unused", {64}, std::vector<float>(64, 1.0f));
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  const std::string path = dir.file("truncated.onnx");
  write_bytes(path, bytes.substr(0, bytes.size() / 2));
  expect_error(load(path), StatusCode::kInvalidModel, {path});
}

TEST(OnnxImport, MissingFile) {
  TempDir dir;
  const std::string path = dir.file("nothing_here.onnx");
  expect_error(load(path), StatusCode::kNotFound, {path});
}

TEST(OnnxImport, DirectoryIsNotAModel) {
  TempDir dir;
  expect_error(load(dir.path()), StatusCode::kInvalidModel, {dir.path(), "not a file"});
}

TEST(OnnxImport, ListsEveryUnsupportedNode) {
  TempDir dir;
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", {"2"});
  add_node(m, "Foo", {"x"}, {"a"}, "first");
  add_node(m, "Relu", {"a"}, {"b"});
  add_node(m, "Bar", {"b"}, {"y"});
  add_output(m, "y", {"2"});
  expect_error(load(write_model(dir, m)), StatusCode::kUnsupported,
               {"2 unsupported nodes", "node 'first' (Foo, opset 13)", "node 'Bar_2' (Bar, opset 13)"});
}

TEST(OnnxImport, NonDefaultDomainRejected) {
  TempDir dir;
  onnx::ModelProto m = relu_model({"2"});
  m.mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
  auto* id = m.add_opset_import();
  id->set_domain("com.microsoft");
  id->set_version(1);
  expect_error(load(write_model(dir, m)), StatusCode::kUnsupported, {"com.microsoft", "Relu_0"});
}

TEST(OnnxImport, AiOnnxDomainIsTheDefault) {
  TempDir dir;
  onnx::ModelProto m = relu_model({"2"});
  m.mutable_opset_import(0)->set_domain("ai.onnx");
  m.mutable_graph()->mutable_node(0)->set_domain("ai.onnx");
  auto g = load(write_model(dir, m));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  EXPECT_EQ(g->opset, 13);
}

TEST(OnnxImport, OpsetAboveTwentyOneRejected) {
  TempDir dir;
  expect_error(load(write_model(dir, relu_model({"2"}, 22), "twentytwo.onnx")), StatusCode::kUnsupported,
               {"opset 22"});
  EXPECT_TRUE(load(write_model(dir, relu_model({"2"}, 1), "one.onnx")).has_value());
  EXPECT_TRUE(load(write_model(dir, relu_model({"2"}, 6), "six.onnx")).has_value());
  EXPECT_TRUE(load(write_model(dir, relu_model({"2"}, 21), "twentyone.onnx")).has_value());
}

TEST(OnnxImport, OldIrVersionRejected) {
  TempDir dir;
  onnx::ModelProto m = relu_model({"2"});
  m.set_ir_version(2);
  expect_error(load(write_model(dir, m)), StatusCode::kUnsupported, {"IR version 2"});
}

TEST(OnnxImport, DanglingInput) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  add_input(m, "x", {"2"});
  add_node(m, "Relu", {"ghost"}, {"y"}, "r");
  add_output(m, "y", {"2"});
  expect_error(load(write_model(dir, m)), StatusCode::kInvalidModel, {"node 'r'", "dangling input 'ghost'"});
}

TEST(OnnxImport, UnsortedNodesRejected) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  add_input(m, "x", {"2"});
  add_node(m, "Relu", {"a"}, {"y"}, "second");
  add_node(m, "Relu", {"x"}, {"a"}, "first");
  add_output(m, "y", {"2"});
  expect_error(load(write_model(dir, m)), StatusCode::kInvalidModel, {"node 'second'", "'a'", "topological"});
}

TEST(OnnxImport, ValueDefinedTwiceRejected) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  add_input(m, "x", {"2"});
  add_node(m, "Relu", {"x"}, {"y"});
  add_node(m, "Relu", {"x"}, {"y"});
  add_output(m, "y", {"2"});
  expect_error(load(write_model(dir, m)), StatusCode::kInvalidModel, {"'y'", "already defined"});
}

TEST(OnnxImport, UndefinedGraphOutputRejected) {
  TempDir dir;
  onnx::ModelProto m = relu_model({"2"});
  add_output(m, "z", {"2"});
  expect_error(load(write_model(dir, m)), StatusCode::kInvalidModel, {"'z'", "never produced"});
}

// float16 and bfloat16 load (tests/half_precision_test.cc); uint16 has no DType.
TEST(OnnxImport, UInt16InputRejected) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  add_input(m, "x", {"2"}, onnx::TensorProto::UINT16);
  add_node(m, "Relu", {"x"}, {"y"});
  add_output(m, "y", {"2"}, onnx::TensorProto::UINT16);
  expect_error(load(write_model(dir, m)), StatusCode::kUnsupported, {"'x'", "uint16"});
}

TEST(OnnxImport, UInt16InitializerRejected) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::UINT16);
  w->add_dims(2);
  w->add_int32_data(0);
  w->add_int32_data(0);
  add_node(m, "Relu", {"w"}, {"y"});
  add_output(m, "y", {"2"});
  expect_error(load(write_model(dir, m)), StatusCode::kUnsupported, {"'w'", "uint16"});
}

TEST(OnnxImport, UnknownAttributeRejected) {
  TempDir dir;
  onnx::ModelProto m = relu_model({"2"});
  add_float_attr(m.mutable_graph()->mutable_node(0), "alpha", 0.5f);
  expect_error(load(write_model(dir, m)), StatusCode::kUnsupported, {"node 'Relu_0' (Relu, opset 13)", "'alpha'"});
}

TEST(OnnxImport, WrongAttributeTypeRejected) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  add_input(m, "x", {"2"});
  add_int_attr(add_node(m, "LeakyRelu", {"x"}, {"y"}, "leaky"), "alpha", 1);
  add_output(m, "y", {"2"});
  expect_error(load(write_model(dir, m)), StatusCode::kInvalidModel, {"node 'leaky'", "'alpha'", "float", "int"});
}

TEST(OnnxImport, AttributeDefaultsFilled) {
  REQUIRE_OPS(OpKind::kLeakyRelu);
  TempDir dir;
  onnx::ModelProto m = make_model();
  add_input(m, "x", {"2"});
  add_node(m, "LeakyRelu", {"x"}, {"y"});
  add_output(m, "y", {"2"});
  auto g = load(write_model(dir, m));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  EXPECT_FLOAT_EQ(g->nodes[0].attrs.get_float("alpha"), 0.01f);
}

TEST(OnnxImport, DeclaredOutputShapeIsChecked) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  add_input(m, "x", {"2", "3"});
  add_node(m, "Relu", {"x"}, {"y"});
  add_output(m, "y", {"2", "4"});
  expect_error(load(write_model(dir, m)), StatusCode::kInvalidModel, {"'y'", "[2, 4]", "[2, 3]"});
}

// A given shape sets symbolic dims only: a static dim the model declares stays
// (before, [8, 3] for a declared [1, 3] ran with batch 8).
TEST(OnnxImport, GivenShapeCannotChangeStaticDims) {
  TempDir dir;
  const std::string path = write_model(dir, relu_model({"1", "3"}));
  ImportOptions options;
  options.input_shapes["x"] = {8, 3};
  expect_error(load(path, options), StatusCode::kInvalidArgument,
               {"graph input 'x'", "declared [1, 3]", "[8, 3]", "dim 0 (8, not 1)"});
  options.input_shapes["x"] = {1, 3};
  auto g = load(path, options);
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  EXPECT_EQ(g->value(g->outputs[0]).shape, (Shape{1, 3}));
}

// The channel dim of [batch, 3, 8, 8] given as 4 is the input's fault, found at the
// input rather than at the first Conv as a model error.
TEST(OnnxImport, GivenShapeWrongChannelsBlamesTheInput) {
  TempDir dir;
  const std::string path = write_model(dir, relu_model({"batch", "3", "8", "8"}));
  ImportOptions options;
  options.input_shapes["x"] = {1, 4, 8, 8};
  expect_error(load(path, options), StatusCode::kInvalidArgument,
               {"graph input 'x'", "[batch, 3, 8, 8]", "[1, 4, 8, 8]", "dim 1 (4, not 3)"});
}

// A symbolic name is one value: set by one input's given shape, it holds for the
// other inputs that use it (not the batch option), and two given shapes must agree.
TEST(OnnxImport, SymbolicDimsBoundConsistentlyAcrossInputs) {
  TempDir dir;
  onnx::ModelProto m = make_model(13);
  add_input(m, "a", {"N", "3"});
  add_input(m, "b", {"N", "4"});
  add_input(m, "c", {"M"});
  add_node(m, "Relu", {"a"}, {"ya"});
  add_node(m, "Relu", {"b"}, {"yb"});
  add_node(m, "Relu", {"c"}, {"yc"});
  add_output(m, "ya", {"N", "3"});
  add_output(m, "yb", {"N", "4"});
  add_output(m, "yc", {"M"});
  const std::string path = write_model(dir, m);
  ImportOptions options;
  options.batch = 5;
  options.input_shapes["a"] = {2, 3};
  auto g = load(path, options);
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  EXPECT_EQ(g->value(g->inputs[1]).shape, (Shape{2, 4}));  // N from a
  EXPECT_EQ(g->value(g->inputs[2]).shape, (Shape{5}));     // M: the batch
  options.input_shapes["b"] = {3, 4};
  expect_error(load(path, options), StatusCode::kInvalidArgument,
               {"'N'", "to 2 (graph input 'a')", "to 3 (graph input 'b' [3, 4])"});
}

// Sizes are products: a batch of 2^62 over [N, 3, 8, 8] floats is refused at import,
// before anything multiplies it again (it used to abort in the allocator).
TEST(OnnxImport, InputSizeOverflowRefused) {
  TempDir dir;
  const std::string path = write_model(dir, relu_model({"N", "3", "8", "8"}));
  ImportOptions options;
  options.batch = int64_t{1} << 62;
  expect_error(load(path, options), StatusCode::kInvalidArgument,
               {"graph input 'x'", "2^63 bytes", "batch (4611686018427387904)"});
  options.batch = 1;
  const std::string huge = write_model(dir, relu_model({"N", "3", "2147483648", "2147483648"}), "huge.onnx");
  expect_error(load(huge, options), StatusCode::kInvalidArgument, {"graph input 'x'", "2^63 bytes"});
}

// A Reshape whose target is a graph input: unsupported without its value (the
// error says how to give it), folded into a constant with it.
onnx::ModelProto reshape_by_input_model() {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", {"2", "6"});
  add_input(m, "target", {"2"}, onnx::TensorProto::INT64);
  add_node(m, "Reshape", {"x", "target"}, {"y"});
  add_output(m, "y", {"3", "4"});
  return m;
}

TEST(OnnxImport, ConstantInputsFoldShapeInputs) {
  REQUIRE_OPS(OpKind::kReshape);
  TempDir dir;
  const std::string path = write_model(dir, reshape_by_input_model());
  expect_error(load(path), StatusCode::kUnsupported,
               {"must be known when the model is loaded", "graph input 'target'", "constant_inputs"});
  ImportOptions options;
  options.constant_inputs["target"] = Tensor::from_int64s({2}, std::vector<int64_t>{3, 4});
  auto g = load(path, options);
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  ASSERT_EQ(g->inputs.size(), 1u);  // only x is given at run time
  EXPECT_EQ(g->value(g->inputs[0]).name, "x");
  EXPECT_EQ(g->value(g->outputs[0]).shape, (Shape{3, 4}));
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_TRUE(g->value(g->nodes[0].inputs[1]).constant.has_value());
}

TEST(OnnxImport, ConstantInputsChecked) {
  TempDir dir;
  const std::string path = write_model(dir, reshape_by_input_model());
  ImportOptions options;
  options.constant_inputs["target"] = Tensor::from_floats({2}, std::vector<float>{3, 4});
  expect_error(load(path, options), StatusCode::kInvalidArgument, {"'target'", "declared int64", "float32[2]"});
  options.constant_inputs["target"] = Tensor::from_int64s({3}, std::vector<int64_t>{3, 4, 1});
  expect_error(load(path, options), StatusCode::kInvalidArgument, {"'target'", "[3]", "dim 0 (3, not 2)"});
  options.constant_inputs.clear();
  options.constant_inputs["nope"] = Tensor::from_int64s({2}, std::vector<int64_t>{3, 4});
  expect_error(load(path, options), StatusCode::kInvalidArgument, {"a value is given for 'nope'", "inputs: x, target"});
  options.constant_inputs.clear();
  options.constant_inputs["target"] = Tensor::from_int64s({2}, std::vector<int64_t>{3, 4});
  options.input_shapes["target"] = {2};
  expect_error(load(path, options), StatusCode::kInvalidArgument, {"'target'", "both a shape and a constant value"});
}

TEST(OnnxImport, InitializersListedAsInputsAreConstants) {
  TempDir dir;
  onnx::ModelProto m = make_model(9, 3);
  add_input(m, "x", {"2"});
  add_input(m, "w", {"3"});
  add_float_initializer(m, "w", {3}, {-1.0f, 0.0f, 2.0f});
  add_node(m, "Relu", {"x"}, {"y"});
  add_node(m, "Relu", {"w"}, {"z"});
  add_output(m, "y", {"2"});
  add_output(m, "z", {"3"});
  auto g = load(write_model(dir, m));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  ASSERT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(g->value(g->inputs[0]).name, "x");
}

TEST(OnnxImport, ConstantInputsFoldAndNodesDisappear) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  add_input(m, "x", {"3"});
  add_float_initializer(m, "w", {3}, {-1.0f, 0.5f, 2.0f});
  add_node(m, "Relu", {"w"}, {"rw"}, "fold_me");
  add_node(m, "Relu", {"x"}, {"y"}, "keep_me");
  add_output(m, "y", {"3"});
  add_output(m, "rw", {"3"});
  const std::string path = write_model(dir, m);

  auto g = load(path);
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->nodes[0].name, "keep_me");
  const ir::Value& rw = g->value(g->outputs[1]);
  ASSERT_TRUE(rw.constant.has_value());
  EXPECT_EQ(rw.producer, -1);
  const float* p = rw.constant->data<float>();
  EXPECT_EQ(p[0], 0.0f);
  EXPECT_EQ(p[1], 0.5f);
  EXPECT_EQ(p[2], 2.0f);
  EXPECT_TRUE(g->validate().is_ok());

  ImportOptions no_fold;
  no_fold.fold_constants = false;
  auto unfolded = load(path, no_fold);
  ASSERT_TRUE(unfolded.has_value()) << unfolded.status().to_string();
  EXPECT_EQ(unfolded->nodes.size(), 2u);
}

TEST(OnnxImport, ConstantNodesBecomeValues) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  auto* c = add_node(m, "Constant", {}, {"c"}, "const");
  auto* a = c->add_attribute();
  a->set_name("value_floats");
  a->set_type(onnx::AttributeProto::FLOATS);
  a->add_floats(-3.0f);
  a->add_floats(4.0f);
  add_node(m, "Relu", {"c"}, {"y"});
  add_output(m, "y", {"2"});
  auto g = load(write_model(dir, m));
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  EXPECT_TRUE(g->nodes.empty());
  const ir::Value& y = g->value(g->outputs[0]);
  ASSERT_TRUE(y.constant.has_value());
  EXPECT_EQ(y.constant->data<float>()[0], 0.0f);
  EXPECT_EQ(y.constant->data<float>()[1], 4.0f);
}

TEST(OnnxImport, SparseConstantRejected) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  auto* c = add_node(m, "Constant", {}, {"c"}, "const");
  auto* a = c->add_attribute();
  a->set_name("sparse_value");
  a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  add_node(m, "Relu", {"c"}, {"y"});
  add_output(m, "y", {"2"});
  expect_error(load(write_model(dir, m)), StatusCode::kUnsupported, {"node 'const'", "sparse_value"});
}

TEST(OnnxImport, ExternalDataInitializer) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add_entry = [&](const std::string& k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add_entry("location", "weights.bin");
  add_entry("offset", "8");
  add_entry("length", "24");
  const float values[6] = {-1, 2, -3, 4, -5, 6};
  std::string blob(8, 'x');
  blob.append(reinterpret_cast<const char*>(values), sizeof(values));
  write_bytes(dir.file("weights.bin"), blob);
  add_node(m, "Relu", {"w"}, {"y"});
  add_output(m, "y", {"2", "3"});
  const std::string path = write_model(dir, m);

  ImportOptions no_fold;
  no_fold.fold_constants = false;
  auto g = load(path, no_fold);
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  const ir::Value& wv = g->value(g->nodes[0].inputs[0]);
  ASSERT_TRUE(wv.constant.has_value());
  EXPECT_EQ(wv.shape, (Shape{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(wv.constant->data<float>()[i], values[i]);

  auto folded = load(path);
  ASSERT_TRUE(folded.has_value()) << folded.status().to_string();
  EXPECT_EQ(folded->value(folded->outputs[0]).constant->data<float>()[3], 4.0f);

  std::filesystem::remove(dir.file("weights.bin"));
  expect_error(load(path), StatusCode::kNotFound, {"weights.bin", "'w'"});
  write_bytes(dir.file("weights.bin"), blob.substr(0, 20));
  expect_error(load(path), StatusCode::kInvalidModel, {"weights.bin", "'w'"});
}

// A model y = Relu(w) whose one-float initializer w is external data at `location`.
onnx::ModelProto relu_of_external_weight(const std::string& location) {
  onnx::ModelProto m = make_model();
  auto* w = add_float_initializer(m, "w", {1}, {1.0f});
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = w->add_external_data();
  e->set_key("location");
  e->set_value(location);
  add_node(m, "Relu", {"w"}, {"y"});
  add_output(m, "y", {"1"});
  return m;
}

TEST(OnnxImport, ExternalDataOutsideModelFolderRejected) {
  TempDir dir;
  expect_error(load(write_model(dir, relu_of_external_weight("../secret.bin"))), StatusCode::kInvalidModel,
               {"'w'", "../secret.bin"});
}

// Note [model folders are untrusted]: a data file in the model's folder that links elsewhere is refused;
// one that links to another file inside the folder is read.
TEST(OnnxImport, ExternalDataLinkingOutsideModelFolderRejected) {
  TempDir outside, dir;
  const float value = 3.0f;
  write_bytes(outside.file("secret.bin"), std::string(reinterpret_cast<const char*>(&value), sizeof value));
  write_bytes(dir.file("inside.bin"), std::string(reinterpret_cast<const char*>(&value), sizeof value));
  std::filesystem::create_symlink(outside.file("secret.bin"), dir.file("weights.bin"));
  std::filesystem::create_symlink("inside.bin", dir.file("alias.bin"));
  for (const char* location : {"weights.bin", "alias.bin"}) {
    const std::string path = write_model(dir, relu_of_external_weight(location));
    if (std::string(location) == "weights.bin") {
      expect_error(load(path), StatusCode::kInvalidModel, {"'w'", "weights.bin", "outside the model's folder"});
    } else {
      auto g = load(path);
      ASSERT_TRUE(g.has_value()) << g.status().to_string();
    }
  }
}

TEST(OnnxImport, InitializerDataCountChecked) {
  TempDir dir;
  onnx::ModelProto m = make_model();
  add_int64_initializer(m, "w", {3}, {1, 2});
  add_node(m, "Relu", {"w"}, {"y"});
  add_output(m, "y", {"3"});
  expect_error(load(write_model(dir, m)), StatusCode::kInvalidModel, {"'w'", "int64_data"});
}

TEST(OnnxImport, SummaryListsUnsupportedWithoutFailing) {
  TempDir dir;
  onnx::ModelProto m = make_model(13);
  m.set_producer_version("1.2");
  add_input(m, "x", {"batch_size", "3"});
  add_input(m, "w", {"3"});
  add_float_initializer(m, "w", {3}, {1, 2, 3});
  add_node(m, "Relu", {"x"}, {"a"});
  add_node(m, "Relu", {"a"}, {"b"});
  add_node(m, "Foo", {"b"}, {"y"}, "foo");
  add_output(m, "y", {"batch_size", ""});
  auto s = onnx_import::summarize_model(write_model(dir, m));
  ASSERT_TRUE(s.has_value()) << s.status().to_string();
  EXPECT_EQ(s->ir_version, 8);
  EXPECT_EQ(s->opset, 13);
  EXPECT_EQ(s->producer, "ucudnn-test 1.2");
  EXPECT_EQ(s->parameter_count, 3);
  ASSERT_EQ(s->inputs.size(), 1u);
  EXPECT_EQ(s->inputs[0].dtype, "float32");
  EXPECT_EQ(s->inputs[0].dims, (std::vector<std::string>{"batch_size", "3"}));
  EXPECT_EQ(s->outputs[0].dims, (std::vector<std::string>{"batch_size", "?"}));
  EXPECT_EQ(s->op_counts.at("Relu"), 2);
  EXPECT_EQ(s->op_counts.at("Foo"), 1);
  ASSERT_EQ(s->unsupported.size(), 1u);
  EXPECT_NE(s->unsupported[0].find("node 'foo' (Foo, opset 13)"), std::string::npos) << s->unsupported[0];
}

// The Debian package libonnx-testdata (scripts/install-deps installs it).
const std::string kTestData = "/usr/share/libonnx-testdata/data";

TEST(OnnxImportTestData, ReluModelLoads) {
  const std::string path = kTestData + "/node/test_relu/model.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not installed (libonnx-testdata)";
  auto g = load(path);
  ASSERT_TRUE(g.has_value()) << g.status().to_string();
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->value(g->outputs[0]).shape, (Shape{3, 4, 5}));
}

TEST(OnnxImportTestData, Conv2dSummaryCountsOps) {
  const std::string path = kTestData + "/pytorch-converted/test_Conv2d/model.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not installed (libonnx-testdata)";
  auto s = onnx_import::summarize_model(path);
  ASSERT_TRUE(s.has_value()) << s.status().to_string();
  EXPECT_EQ(s->op_counts.size(), 1u);
  EXPECT_EQ(s->op_counts.at("Conv"), 1);
  EXPECT_EQ(s->opset, 6);
  EXPECT_EQ(s->parameter_count, 4 * 3 * 3 * 2 + 4);
  ASSERT_EQ(s->inputs.size(), 1u);  // the weights are initializers
  EXPECT_EQ(s->inputs[0].dims, (std::vector<std::string>{"2", "3", "7", "5"}));
  EXPECT_TRUE(s->unsupported.empty()) << s->unsupported[0];  // opset 6's Conv is today's
}

}  // namespace
}  // namespace ucudnn
