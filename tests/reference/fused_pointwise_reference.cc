// Naive reference of FusedPointwise (see fused_pointwise_reference.h).
#include "tests/reference/fused_pointwise_reference.h"
#include "tests/reference/elementwise_reference.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace ucudnn::reference {

namespace {

using Index = std::vector<int64_t>;

Tensor make(const Shape& shape) { return std::move(Tensor::allocate(DType::kFloat32, shape)).value(); }

// The element of `t` at output index `index`, t broadcast along its dims of size 1.
double at(const Tensor& t, const Index& index) {
  int64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d) flat = flat * t.shape()[d] + (t.shape()[d] == 1 ? 0 : index[d]);
  return t.data<float>()[flat];
}

// The pieces joined along `axis`, element by element.
Tensor concatenate(const std::vector<const Tensor*>& pieces, int64_t axis) {
  Shape shape = pieces[0]->shape();
  shape[axis] = 0;
  for (const Tensor* p : pieces) shape[axis] += p->shape()[axis];
  Tensor out = make(shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    Index index = unravel(i, shape);
    size_t p = 0;
    while (index[axis] >= pieces[p]->shape()[axis]) index[axis] -= pieces[p++]->shape()[axis];
    out.data<float>()[i] = static_cast<float>(at(*pieces[p], index));
  }
  return out;
}

// Opcodes as numbered in runtime/ir/pointwise_program.h.
double apply(int64_t op, double a, double b, double p0, double p1) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return std::max(a, 0.0);
    case 5: return a >= 0 ? a : p0 * a;
    case 6: return a >= 0 ? a : b * a;
    case 7: return 1 / (1 + std::exp(-a));
    case 8: return std::tanh(a);
    case 9: return std::clamp(p0 * a + p1, 0.0, 1.0);
    case 10: return a * std::clamp(a / 6 + 0.5, 0.0, 1.0);
    case 11: return std::min(std::max(a, p0), p1);
    case 12: return a >= 0 ? a : p0 * (std::exp(a) - 1);
    case 13: return std::erf(a);
    case 14: return p0;
    case 15: return std::max(a, b);
    case 16: return std::min(a, b);
    case 17: return std::sqrt(a);
    case 18: return -a;
    case 19: return std::exp(a);
    case 20: return std::log(a);
    case 21: return std::abs(a);
    case 22: return 1 / a;
    case 23: return std::log(1 + std::exp(a));
    case 24: return std::pow(a, b);
    default: return NAN;
  }
}

}  // namespace

Expected<std::vector<Tensor>> fused_pointwise_reference(const ir::Node& node,
                                                        const std::vector<const Tensor*>& inputs) {
  const std::vector<int64_t>& program = node.attrs.get_ints("program");
  const std::vector<float> constants = node.attrs.has("constants") ? node.attrs.get_floats("constants")
                                                                   : std::vector<float>{};
  const int64_t count = node.attrs.get_int("concat_count");
  std::vector<Tensor> joined;
  std::vector<const Tensor*> leaves;
  if (count > 0) {
    const auto rank = static_cast<int64_t>(inputs[0]->rank());
    int64_t axis = node.attrs.get_int("concat_axis");
    if (axis < 0) axis += rank;
    joined.push_back(concatenate({inputs.begin(), inputs.begin() + count}, axis));
    leaves.push_back(&joined.back());
  }
  for (size_t i = static_cast<size_t>(count); i < inputs.size(); ++i) leaves.push_back(inputs[i]);
  Shape out = leaves[0]->shape();
  for (const Tensor* leaf : leaves)
    for (size_t d = 0; d < out.size(); ++d)
      if (leaf->shape()[d] != 1) out[d] = leaf->shape()[d];
  Tensor y = make(out);
  std::vector<double> reg;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const Index index = unravel(i, out);
    reg.clear();
    for (const Tensor* leaf : leaves) reg.push_back(at(*leaf, index));
    for (size_t w = 0; w + 4 <= program.size(); w += 4) {
      // Operands a program does not use (b of a unary op, immediates past `constants`) read as NaN.
      const auto read = [](const auto& values, int64_t j) {
        return j >= 0 && j < static_cast<int64_t>(values.size()) ? static_cast<double>(values[j]) : NAN;
      };
      const int64_t k = program[w + 3];
      reg.push_back(apply(program[w], read(reg, program[w + 1]), read(reg, program[w + 2]), read(constants, k),
                          read(constants, k + 1)));
    }
    y.data<float>()[i] = static_cast<float>(reg.back());
  }
  std::vector<Tensor> result;
  result.push_back(std::move(y));
  return result;
}

}  // namespace ucudnn::reference
