// One ONNX backend test case: read the model's I/O names, load through
// Session::load with the data set's input shapes (int64 inputs as constants when
// needed), run, compare (see the header).
//
// The model's graph inputs (minus initializers, for old IR versions that list
// them) are read straight from the ModelProto: input_N.pb belongs to the N-th of
// them and output_N.pb to the N-th graph output, which is how ONNX's test data is
// laid out. A session is reused across data sets while the input shapes agree.
#include "tests/conformance/conformance_case.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <vector>

#include <onnx/onnx_pb.h>

#include "onnx_import/onnx_import.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::conformance {
namespace fs = std::filesystem;
namespace {

// Note [GCC 12 -Wrestrict]: `"literal" + f()` where f() returns a std::string by value
// trips a false -Wrestrict in GCC 12 at -O2; concatenations here start from an lvalue.

struct ModelIo {
  std::vector<std::string> inputs;   // graph inputs that are not initializers, in order
  std::vector<std::string> outputs;  // graph outputs, in order
};

Expected<ModelIo> read_model_io(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  const std::string where = "'" + path.native() + "'";  // native(): a reference; see Note [GCC 12 -Wrestrict]
  if (!file) return io_error("cannot open " + where);
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&file)) return invalid_model(where + " is not a ModelProto");
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  ModelIo io;
  for (const auto& input : model.graph().input())
    if (!initializers.count(input.name())) io.inputs.push_back(input.name());
  for (const auto& output : model.graph().output()) io.outputs.push_back(output.name());
  return io;
}

// Reads `prefix_0.pb`, `prefix_1.pb`, ... until the next one is missing.
Expected<std::vector<Tensor>> read_numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<Tensor> tensors;
  for (int i = 0;; ++i) {
    fs::path path = dir / (prefix + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(path)) break;
    auto tensor = onnx_import::read_tensor_file(path.string());
    if (!tensor) return tensor.status().with_context(path.filename().string());
    tensors.push_back(std::move(*tensor));
  }
  return tensors;
}

std::vector<fs::path> data_sets(const fs::path& dir) {
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(entry.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

CaseResult result_from(const Status& status, const std::string& context) {
  CaseResult result;
  result.kind = status.code() == StatusCode::kUnsupported ? CaseResult::Kind::kUnsupported : CaseResult::Kind::kFailed;
  result.message = context + ": " + status.to_string();
  return result;
}

CaseResult failed(std::string message) { return {CaseResult::Kind::kFailed, std::move(message)}; }

bool is_floating(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

double float_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat16: return static_cast<float>(t.data<Float16>()[i]);
    case DType::kBFloat16: return static_cast<float>(t.data<BFloat16>()[i]);
    default: return t.data<double>()[i];
  }
}

std::string format_double(double v) {
  std::ostringstream out;
  out.precision(9);
  out << v;
  return out.str();
}

// Runs one data set on `session`; "" on success.
std::string check_data_set(Session& session, const ModelIo& io, const std::vector<Tensor>& inputs,
                           const std::vector<Tensor>& expected, const Tolerance& tolerance, Status* run_status) {
  std::map<std::string, const Tensor*> by_name;
  for (size_t i = 0; i < inputs.size() && i < io.inputs.size(); ++i) by_name[io.inputs[i]] = &inputs[i];
  std::vector<Tensor> ordered;
  for (const TensorInfo& info : session.inputs()) {
    auto it = by_name.find(info.name);
    if (it == by_name.end()) return "session input '" + info.name + "' has no input_N.pb in the test";
    ordered.push_back(*it->second);
  }
  auto outputs = session.run(ordered);
  if (!outputs) {
    *run_status = outputs.status();
    return "run: " + outputs.status().to_string();
  }
  if (outputs->size() != session.outputs().size())
    return "run returned " + std::to_string(outputs->size()) + " outputs, session declares " +
           std::to_string(session.outputs().size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (i >= io.outputs.size()) return "output_" + std::to_string(i) + ".pb has no graph output";
    const std::string& name = io.outputs[i];
    const auto& infos = session.outputs();
    auto it = std::find_if(infos.begin(), infos.end(), [&](const TensorInfo& t) { return t.name == name; });
    if (it == infos.end()) return "graph output '" + name + "' is not among the session's outputs";
    std::string diff = compare_tensors((*outputs)[it - infos.begin()], expected[i], tolerance);
    if (!diff.empty()) return "output '" + name + "': " + diff;
  }
  return "";
}

// Note [shape inputs at load]: ONNX's node tests feed a Reshape's shape, a Slice's
// starts/ends/axes/steps, Squeeze/Unsqueeze axes, Pad's pads, Split's split or Resize's
// sizes, scales and roi as graph inputs, which ucudnn needs at load. When a load fails as
// unsupported and the data set has int64 inputs, or float inputs of at most
// kParameterElements elements after the first input (Resize's scales, roi), they are given
// at load (SessionOptions::constant_inputs) and the load is tried once more; the first
// error stands when that fails too. Cases that load as they are keep these inputs at run
// time, so their kernels are what the case tests.
Expected<std::unique_ptr<Session>> load_session(const std::string& model_path, const SessionOptions& options,
                                                const ModelIo& io, const std::vector<Tensor>& inputs,
                                                bool* with_constants) {
  *with_constants = false;
  auto loaded = Session::load(model_path, options);
  if (loaded || loaded.status().code() != StatusCode::kUnsupported) return loaded;
  SessionOptions constants = options;
  constexpr int64_t kParameterElements = 8;
  for (size_t i = 0; i < inputs.size() && i < io.inputs.size(); ++i) {
    const bool float_parameter = i > 0 && inputs[i].dtype() == DType::kFloat32 && inputs[i].numel() <= kParameterElements;
    if (inputs[i].dtype() != DType::kInt64 && !float_parameter) continue;
    constants.input_shapes.erase(io.inputs[i]);
    constants.constant_inputs[io.inputs[i]] = inputs[i];
  }
  if (constants.constant_inputs.empty()) return loaded;
  auto retried = Session::load(model_path, constants);
  if (!retried) return loaded;
  *with_constants = true;
  return retried;
}

CaseResult run_case_unguarded(const fs::path& dir, const SessionOptions& base, const Tolerance& tolerance) {
  const fs::path model_path = dir / "model.onnx";
  auto io = read_model_io(model_path);
  if (!io) return result_from(io.status(), "reading model I/O names");
  auto sets = data_sets(dir);
  if (sets.empty()) return failed("no test_data_set_* folder in " + dir.string());

  std::unique_ptr<Session> session;
  std::map<std::string, Shape> session_shapes;
  bool session_has_constants = false;
  for (const fs::path& set : sets) {
    const std::string set_name = set.filename().string();
    auto inputs = read_numbered(set, "input");
    auto expected = read_numbered(set, "output");
    if (!inputs || !expected) {
      Status status = !inputs ? inputs.status() : expected.status();
      // A .pb we cannot read (float16, strings, sequences) usually means an op we do not
      // support either; let the load say so when it can.
      SessionOptions plain = base;
      plain.input_shapes.clear();
      auto probe = Session::load(model_path.string(), plain);
      if (!probe && probe.status().code() == StatusCode::kUnsupported) return result_from(probe.status(), "load");
      return result_from(status, set_name);
    }
    if (inputs->size() != io->inputs.size())
      return failed(set_name + ": " + std::to_string(inputs->size()) + " input_N.pb files for " +
                    std::to_string(io->inputs.size()) + " graph inputs");
    if (expected->empty()) return failed(set_name + ": no output_N.pb files");

    std::map<std::string, Shape> shapes;
    for (size_t i = 0; i < inputs->size(); ++i) shapes[io->inputs[i]] = (*inputs)[i].shape();
    // A session with constant inputs holds this data set's values: never reused.
    if (!session || shapes != session_shapes || session_has_constants) {
      SessionOptions options = base;
      options.input_shapes = shapes;
      auto loaded = load_session(model_path.string(), options, *io, *inputs, &session_has_constants);
      if (!loaded) return result_from(loaded.status(), "load");
      session = std::move(*loaded);
      session_shapes = shapes;
    }
    Status run_status;
    std::string problem = check_data_set(*session, *io, *inputs, *expected, tolerance, &run_status);
    if (!run_status.is_ok()) return result_from(run_status, set_name + ": run");
    if (!problem.empty()) return failed(set_name + ": " + problem);
  }
  return {CaseResult::Kind::kPassed, ""};
}

}  // namespace

std::string compare_tensors(const Tensor& got, const Tensor& want, const Tolerance& tolerance) {
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + dtype_name(got.dtype()) + ", expected " + dtype_name(want.dtype());
  if (got.shape() != want.shape())
    return "shape " + shape_to_string(got.shape()) + ", expected " + shape_to_string(want.shape());
  const int64_t n = want.numel();
  if (n == 0) return "";
  if (got.raw() == nullptr || want.raw() == nullptr) return "tensor without data";
  int64_t mismatches = 0, first = -1;
  double max_abs_error = 0;
  if (is_floating(want.dtype())) {
    for (int64_t i = 0; i < n; ++i) {
      const double a = float_at(got, i), b = float_at(want, i);
      bool ok;
      if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
      else if (std::isinf(a) || std::isinf(b)) ok = a == b;
      else {
        const double error = std::fabs(a - b);
        max_abs_error = std::max(max_abs_error, error);
        ok = error <= tolerance.atol + tolerance.rtol * std::fabs(b);
      }
      if (!ok && mismatches++ == 0) first = i;
    }
  } else {
    const size_t size = dtype_size(want.dtype());
    const auto* a = static_cast<const unsigned char*>(got.raw());
    const auto* b = static_cast<const unsigned char*>(want.raw());
    for (int64_t i = 0; i < n; ++i)
      if (std::memcmp(a + i * size, b + i * size, size) != 0 && mismatches++ == 0) first = i;
  }
  if (mismatches == 0) return "";
  std::string message = std::to_string(mismatches) + " of " + std::to_string(n) + " values differ (" +
                        want.describe() + "); first at flat index " + std::to_string(first);
  if (is_floating(want.dtype()))
    message += ": got " + format_double(float_at(got, first)) + ", expected " + format_double(float_at(want, first)) +
               "; max abs error " + format_double(max_abs_error);
  return message;
}

CaseResult run_case(const fs::path& dir, const SessionOptions& base, const Tolerance& tolerance) {
  try {
    return run_case_unguarded(dir, base, tolerance);
  } catch (const std::exception& e) {
    return failed(std::string("exception: ") + e.what());
  } catch (...) {
    return failed("unknown exception");
  }
}

}  // namespace ucudnn::conformance
