// read_tensor_file / write_tensor_pb: TensorProto files in every data field,
// and .npy files whose bytes are written here by hand.
#include <gtest/gtest.h>

#include <cstring>

#include "onnx_import/onnx_import.h"
#include "tests/onnx_test_models.h"

namespace ucudnn {
namespace {

using namespace ucudnn::testing;
using onnx_import::read_tensor_file;
using onnx_import::write_tensor_pb;

std::string serialize(const onnx::TensorProto& t) {
  std::string bytes;
  EXPECT_TRUE(t.SerializeToString(&bytes));
  return bytes;
}

TEST(TensorIo, RoundTripFloatAndInt64) {
  TempDir dir;
  const std::vector<float> f = {1.5f, -2.0f, 3.25f, 0.0f, 5.0f, -6.5f};
  ASSERT_TRUE(write_tensor_pb(dir.file("f.pb"), "out", Tensor::from_floats({2, 3}, f)).is_ok());
  auto back = read_tensor_file(dir.file("f.pb"));
  ASSERT_TRUE(back.has_value()) << back.status().to_string();
  EXPECT_EQ(back->dtype(), DType::kFloat32);
  EXPECT_EQ(back->shape(), (Shape{2, 3}));
  EXPECT_EQ(std::memcmp(back->raw(), f.data(), 6 * sizeof(float)), 0);

  const std::vector<int64_t> i = {7, -8, 1LL << 40};
  ASSERT_TRUE(write_tensor_pb(dir.file("i.pb"), "idx", Tensor::from_int64s({3}, i)).is_ok());
  auto ib = read_tensor_file(dir.file("i.pb"));
  ASSERT_TRUE(ib.has_value()) << ib.status().to_string();
  EXPECT_EQ(*ib->to_int64_vector(), i);

  onnx::TensorProto proto;  // the name is stored
  std::ifstream in(dir.file("f.pb"), std::ios::binary);
  ASSERT_TRUE(proto.ParseFromIstream(&in));
  EXPECT_EQ(proto.name(), "out");
}

TEST(TensorIo, WriteReplacesAtomicallyAndLeavesNoTemporaries) {
  TempDir dir;
  const std::string path = dir.file("t.pb");
  write_bytes(path, "old contents");
  ASSERT_TRUE(write_tensor_pb(path, "t", Tensor::from_floats({1}, std::vector<float>{4.0f})).is_ok());
  auto t = read_tensor_file(path);
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_EQ(t->data<float>()[0], 4.0f);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST(TensorIo, WriteIntoMissingFolderFails) {
  TempDir dir;
  Status s = write_tensor_pb(dir.file("no/such/dir/t.pb"), "t", Tensor::from_floats({1}, std::vector<float>{1}));
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.to_string();
}

TEST(TensorIo, ReadsTypedFields) {
  TempDir dir;
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(2);
  t.add_float_data(1.0f);
  t.add_float_data(-2.0f);
  write_bytes(dir.file("float.pb"), serialize(t));
  auto f = read_tensor_file(dir.file("float.pb"));
  ASSERT_TRUE(f.has_value()) << f.status().to_string();
  EXPECT_EQ(f->data<float>()[1], -2.0f);

  t.Clear();
  t.set_data_type(onnx::TensorProto::INT32);
  t.add_dims(3);
  for (int v : {4, -5, 6}) t.add_int32_data(v);
  write_bytes(dir.file("int32.pb"), serialize(t));
  auto i32 = read_tensor_file(dir.file("int32.pb"));
  ASSERT_TRUE(i32.has_value()) << i32.status().to_string();
  EXPECT_EQ(i32->dtype(), DType::kInt32);
  EXPECT_EQ(*i32->to_int64_vector(), (std::vector<int64_t>{4, -5, 6}));

  t.Clear();
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_int64_data(-9);  // a scalar
  write_bytes(dir.file("int64.pb"), serialize(t));
  auto i64 = read_tensor_file(dir.file("int64.pb"));
  ASSERT_TRUE(i64.has_value()) << i64.status().to_string();
  EXPECT_TRUE(i64->shape().empty());
  EXPECT_EQ(i64->data<int64_t>()[0], -9);

  t.Clear();
  t.set_data_type(onnx::TensorProto::DOUBLE);
  t.add_dims(1);
  t.add_double_data(0.125);
  write_bytes(dir.file("double.pb"), serialize(t));
  auto d = read_tensor_file(dir.file("double.pb"));
  ASSERT_TRUE(d.has_value()) << d.status().to_string();
  EXPECT_EQ(d->dtype(), DType::kFloat64);
  EXPECT_EQ(d->data<double>()[0], 0.125);
}

TEST(TensorIo, BadTensorFiles) {
  TempDir dir;
  EXPECT_EQ(read_tensor_file(dir.file("missing.pb")).status().code(), StatusCode::kNotFound);
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(4);
  t.set_raw_data(std::string(12, '\0'));  // 3 floats for 4 elements
  write_bytes(dir.file("short.pb"), serialize(t));
  auto s = read_tensor_file(dir.file("short.pb"));
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << s.status().to_string();
  EXPECT_NE(s.status().message().find("short.pb"), std::string::npos);
  t.set_data_type(onnx::TensorProto::UINT16);
  write_bytes(dir.file("uint16.pb"), serialize(t));
  EXPECT_EQ(read_tensor_file(dir.file("uint16.pb")).status().code(), StatusCode::kUnsupported);
}


TEST(TensorIo, ReadsNpy) {
  TempDir dir;
  const float f[6] = {1, 2, 3, 4, 5, 6};
  write_bytes(dir.file("f.npy"), npy_bytes("<f4", "(2, 3)", f, sizeof(f)));
  auto tf = read_tensor_file(dir.file("f.npy"));
  ASSERT_TRUE(tf.has_value()) << tf.status().to_string();
  EXPECT_EQ(tf->dtype(), DType::kFloat32);
  EXPECT_EQ(tf->shape(), (Shape{2, 3}));
  EXPECT_EQ(tf->data<float>()[5], 6.0f);

  const int64_t i[3] = {-1, 0, 1LL << 33};
  write_bytes(dir.file("i.npy"), npy_bytes("<i8", "(3,)", i, sizeof(i)));
  auto ti = read_tensor_file(dir.file("i.npy"));
  ASSERT_TRUE(ti.has_value()) << ti.status().to_string();
  EXPECT_EQ(*ti->to_int64_vector(), (std::vector<int64_t>{-1, 0, 1LL << 33}));

  const int32_t i32[2] = {5, -7};
  write_bytes(dir.file("i32.npy"), npy_bytes("<i4", "(1, 2)", i32, sizeof(i32)));
  auto t32 = read_tensor_file(dir.file("i32.npy"));
  ASSERT_TRUE(t32.has_value()) << t32.status().to_string();
  EXPECT_EQ(t32->dtype(), DType::kInt32);
  EXPECT_EQ(t32->shape(), (Shape{1, 2}));

  const double d = 2.5;
  write_bytes(dir.file("scalar.npy"), npy_bytes("<f8", "()", &d, sizeof(d)));
  auto td = read_tensor_file(dir.file("scalar.npy"));
  ASSERT_TRUE(td.has_value()) << td.status().to_string();
  EXPECT_EQ(td->dtype(), DType::kFloat64);
  EXPECT_TRUE(td->shape().empty());
  EXPECT_EQ(td->data<double>()[0], 2.5);
}

TEST(TensorIo, RejectsNpyWeCannotRead) {
  TempDir dir;
  const float f[2] = {1, 2};
  write_bytes(dir.file("be.npy"), npy_bytes(">f4", "(2,)", f, sizeof(f)));
  EXPECT_EQ(read_tensor_file(dir.file("be.npy")).status().code(), StatusCode::kUnsupported);
  write_bytes(dir.file("fortran.npy"), npy_bytes("<f4", "(2,)", f, sizeof(f), true));
  EXPECT_EQ(read_tensor_file(dir.file("fortran.npy")).status().code(), StatusCode::kUnsupported);
  write_bytes(dir.file("uint16.npy"), npy_bytes("<u2", "(2,)", f, 4));
  EXPECT_EQ(read_tensor_file(dir.file("uint16.npy")).status().code(), StatusCode::kUnsupported);
  write_bytes(dir.file("short.npy"), npy_bytes("<f4", "(3,)", f, sizeof(f)));
  auto s = read_tensor_file(dir.file("short.npy"));
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << s.status().to_string();
  write_bytes(dir.file("cut.npy"), npy_bytes("<f4", "(2,)", f, sizeof(f)).substr(0, 30));
  EXPECT_EQ(read_tensor_file(dir.file("cut.npy")).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ucudnn
