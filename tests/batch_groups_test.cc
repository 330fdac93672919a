// Note [batch groups] (optimizer/batch_groups.h): a CPU session's batch run as groups of samples, one
// thread each. Models built here with the ONNX protobuf classes and loaded through Session::load at
// two batches: the groups compute what the whole batch computes (and what a session of the group's
// batch computes on those samples); models whose nodes mix samples are refused naming the node, or
// under auto run whole with the reason in the note; bad options are refused naming the option.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "optimizer/batch_groups.h"
#include "tests/onnx_test_models.h"
#include "tests/support/tensor_checks.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn {
namespace {

using namespace ucudnn::testing;

// x [N, 3, 8, 8] → Conv 3×3 (4 channels) → Relu → GlobalAveragePool → Flatten → Gemm → y [N, 5].
onnx::ModelProto cnn_model() {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", {"N", "3", "8", "8"});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto values = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
  };
  add_float_initializer(m, "w", {4, 3, 3, 3}, values(4 * 3 * 3 * 3));
  add_float_initializer(m, "b", {4}, values(4));
  add_float_initializer(m, "fc_w", {5, 4}, values(20));
  add_float_initializer(m, "fc_b", {5}, values(5));
  add_ints_attr(add_node(m, "Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  add_node(m, "Relu", {"c"}, {"r"}, "relu");
  add_node(m, "GlobalAveragePool", {"r"}, {"p"}, "pool");
  add_node(m, "Flatten", {"p"}, {"f"}, "flatten");
  add_int_attr(add_node(m, "Gemm", {"f", "fc_w", "fc_b"}, {"y"}, "fc"), "transB", 1);
  add_output(m, "y", {"N", "5"});
  return m;
}

// x [N, 4] → one node that mixes samples (made by `add`, ending in "m") → Relu → y [N, 4].
onnx::ModelProto mixing_model(const std::function<void(onnx::ModelProto&)>& add) {
  onnx::ModelProto m = make_model(13);
  add_input(m, "x", {"N", "4"});
  add(m);
  add_node(m, "Relu", {"m"}, {"y"}, "relu");
  add_output(m, "y", {"N", "4"});
  return m;
}

std::string write_model(const TempDir& dir, const std::string& name, const onnx::ModelProto& m) {
  const std::string path = dir.file(name + ".onnx");
  write_bytes(path, m.SerializeAsString());
  return path;
}

SessionOptions cpu_options(const TempDir& dir, int64_t batch, int groups, int threads = 2) {
  SessionOptions options;
  options.batch = batch;
  options.threads = threads;
  options.batch_groups = groups;
  options.benchmark_db = dir.file("db.sqlite");
  options.progress = false;
  return options;
}

std::unique_ptr<Session> load_ok(const std::string& path, const SessionOptions& options) {
  auto session = Session::load(path, options);
  EXPECT_TRUE(session.has_value()) << session.status().to_string();
  return session ? std::move(*session) : nullptr;
}

std::vector<Tensor> run_ok(Session& session, const std::vector<Tensor>& inputs) {
  auto outputs = session.run(inputs);
  EXPECT_TRUE(outputs.has_value()) << outputs.status().to_string();
  return outputs ? std::move(*outputs) : std::vector<Tensor>{};
}

Tensor random_input(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  return ucudnn_test::make_random_tensor(DType::kFloat32, shape, rng);
}

void expect_near(const Tensor& expected, const Tensor& got, int64_t first = 0) {
  ASSERT_EQ(expected.dtype(), DType::kFloat32);
  for (int64_t i = 0; i < expected.numel(); ++i) {
    const float x = expected.data<float>()[i], y = got.data<float>()[first + i];
    ASSERT_NEAR(x, y, 1e-5f * (1.0f + std::abs(x))) << "element " << first + i;
  }
}

TEST(BatchGroups, DefaultGroupsAreTheLargestDivisorWithinTheThreads) {
  EXPECT_EQ(optimizer::default_batch_groups(16, 8), 8);
  EXPECT_EQ(optimizer::default_batch_groups(16, 6), 4);
  EXPECT_EQ(optimizer::default_batch_groups(7, 8), 7);
  EXPECT_EQ(optimizer::default_batch_groups(9, 2), 1);
  EXPECT_EQ(optimizer::default_batch_groups(16, 1), 1);
  EXPECT_EQ(optimizer::default_batch_groups(1, 8), 1);
}

// Four groups of two compute what the whole batch of 8 does, and group 3's rows are what a session of
// batch 2 computes on samples 4 and 5 alone.
TEST(BatchGroups, GroupsComputeWhatTheWholeBatchComputes) {
  TempDir dir;
  const std::string path = write_model(dir, "cnn", cnn_model());
  auto whole = load_ok(path, cpu_options(dir, 8, 1, 4));
  auto grouped = load_ok(path, cpu_options(dir, 8, 4, 4));
  auto pair = load_ok(path, cpu_options(dir, 2, 1, 1));
  ASSERT_TRUE(whole && grouped && pair);
  EXPECT_EQ(whole->batch_groups().groups, 1);
  EXPECT_EQ(grouped->batch_groups().groups, 4);
  EXPECT_EQ(grouped->batch_groups().group_batch, 2);
  ASSERT_EQ(grouped->inputs()[0].shape, (Shape{8, 3, 8, 8}));
  ASSERT_EQ(grouped->outputs()[0].shape, (Shape{8, 5}));

  const Tensor x = random_input({8, 3, 8, 8}, 11);
  const std::vector<Tensor> expected = run_ok(*whole, {x});
  const std::vector<Tensor> got = run_ok(*grouped, {x});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), (Shape{8, 5}));
  expect_near(expected[0], got[0]);

  const int64_t sample = 3 * 8 * 8;
  Tensor x45 = Tensor::from_floats({2, 3, 8, 8}, {x.data<float>() + 4 * sample, static_cast<size_t>(2 * sample)});
  const std::vector<Tensor> alone = run_ok(*pair, {x45});
  expect_near(alone[0], got[0], 4 * 5);

  auto profiled = grouped->profile({x});
  ASSERT_TRUE(profiled.has_value()) << profiled.status().to_string();
  EXPECT_FALSE(profiled->empty());
  const MemoryStats memory = grouped->memory();
  EXPECT_GT(memory.arena_bytes, 0u);
  EXPECT_GT(memory.weight_bytes, 0u);
}

TEST(BatchGroups, AWrongInputNamesItsShape) {
  TempDir dir;
  const std::string path = write_model(dir, "cnn", cnn_model());
  auto grouped = load_ok(path, cpu_options(dir, 4, 2));
  ASSERT_TRUE(grouped);
  auto wrong = grouped->run({random_input({2, 3, 8, 8}, 1)});
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.status().message().find("input 'x' must be float32[4, 3, 8, 8]"), std::string::npos)
      << wrong.status().message();
}

// Under auto both ways are timed at load; the note says so whichever was kept, and the outputs agree.
TEST(BatchGroups, AutoKeepsTheFasterAndSaysWhatItMeasured) {
  TempDir dir;
  const std::string path = write_model(dir, "cnn", cnn_model());
  auto chosen = load_ok(path, cpu_options(dir, 4, 0));
  auto whole = load_ok(path, cpu_options(dir, 4, 1));
  ASSERT_TRUE(chosen && whole);
  const BatchGroups groups = chosen->batch_groups();
  EXPECT_NE(groups.note.find("measured run: whole batch"), std::string::npos) << groups.note;
  EXPECT_NE(groups.note.find("2 groups of 2"), std::string::npos) << groups.note;
  EXPECT_TRUE(whole->batch_groups().note.empty());
  const Tensor x = random_input({4, 3, 8, 8}, 5);
  expect_near(run_ok(*whole, {x})[0], run_ok(*chosen, {x})[0]);
}

struct Mixing {
  std::string label;
  std::function<void(onnx::ModelProto&)> add;
  std::string says;  // in the error
};

std::vector<Mixing> mixing_models() {
  return {
      {"softmax over the batch",
       [](onnx::ModelProto& m) { add_int_attr(add_node(m, "Softmax", {"x"}, {"m"}, "mix"), "axis", 0); },
       "node 'mix' (Softmax, opset 13) works along axis 0"},
      {"cumulative sum over the batch",
       [](onnx::ModelProto& m) {
         add_int64_initializer(m, "axis", {}, {0});
         add_node(m, "CumSum", {"x", "axis"}, {"m"}, "mix");
       },
       "node 'mix' (CumSum, opset 13) sums along axis 0"},
      {"a transpose there and back",
       [](onnx::ModelProto& m) {
         add_ints_attr(add_node(m, "Transpose", {"x"}, {"t"}, "mix"), "perm", {1, 0});
         add_ints_attr(add_node(m, "Transpose", {"t"}, {"m"}, "back"), "perm", {1, 0});
       },
       "node 'mix' (Transpose, opset 13) makes 't' [4, 4] ([4, 2] at batch 2), not the same rows per sample"},
      {"a mean over the batch",
       [](onnx::ModelProto& m) {
         add_ints_attr(add_node(m, "ReduceMean", {"x"}, {"mean"}, "mix"), "axes", {0});
         add_node(m, "Sub", {"x", "mean"}, {"m"}, "centre");
       },
       "node 'mix' (ReduceMean, opset 13) makes 'mean' [1, 4]"},
      {"a division by the batch size",
       [](onnx::ModelProto& m) {
         add_node(m, "Shape", {"x"}, {"shape"}, "shape");
         add_int64_initializer(m, "zero", {}, {0});
         add_node(m, "Gather", {"shape", "zero"}, {"n"}, "batch_size");
         add_int_attr(add_node(m, "Cast", {"n"}, {"nf"}, "to_float"), "to", onnx::TensorProto::FLOAT);
         add_node(m, "Div", {"x", "nf"}, {"m"}, "mix");
       },
       "depend on the batch"},  // the constant, or the FusedPointwise program holding it
  };
}

// Asked for, groups are refused naming the node; under auto the batch runs whole and the note says why.
TEST(BatchGroups, ModelsThatMixSamplesAreNotCut) {
  for (const Mixing& mixing : mixing_models()) {
    SCOPED_TRACE(mixing.label);
    TempDir dir;
    const std::string path = write_model(dir, "mix", mixing_model(mixing.add));
    auto refused = Session::load(path, cpu_options(dir, 4, 2));
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(refused.status().message().find(mixing.says), std::string::npos) << refused.status().message();
    auto whole = load_ok(path, cpu_options(dir, 4, 0));
    ASSERT_TRUE(whole);
    EXPECT_EQ(whole->batch_groups().groups, 1);
    EXPECT_EQ(whole->batch_groups().note.rfind("not cut: ", 0), 0u) << whole->batch_groups().note;
  }
}

// An embedding table gathered along its rows by per-sample indices: axis 0 of a constant, not of the batch.
TEST(BatchGroups, GatheringRowsOfAConstantTableIsPerSample) {
  TempDir dir;
  onnx::ModelProto m = make_model(13);
  add_input(m, "ids", {"N", "3"}, onnx::TensorProto::INT64);
  std::vector<float> table(10 * 4);
  for (size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i) * 0.25f;
  add_float_initializer(m, "table", {10, 4}, table);
  add_node(m, "Gather", {"table", "ids"}, {"y"}, "lookup");
  add_output(m, "y", {"N", "3", "4"});
  const std::string path = write_model(dir, "embedding", m);
  auto grouped = load_ok(path, cpu_options(dir, 4, 2));
  ASSERT_TRUE(grouped);
  std::vector<int64_t> ids(12);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 7) % 10);
  const std::vector<Tensor> got = run_ok(*grouped, {Tensor::from_int64s({4, 3}, ids)});
  ASSERT_EQ(got.size(), 1u);
  for (size_t i = 0; i < ids.size(); ++i)
    for (int64_t k = 0; k < 4; ++k)
      EXPECT_EQ(got[0].data<float>()[i * 4 + static_cast<size_t>(k)], table[static_cast<size_t>(ids[i] * 4 + k)]);
}

// Models whose values are not [N, ...] inside yet keep each sample's bytes together: Swin's windows (a
// Reshape to k rows per sample and back) and a Resize to sizes made from the input's shape (a constant
// holding the batch, 4 in one import and 2 in the other).
TEST(BatchGroups, RowsPerSampleAndResizeSizesAreCut) {
  onnx::ModelProto windows = make_model(13);
  add_input(windows, "x", {"N", "3", "8"});
  add_int64_initializer(windows, "rows", {2}, {-1, 4});
  add_int64_initializer(windows, "back", {3}, {-1, 3, 8});
  add_node(windows, "Reshape", {"x", "rows"}, {"w"}, "windows");
  add_int_attr(add_node(windows, "Softmax", {"w"}, {"s"}, "softmax"), "axis", -1);
  add_node(windows, "Reshape", {"s", "back"}, {"y"}, "merge");
  add_output(windows, "y", {"N", "3", "8"});

  onnx::ModelProto resize = make_model(13);
  add_input(resize, "x", {"N", "2", "3", "3"});
  add_node(resize, "Shape", {"x"}, {"shape"}, "shape");
  add_int64_initializer(resize, "starts", {1}, {0});
  add_int64_initializer(resize, "ends", {1}, {2});
  add_int64_initializer(resize, "hw", {2}, {6, 5});
  add_node(resize, "Slice", {"shape", "starts", "ends"}, {"nc"}, "n_and_c");
  add_int_attr(add_node(resize, "Concat", {"nc", "hw"}, {"sizes"}, "sizes"), "axis", 0);
  add_node(resize, "Resize", {"x", "", "", "sizes"}, {"y"}, "resize");
  add_output(resize, "y", {"N", "2", "6", "5"});

  for (const auto& [name, model] : {std::pair{"windows", windows}, std::pair{"resize", resize}}) {
    SCOPED_TRACE(name);
    TempDir dir;
    const std::string path = write_model(dir, name, model);
    auto whole = load_ok(path, cpu_options(dir, 4, 1));
    auto grouped = load_ok(path, cpu_options(dir, 4, 2));
    ASSERT_TRUE(whole && grouped);
    EXPECT_EQ(grouped->batch_groups().groups, 2);
    const Tensor x = random_input(whole->inputs()[0].shape, 9);
    const std::vector<Tensor> expected = run_ok(*whole, {x});
    const std::vector<Tensor> got = run_ok(*grouped, {x});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].shape(), expected[0].shape());
    expect_near(expected[0], got[0]);
  }
}

TEST(BatchGroups, BadGroupCountsAreRefusedNamingTheOption) {
  TempDir dir;
  const std::string path = write_model(dir, "cnn", cnn_model());
  auto uneven = Session::load(path, cpu_options(dir, 4, 3));
  ASSERT_FALSE(uneven.has_value());
  EXPECT_NE(uneven.status().message().find("batch_groups 3: the batch 4 is not a multiple of it"), std::string::npos)
      << uneven.status().message();
  auto one_each = Session::load(path, cpu_options(dir, 4, 4));
  ASSERT_FALSE(one_each.has_value());
  EXPECT_NE(one_each.status().message().find("batch_groups 4"), std::string::npos) << one_each.status().message();
  auto threads = Session::load(path, cpu_options(dir, 8, 4, 2));
  ASSERT_FALSE(threads.has_value());
  EXPECT_NE(threads.status().message().find("needs a thread per group; this session has 2"), std::string::npos)
      << threads.status().message();

  SessionOptions negative = cpu_options(dir, 4, -1);
  EXPECT_NE(check_options(negative).message().find("batch_groups must be 0 (auto), 1 (none) or more, got -1"),
            std::string::npos);
  SessionOptions gpu = cpu_options(dir, 4, 2);
  gpu.device = Device::kCuda;
  EXPECT_NE(check_options(gpu).message().find("cuts the batch over the CPU's threads"), std::string::npos);
  SessionOptions saved = cpu_options(dir, 4, 2);
  saved.plan_path = dir.file("plan.json");
  EXPECT_NE(check_options(saved).message().find("a saved plan"), std::string::npos);
}

}  // namespace
}  // namespace ucudnn
