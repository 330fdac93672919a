// float16 and bfloat16 (issue 41, its first slice; Note [half-precision models], onnx_import/half_precision.cc):
// the conversions of runtime/core/half.h against known encodings and against the reference written from
// the definitions (tests/reference/element_access.h); half tensors through .pb and .npy files; and
// half-precision models, which load widened to float32 between their inputs and outputs: a small CNN in
// float16 and in bfloat16 against the same CNN in float32 rounded to half, explicit Casts to half keeping
// their rounding, the nodes whose attributes name half types, wrong inputs, saving a half model's weights.
// Each model runs on the CPU and, when one is present, on the GPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "onnx_import/onnx_import.h"
#include "runtime/core/half.h"
#include "tests/onnx_test_models.h"
#include "tests/reference/element_access.h"
#include "tests/support/tensor_checks.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {
namespace {

using namespace ucudnn::testing;
using reference::half_bits;
using reference::half_value;
using reference::round_to_half;
using ucudnn_test::expect_close;
using ucudnn_test::Tolerance;

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// --- conversions ------------------------------------------------------------------------------------

TEST(HalfConversion, Float16KnownEncodings) {
  struct Case {
    float value;
    uint16_t bits;
  };
  const Case cases[] = {
      {0.0f, 0x0000},          {-0.0f, 0x8000},        {1.0f, 0x3c00},          {-2.0f, 0xc000},
      {0.1f, 0x2e66},          {1.0f / 3, 0x3555},      {65504.0f, 0x7bff},      {65519.99f, 0x7bff},
      {65520.0f, 0x7c00},      {-1e6f, 0xfc00},         {6.103515625e-05f, 0x0400},  // the smallest normal
      {5.9604644775390625e-08f, 0x0001},                // the smallest subnormal, 2^-24
      {2.98023223876953125e-08f, 0x0000},               // 2^-25: a tie, to the even zero
      {float_of(0x33000001), 0x0001},                   // just above it
      {6.0975551605224609375e-05f, 0x03ff},             // the largest subnormal
      {1.00048828125f, 0x3c00},                         // 1 + 2^-11: a tie, to even
      {1.00146484375f, 0x3c02},                         // 1 + 3·2^-11: a tie, to even (up)
      {std::numeric_limits<float>::infinity(), 0x7c00}, {-std::numeric_limits<float>::infinity(), 0xfc00},
  };
  for (const Case& c : cases) EXPECT_EQ(Float16(c.value).bits, c.bits) << c.value;
  const Float16 nan(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan.bits & 0x7c00, 0x7c00);
  EXPECT_NE(nan.bits & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(static_cast<float>(Float16(float_of(0x7f800001)))));  // a signalling NaN stays a NaN
  EXPECT_TRUE(std::signbit(static_cast<float>(Float16::from_bits(0x8000))));
}

TEST(HalfConversion, BFloat16KnownEncodings) {
  struct Case {
    float value;
    uint16_t bits;
  };
  const Case cases[] = {
      {1.0f, 0x3f80},  {-2.0f, 0xc000},  {0.1f, 0x3dcd},  {3.3895313892515355e38f, 0x7f7f},  // the largest
      {std::numeric_limits<float>::max(), 0x7f80},                                    // rounds to infinity
      {1.00390625f, 0x3f80},             // 1 + 2^-8: a tie, to even
      {1.01171875f, 0x3f82},             // 1 + 3·2^-8: a tie, to even (up)
      {float_of(0x00008000), 0x0000},    // a tie among subnormals, to even (zero)
      {float_of(0x00018000), 0x0002},    // a tie, to even (up)
      {float_of(0x00018001), 0x0002},
      {-0.0f, 0x8000},
  };
  for (const Case& c : cases) EXPECT_EQ(BFloat16(c.value).bits, c.bits) << c.value;
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::quiet_NaN()).bits, 0x7fc0);
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(float_of(0x7f800001)))));
  EXPECT_EQ(bits_of(static_cast<float>(BFloat16::from_bits(0x3f81))), 0x3f810000u);
}

// Every encoding of both types: its value against the reference's decoding, and converting that value
// back gives the same encoding.
TEST(HalfConversion, EveryEncodingRoundTrips) {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    for (uint32_t b = 0; b < 65536; ++b) {
      const auto bits = static_cast<uint16_t>(b);
      const float got = dtype == DType::kFloat16 ? static_cast<float>(Float16::from_bits(bits))
                                                 : static_cast<float>(BFloat16::from_bits(bits));
      const double want = half_value(dtype, bits);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << dtype_name(dtype) << " " << b;
        continue;
      }
      ASSERT_EQ(static_cast<double>(got), want) << dtype_name(dtype) << " " << b;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << dtype_name(dtype) << " " << b;
      const uint16_t back = dtype == DType::kFloat16 ? Float16(got).bits : BFloat16(got).bits;
      ASSERT_EQ(back, bits) << dtype_name(dtype) << " " << b;
      ASSERT_EQ(half_bits(dtype, want), bits) << "the reference's encoding, " << dtype_name(dtype) << " " << b;
    }
  }
}

// Rounding against the reference: floats spread over every exponent, and doubles, whose conversion must
// not round twice (a double just above a float16 tie rounds up; through float it would become the tie).
TEST(HalfConversion, RoundsToNearestEvenLikeTheReference) {
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4093) {
    const float f = float_of(static_cast<uint32_t>(u));
    if (std::isnan(f)) continue;
    ASSERT_EQ(Float16(f).bits, half_bits(DType::kFloat16, round_to_half(DType::kFloat16, f))) << u;
    ASSERT_EQ(BFloat16(f).bits, half_bits(DType::kBFloat16, round_to_half(DType::kBFloat16, f))) << u;
  }
  std::mt19937_64 random(41);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-140, 130);
  for (int i = 0; i < 200000; ++i) {
    const double d = std::ldexp(mantissa(random), exponent(random)) * (i % 2 ? -1 : 1);
    ASSERT_EQ(Float16(d).bits, half_bits(DType::kFloat16, round_to_half(DType::kFloat16, d))) << d;
    ASSERT_EQ(BFloat16(d).bits, half_bits(DType::kBFloat16, round_to_half(DType::kBFloat16, d))) << d;
  }
  EXPECT_EQ(Float16(1.0 + 1.0 / 2048 + 1e-12).bits, 0x3c01);       // through float: 1 + 2^-11, then 1.0
  EXPECT_EQ(BFloat16(1.0 + 1.0 / 256 + 1e-12).bits, 0x3f81);       // likewise for bfloat16
  EXPECT_EQ(Float16(int64_t{2049}).bits, 0x6800);                  // 2048: a tie, to even
  EXPECT_EQ(BFloat16(int64_t{16777216 + 65536 + 1}).bits, 0x4b81);  // above the tie a float would make
  EXPECT_EQ(BFloat16(Float16::from_bits(0x3c01)).bits, 0x3f80);   // 1 + 2^-10 to bfloat16: 1
  EXPECT_EQ(Float16(BFloat16::from_bits(0x4780)).bits, 0x7c00);   // 65536: infinity
}

// --- tensor files -------------------------------------------------------------------------------------

Tensor half_tensor(DType dtype, const Shape& shape, const std::vector<float>& values) {
  Tensor t = Tensor::from_floats(shape, values);
  return std::move(convert_floating(t, dtype)).value();
}

TEST(HalfTensorIo, PbRoundTripsBothTypes) {
  TempDir dir;
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor t = half_tensor(dtype, {2, 3}, {0.5f, -1.25f, 65504.0f, 1e-7f, -0.0f, 3.0e38f});
    const std::string path = dir.file(std::string(dtype_name(dtype)) + ".pb");
    ASSERT_TRUE(onnx_import::write_tensor_pb(path, "t", t).is_ok());
    auto back = onnx_import::read_tensor_file(path);
    ASSERT_TRUE(back.has_value()) << back.status().to_string();
    EXPECT_EQ(back->dtype(), dtype);
    EXPECT_EQ(back->shape(), (Shape{2, 3}));
    EXPECT_EQ(std::memcmp(back->raw(), t.raw(), t.nbytes()), 0);
  }
}

// The ONNX spec's other form: one 16-bit encoding per int32_data entry.
TEST(HalfTensorIo, Int32DataHoldsTheEncodings) {
  TempDir dir;
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT16);
  proto.add_dims(3);
  for (int32_t bits : {0x3c00, 0xc000, 0x7c00}) proto.add_int32_data(bits);
  std::string bytes;
  ASSERT_TRUE(proto.SerializeToString(&bytes));
  write_bytes(dir.file("f16.pb"), bytes);
  auto t = onnx_import::read_tensor_file(dir.file("f16.pb"));
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  ASSERT_EQ(t->dtype(), DType::kFloat16);
  EXPECT_EQ(static_cast<float>(t->data<Float16>()[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(t->data<Float16>()[1]), -2.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(t->data<Float16>()[2])));

  proto.set_data_type(onnx::TensorProto::BFLOAT16);
  proto.clear_int32_data();
  for (int32_t bits : {0x3f80, 0x3dcd}) proto.add_int32_data(bits);  // one too few
  ASSERT_TRUE(proto.SerializeToString(&bytes));
  write_bytes(dir.file("short.pb"), bytes);
  auto s = onnx_import::read_tensor_file(dir.file("short.pb"));
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << s.status().to_string();
  EXPECT_NE(s.status().message().find("int32_data"), std::string::npos) << s.status().message();
}

TEST(HalfTensorIo, NpyReadsFloat16AndRefusesBFloat16) {
  TempDir dir;
  const uint16_t f16[3] = {0x3c00, 0x3555, 0xfbff};  // 1, 1/3, -65504
  write_bytes(dir.file("f16.npy"), npy_bytes("<f2", "(3,)", f16, sizeof f16));
  auto t = onnx_import::read_tensor_file(dir.file("f16.npy"));
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_EQ(t->dtype(), DType::kFloat16);
  EXPECT_EQ(std::memcmp(t->raw(), f16, sizeof f16), 0);

  write_bytes(dir.file("bf16.npy"), npy_bytes("|V2", "(3,)", f16, sizeof f16));  // as NumPy saves ml_dtypes.bfloat16
  auto b = onnx_import::read_tensor_file(dir.file("bf16.npy"));
  EXPECT_EQ(b.status().code(), StatusCode::kUnsupported) << b.status().to_string();
  EXPECT_NE(b.status().message().find("bf16.npy"), std::string::npos) << b.status().message();
  EXPECT_NE(b.status().message().find(".pb"), std::string::npos) << b.status().message();
}

// A float16 initializer in an external data file loads, widened to float32 exactly.
TEST(HalfTensorIo, ExternalDataInitializer) {
  TempDir dir;
  const uint16_t bits[4] = {0x3c00, 0xbc00, 0x0001, 0x7bff};  // 1, -1, 2^-24, 65504
  const std::string padding = "pad!";
  write_bytes(dir.file("weights.bin"), padding + std::string(reinterpret_cast<const char*>(bits), sizeof bits));
  onnx::ModelProto m = make_model(13);
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT16);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", "weights.bin"},
                                   {"offset", "4"}, {"length", "8"}}) {
    auto* entry = w->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  add_input(m, "x", {"4"}, onnx::TensorProto::FLOAT16);
  add_node(m, "Add", {"x", "w"}, {"y"}, "add");
  add_output(m, "y", {"4"}, onnx::TensorProto::FLOAT16);
  auto graph = onnx_import::load_model(write_model(dir, m), {});
  ASSERT_TRUE(graph.has_value()) << graph.status().to_string();
  const ir::Value& weight = graph->value(graph->find_value("w"));
  ASSERT_TRUE(weight.constant.has_value());
  ASSERT_EQ(weight.dtype, DType::kFloat32);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(weight.constant->data<float>()[i], half_value(DType::kFloat16, bits[i])) << i;
}

// --- half-precision models ------------------------------------------------------------------------------

// A half initializer (raw_data) of the values, which must be exact in `elem_type`.
void add_half_initializer(onnx::ModelProto& m, const std::string& name, int elem_type, std::vector<int64_t> dims,
                          const std::vector<float>& values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  for (int64_t d : dims) t->add_dims(d);
  const DType dtype = dtype_from_onnx(elem_type);
  const Tensor data = half_tensor(dtype, {static_cast<int64_t>(values.size())}, values);
  t->set_raw_data(data.raw(), data.nbytes());
}

// `count` values in [-1, 1), each exact in `dtype` (rounded to it).
std::vector<float> values_in(DType dtype, size_t count, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dtype == DType::kFloat16 ? static_cast<float>(Float16(uniform(random)))
                                                  : static_cast<float>(BFloat16(uniform(random)));
  return v;
}

// x [1, 2, 6, 6] → Conv(3 filters 3x3, bias) → Relu → Flatten → Gemm(4 outputs, transB) → y [1, 4], every
// tensor of `elem_type` with the weights `weights` rounds to `half` (the same values in every model).
onnx::ModelProto small_cnn(int elem_type, DType half) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", {"1", "2", "6", "6"}, elem_type);
  auto initializer = [&](const std::string& name, std::vector<int64_t> dims, size_t count, uint32_t seed) {
    const std::vector<float> v = values_in(half, count, seed);
    if (elem_type == onnx::TensorProto::FLOAT) add_float_initializer(m, name, dims, v);
    else add_half_initializer(m, name, elem_type, dims, v);
  };
  initializer("w", {3, 2, 3, 3}, 54, 1);
  initializer("b", {3}, 3, 2);
  initializer("w2", {4, 48}, 192, 3);
  initializer("b2", {4}, 4, 4);
  add_node(m, "Conv", {"x", "w", "b"}, {"c"}, "conv");
  add_node(m, "Relu", {"c"}, {"r"}, "relu");
  add_node(m, "Flatten", {"r"}, {"f"}, "flatten");
  add_int_attr(add_node(m, "Gemm", {"f", "w2", "b2"}, {"y"}, "gemm"), "transB", 1);
  add_output(m, "y", {"1", "4"}, elem_type);
  return m;
}

// A scratch folder of this process for the sessions' benchmark databases, removed at exit.
std::filesystem::path scratch_dir() {
  return std::filesystem::temp_directory_path() / ("ucudnn_half_test_" + std::to_string(::getpid()));
}
class RemoveScratch : public ::testing::Environment {
  void TearDown() override { std::filesystem::remove_all(scratch_dir()); }
};
const auto* const kRemoveScratch = ::testing::AddGlobalTestEnvironment(new RemoveScratch);

std::vector<Device> devices() {
  std::vector<Device> d = {Device::kCpu};
  if (cuda_available()) d.push_back(Device::kCuda);
  return d;
}

SessionOptions options_for(Device device) {
  SessionOptions options;
  options.device = device;
  options.threads = 1;
  options.progress = false;
  std::filesystem::create_directories(scratch_dir());
  options.benchmark_db = (scratch_dir() / (std::string(device_name(device)) + ".db")).string();
  return options;
}

Expected<std::vector<Tensor>> run_model(const std::string& path, Device device, const std::vector<Tensor>& inputs) {
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::load(path, options_for(device)));
  return session->run(inputs);
}

// `t` rounded to `dtype` by the reference (apart from runtime/core/half.h), as float32.
Tensor rounded_by_reference(const Tensor& t, DType dtype) {
  Tensor out = std::move(Tensor::allocate(DType::kFloat32, t.shape())).value();
  for (int64_t i = 0; i < t.numel(); ++i)
    out.data<float>()[i] = static_cast<float>(round_to_half(dtype, t.data<float>()[i]));
  return out;
}

class HalfModel : public ::testing::TestWithParam<DType> {};

// The half model computes in float32 what the float32 model computes, so its output is that output
// rounded once to half: within half an ulp, and an ulp where the two devices' float32 sums differ.
TEST_P(HalfModel, SmallCnnMatchesTheFloat32ModelRounded) {
  const DType half = GetParam();
  const int elem_type = dtype_to_onnx(half);
  TempDir dir;
  const std::string half_path = write_model(dir, small_cnn(elem_type, half), "half.onnx");
  const std::string float_path = write_model(dir, small_cnn(onnx::TensorProto::FLOAT, half), "float.onnx");
  const Tensor x_float = Tensor::from_floats({1, 2, 6, 6}, values_in(half, 72, 5));
  const Tensor x_half = std::move(convert_floating(x_float, half)).value();
  const double ulp = half == DType::kFloat16 ? 1.0 / 1024 : 1.0 / 128;

  for (Device device : devices()) {
    auto session = Session::load(half_path, options_for(device));
    ASSERT_TRUE(session.has_value()) << session.status().to_string();
    ASSERT_EQ((*session)->inputs().size(), 1u);
    EXPECT_EQ((*session)->inputs()[0].dtype, half);
    EXPECT_EQ((*session)->outputs()[0].dtype, half);
    EXPECT_EQ((*session)->outputs()[0].name, "y");
    auto got = (*session)->run({x_half});
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    ASSERT_EQ((*got)[0].dtype(), half);
    auto want = run_model(float_path, device, {x_float});
    ASSERT_TRUE(want.has_value()) << want.status().to_string();
    const Tensor got_float = std::move(convert_floating((*got)[0], DType::kFloat32)).value();
    expect_close(got_float, rounded_by_reference((*want)[0], half), Tolerance{1e-6, ulp},
                 std::string(device_name(device)) + " " + dtype_name(half));
  }
}

// The importer leaves half only at the edges: the input, the output, and nothing between.
TEST_P(HalfModel, NoHalfValueBetweenInputsAndOutputs) {
  const DType half = GetParam();
  TempDir dir;
  auto graph = onnx_import::load_model(write_model(dir, small_cnn(dtype_to_onnx(half), half)), {});
  ASSERT_TRUE(graph.has_value()) << graph.status().to_string();
  for (ir::ValueId id = 0; id < static_cast<ir::ValueId>(graph->values.size()); ++id) {
    const bool edge = id == graph->inputs[0] || id == graph->outputs[0];
    EXPECT_EQ(graph->value(id).dtype, edge ? half : DType::kFloat32) << graph->value(id).name;
  }
  EXPECT_EQ(graph->value(graph->outputs[0]).name, "y");
}

// A Cast to a half type inside a float32 model keeps its rounding though what reads it computes in
// float32: y = Cast(Add(Cast(x, to = half), c), to = FLOAT) with c a half initializer is exactly
// half(x) + c in float32 (a sum of two halves is exact there), through a Cast and through a CastLike to a
// half input; the Cast's own half output is the rounding itself.
TEST_P(HalfModel, CastToHalfKeepsItsRounding) {
  const DType half = GetParam();
  const int elem_type = dtype_to_onnx(half);
  TempDir dir;
  onnx::ModelProto m = make_model(15);
  add_input(m, "x", {"16"});
  add_input(m, "like", {"1"}, elem_type);
  const std::vector<float> cs = values_in(half, 16, 11);
  add_half_initializer(m, "c", elem_type, {16}, cs);
  add_int_attr(add_node(m, "Cast", {"x"}, {"h"}, "to_half"), "to", elem_type);
  add_node(m, "Add", {"h", "c"}, {"z"}, "add");
  add_int_attr(add_node(m, "Cast", {"z"}, {"y"}, "to_float"), "to", onnx::TensorProto::FLOAT);
  add_node(m, "CastLike", {"x", "like"}, {"h2"}, "cast_like");
  add_node(m, "Add", {"h2", "c"}, {"z2"}, "add2");
  add_int_attr(add_node(m, "Cast", {"z2"}, {"y2"}, "to_float2"), "to", onnx::TensorProto::FLOAT);
  add_output(m, "y", {"16"});
  add_output(m, "y2", {"16"});
  add_output(m, "h", {"16"}, elem_type);
  const std::string path = write_model(dir, m);

  std::vector<float> xs(16);
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
  for (float& v : xs) v = uniform(random);
  xs[0] = 1.00048828125f;  // a float16 tie, to even
  xs[1] = 1.00390625f;     // a bfloat16 tie
  const Tensor x = Tensor::from_floats({16}, xs);
  const Tensor like = half_tensor(half, {1}, {0.0f});
  Tensor want = std::move(Tensor::allocate(DType::kFloat32, {16})).value();
  int rounded = 0;  // the elements that tell a rounding Cast from none
  for (int i = 0; i < 16; ++i) {
    want.data<float>()[i] = static_cast<float>(round_to_half(half, xs[i]) + cs[i]);
    rounded += want.data<float>()[i] != xs[i] + cs[i];
  }
  ASSERT_GE(rounded, 12);
  for (Device device : devices()) {
    auto got = run_model(path, device, {x, like});
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    ASSERT_EQ(got->size(), 3u);
    expect_close((*got)[0], want, Tolerance{}, std::string(device_name(device)) + " Cast");
    expect_close((*got)[1], want, Tolerance{}, std::string(device_name(device)) + " CastLike");
    ASSERT_EQ((*got)[2].dtype(), half);
    for (int i = 0; i < 16; ++i) {
      uint16_t bits;
      std::memcpy(&bits, static_cast<const char*>((*got)[2].raw()) + 2 * i, 2);
      EXPECT_EQ(bits, half_bits(half, round_to_half(half, xs[i]))) << i;
    }
  }
}

// EyeLike and ConstantOfShape naming a half type compute float32; a half input copied to an output
// comes back with its own bits (half -> float32 -> half is exact).
TEST_P(HalfModel, DtypeAttributesAndCopiedInput) {
  const DType half = GetParam();
  const int elem_type = dtype_to_onnx(half);
  TempDir dir;
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", {"3", "3"}, elem_type);
  add_int_attr(add_node(m, "EyeLike", {"x"}, {"eye"}, "eye"), "dtype", elem_type);
  add_int64_initializer(m, "shape", {2}, {3, 3});
  auto* fill = add_node(m, "ConstantOfShape", {"shape"}, {"half_fill"}, "fill");
  auto* value = fill->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(elem_type);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int32_data(half_bits(half, 0.5));
  add_node(m, "Add", {"x", "eye"}, {"a"}, "add_eye");
  add_node(m, "Add", {"a", "half_fill"}, {"y"}, "add_fill");
  add_node(m, "Identity", {"x"}, {"x_copy"}, "copy");
  add_output(m, "y", {"3", "3"}, elem_type);
  add_output(m, "x_copy", {"3", "3"}, elem_type);
  const std::string path = write_model(dir, m);

  const std::vector<float> xs = values_in(half, 9, 9);
  const Tensor x = half_tensor(half, {3, 3}, xs);
  std::vector<float> ys(9);
  for (int i = 0; i < 9; ++i) ys[i] = static_cast<float>(round_to_half(half, xs[i] + (i % 4 == 0 ? 1.0 : 0.0) + 0.5));
  for (Device device : devices()) {
    auto got = run_model(path, device, {x});
    ASSERT_TRUE(got.has_value()) << got.status().to_string();
    const Tensor y = std::move(convert_floating((*got)[0], DType::kFloat32)).value();
    expect_close(y, Tensor::from_floats({3, 3}, ys), Tolerance{}, std::string(device_name(device)) + " y");
    ASSERT_EQ((*got)[1].dtype(), half);
    EXPECT_EQ(std::memcmp((*got)[1].raw(), x.raw(), x.nbytes()), 0) << device_name(device);
  }
}

// A float32 tensor for a float16 input is refused, naming the input and both dtypes; `ucudnn info`
// (model_info) shows the declared types.
TEST_P(HalfModel, WrongInputDtypeNamesInputAndTypes) {
  const DType half = GetParam();
  TempDir dir;
  const std::string path = write_model(dir, small_cnn(dtype_to_onnx(half), half));
  auto info = model_info(path);
  ASSERT_TRUE(info.has_value()) << info.status().to_string();
  EXPECT_EQ(info->inputs[0].dtype, dtype_name(half));
  EXPECT_EQ(info->outputs[0].dtype, dtype_name(half));
  auto session = Session::load(path, options_for(Device::kCpu));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  const Tensor x_float = Tensor::from_floats({1, 2, 6, 6}, values_in(half, 72, 5));
  auto got = (*session)->run({x_float});
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  for (const std::string& part : {std::string("'x'"), std::string(dtype_name(half)), std::string("float32")})
    EXPECT_NE(got.status().message().find(part), std::string::npos) << got.status().message();
}

// Training's weights go back into a half model in its own type, rounded.
TEST_P(HalfModel, SavedWeightsKeepTheInitializersType) {
  const DType half = GetParam();
  TempDir dir;
  const std::string in = write_model(dir, small_cnn(dtype_to_onnx(half), half), "in.onnx");
  const std::string out = dir.file("out.onnx");
  const Tensor b = Tensor::from_floats({3}, std::vector<float>{0.1f, -1.0f / 3, 2.5f});
  ASSERT_TRUE(onnx_import::save_model_with_initializers(in, out, {{"b", b}}).is_ok());
  onnx::ModelProto saved;
  std::ifstream file(out, std::ios::binary);
  ASSERT_TRUE(saved.ParseFromIstream(&file));
  for (const onnx::TensorProto& t : saved.graph().initializer()) {
    if (t.name() != "b") continue;
    EXPECT_EQ(t.data_type(), dtype_to_onnx(half));
    ASSERT_EQ(t.raw_data().size(), 6u);
    for (int i = 0; i < 3; ++i) {
      uint16_t bits;
      std::memcpy(&bits, t.raw_data().data() + 2 * i, 2);
      EXPECT_EQ(bits, half_bits(half, round_to_half(half, b.data<float>()[i]))) << i;
    }
  }
  auto graph = onnx_import::load_model(out, {});
  EXPECT_TRUE(graph.has_value()) << graph.status().to_string();
}

INSTANTIATE_TEST_SUITE_P(Types, HalfModel, ::testing::Values(DType::kFloat16, DType::kBFloat16),
                         [](const ::testing::TestParamInfo<DType>& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace ucudnn
