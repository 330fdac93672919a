// One ONNX backend test case run through the public Session API.
//
// A case is a folder holding `model.onnx` and `test_data_set_*/input_N.pb`,
// `output_N.pb` (the layout of ONNX's own test data and of models/tiny). For
// each data set the model is loaded with the inputs' shapes (by the model's
// input names, in order) — and, when it is unsupported so, once more with its
// int64 inputs given at load as constants (Note [shape inputs at load]) — run, and
// every output compared with the expected one:
// dtype and shape must match; floats within |got − want| ≤ atol + rtol·|want|
// (NaN equals NaN), integers and bools exactly. Sessions are made from the
// caller's SessionOptions (device, math, threads) plus the data set's shapes.
#pragma once

#include <filesystem>
#include <string>

#include "runtime/core/tensor.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::conformance {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

struct CaseResult {
  enum class Kind { kPassed, kFailed, kUnsupported };
  Kind kind = Kind::kFailed;
  // Why it failed or is unsupported (may span lines; the first line is the summary).
  std::string message;
};

// Runs the case in `dir` with sessions made from `base` (its input_shapes are
// replaced by the data set's). Never throws; every problem becomes a kFailed
// result, and a kUnsupported Status from reading, loading or running becomes
// kUnsupported.
CaseResult run_case(const std::filesystem::path& dir, const SessionOptions& base, const Tolerance& tolerance);

// Compares `got` with `want`; returns "" when they match, else a one-line reason.
std::string compare_tensors(const Tensor& got, const Tensor& want, const Tolerance& tolerance);

}  // namespace ucudnn::conformance
