// Einsum's equation, read by its shape rule (einsum.cc) and by its lowering (onnx_import/lowering/einsum.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/core/shape.h"
#include "runtime/core/status.h"

namespace ucudnn {

// The equation with "..." replaced by one label per broadcast dim (the characters '0'.. '9', which an
// equation cannot use), every label's size, and the output's labels.
struct EinsumEquation {
  std::vector<std::string> operands;
  std::string output;
  std::map<char, int64_t> sizes;
};

// Equation `text` read against its operands' `shapes` (the implicit form without "->" gets its output
// labels); InvalidModel where they do not fit, Unsupported for three or more operands, a label repeated in
// one operand (a diagonal) or an ellipsis of more than 10 dims.
Expected<EinsumEquation> parse_einsum(const std::string& text, const std::vector<Shape>& shapes);

}  // namespace ucudnn
