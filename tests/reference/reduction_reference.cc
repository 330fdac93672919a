// Naive references of reductions, softmaxes, comparisons and Where (reduction_reference.h), from the
// spec's definitions in double, index by index.
#include "tests/reference/reduction_reference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "tests/reference/element_access.h"
#include "tests/reference/elementwise_reference.h"

namespace ucudnn::reference {

// Comparisons and logical ops (bool results, values compared as doubles: int64 operands stay below 2^53
// in the tests) and Where.
Tensor logic(OpKind op, const std::vector<const Tensor*>& in) {
  const Shape out = broadcast_shape(in);
  Tensor y = make(op == OpKind::kWhere ? in[1]->dtype() : DType::kBool, out);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const Index index = unravel(i, out);
    const double a = get(*in[0], broadcast_source(index, in[0]->shape()));
    if (op == OpKind::kNot) {
      put_int(y, i, a == 0);
      continue;
    }
    if (op == OpKind::kWhere) {
      const Tensor& from = a != 0 ? *in[1] : *in[2];
      copy_element(from, broadcast_source(index, from.shape()), y, i);
      continue;
    }
    const double b = get(*in[1], broadcast_source(index, in[1]->shape()));
    bool r = false;
    switch (op) {
      case OpKind::kEqual: r = a == b; break;
      case OpKind::kLess: r = a < b; break;
      case OpKind::kGreater: r = a > b; break;
      case OpKind::kLessOrEqual: r = a <= b; break;
      case OpKind::kGreaterOrEqual: r = a >= b; break;
      case OpKind::kAnd: r = a != 0 && b != 0; break;
      case OpKind::kOr: r = a != 0 || b != 0; break;
      default: r = (a != 0) != (b != 0); break;  // Xor
    }
    put_int(y, i, r);
  }
  return y;
}

// The Reduce* family from the definitions, in double: every output gathers the elements it reduces, then
// sum, mean, max (NaN wins), min, product, Σ|x|, √Σx², Σx², log Σx and log Σ eˣ of them.
Tensor reduce(OpKind op, const Tensor& x, const Tensor* axes_tensor, const ir::Attributes& attrs) {
  const std::vector<int64_t> axes = ints(axes_tensor);
  if (axes.empty() && attrs.get_int("noop_with_empty_axes") != 0) return copy_as(x, x.shape());
  std::vector<bool> reduced(x.shape().size(), axes.empty());
  for (int64_t a : axes) reduced[positive_axis(a, x.rank())] = true;
  Shape kept;  // keepdims form
  for (size_t d = 0; d < reduced.size(); ++d) kept.push_back(reduced[d] ? 1 : x.shape()[d]);
  std::vector<std::vector<double>> groups(static_cast<size_t>(shape_numel(kept)));
  for (int64_t i = 0; i < x.numel(); ++i) {
    Index index = unravel(i, x.shape());
    for (size_t d = 0; d < index.size(); ++d)
      if (reduced[d]) index[d] = 0;
    groups[ravel(index, kept)].push_back(get(x, i));
  }
  auto value = [op](const std::vector<double>& v) {
    double sum = 0, abs_sum = 0, squares = 0, exps = 0, product = 1;
    double max = -INFINITY, min = INFINITY;
    for (double e : v) {
      sum += e;
      abs_sum += std::fabs(e);
      squares += e * e;
      exps += std::exp(e);
      product *= e;
      max = std::isnan(e) || std::isnan(max) ? NAN : std::max(max, e);
      min = std::isnan(e) || std::isnan(min) ? NAN : std::min(min, e);
    }
    switch (op) {
      case OpKind::kReduceMean: return sum / static_cast<double>(v.size());
      case OpKind::kReduceMax: return max;
      case OpKind::kReduceMin: return min;
      case OpKind::kReduceProd: return product;
      case OpKind::kReduceL1: return abs_sum;
      case OpKind::kReduceL2: return std::sqrt(squares);
      case OpKind::kReduceSumSquare: return squares;
      case OpKind::kReduceLogSum: return std::log(sum);
      case OpKind::kReduceLogSumExp: return std::log(exps);
      default: return sum;
    }
  };
  Shape out;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (!reduced[d] || attrs.get_int("keepdims") != 0) out.push_back(kept[d]);
  Tensor y = make(DType::kFloat32, out);
  for (int64_t i = 0; i < y.numel(); ++i) put(y, i, value(groups[static_cast<size_t>(i)]));
  return y;
}

// ArgMax/ArgMin: each output index's line along the axis, scanned for the first (or last) extreme.
Tensor arg_extreme(OpKind op, const Tensor& x, const ir::Attributes& attrs) {
  const int64_t axis = positive_axis(attrs.get_int("axis"), x.rank());
  const bool last = attrs.get_int("select_last_index") != 0;
  Shape kept = x.shape();
  kept[static_cast<size_t>(axis)] = 1;
  Shape out = kept;
  if (attrs.get_int("keepdims") == 0) out.erase(out.begin() + axis);
  Tensor y = make(DType::kInt64, out);
  for (int64_t o = 0; o < y.numel(); ++o) {
    Index index = unravel(o, kept);
    int64_t best = 0;
    index[static_cast<size_t>(axis)] = 0;
    double best_value = get(x, ravel(index, x.shape()));
    for (int64_t i = 1; i < x.dim(axis) && !std::isnan(best_value); ++i) {  // the first NaN is the extreme
      index[static_cast<size_t>(axis)] = i;
      const double v = get(x, ravel(index, x.shape()));
      if (std::isnan(v) || (op == OpKind::kArgMax ? v > best_value : v < best_value) || (last && v == best_value)) {
        best = i;
        best_value = v;
      }
    }
    y.data<int64_t>()[o] = best;
  }
  return y;
}

// Softmax/LogSoftmax/Hardmax: elements i and j share a normalising group when they agree
// on every index outside the normalised dims.
std::function<bool(const Index&, const Index&)> normalising_groups(const ir::Node& node, int64_t rank) {
  const bool old = node.opset < 13;
  const int64_t axis = positive_axis(node.attrs.has("axis") ? node.attrs.get_int("axis") : (old ? 1 : -1), rank);
  return [old, axis](const Index& a, const Index& b) {
    for (size_t d = 0; d < a.size(); ++d) {
      const bool normalised = old ? static_cast<int64_t>(d) >= axis : static_cast<int64_t>(d) == axis;
      if (!normalised && a[d] != b[d]) return false;
    }
    return true;
  };
}

Tensor softmax(const ir::Node& node, const Tensor& x, bool log) {
  const auto same_group = normalising_groups(node, x.rank());
  Tensor y = make(DType::kFloat32, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const Index a = unravel(i, x.shape());
    double max = -INFINITY, sum = 0;
    for (int64_t j = 0; j < x.numel(); ++j)
      if (same_group(a, unravel(j, x.shape()))) max = std::max(max, get(x, j));
    for (int64_t j = 0; j < x.numel(); ++j)
      if (same_group(a, unravel(j, x.shape()))) sum += std::exp(get(x, j) - max);
    put(y, i, log ? get(x, i) - max - std::log(sum) : std::exp(get(x, i) - max) / sum);
  }
  return y;
}

// 1 where no element of the group is larger, nor as large at a lower flat index (a group's flat order is its
// order along the normalised dims).
Tensor hardmax(const ir::Node& node, const Tensor& x) {
  const auto same_group = normalising_groups(node, x.rank());
  Tensor y = make(DType::kFloat32, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const Index a = unravel(i, x.shape());
    bool first_max = true;
    for (int64_t j = 0; j < x.numel() && first_max; ++j)
      if (j != i && same_group(a, unravel(j, x.shape())))
        first_max = get(x, j) < get(x, i) || (get(x, j) == get(x, i) && j > i);
    put(y, i, first_max ? 1.0 : 0.0);
  }
  return y;
}

Tensor float_test(const ir::Node& node, const Tensor& x) {
  Tensor y = make(DType::kBool, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = get(x, i);
    const bool hit = node.op == OpKind::kIsNaN
                         ? std::isnan(v)
                         : std::isinf(v) && node.attrs.get_int(v > 0 ? "detect_positive" : "detect_negative") != 0;
    put_int(y, i, hit);
  }
  return y;
}

Tensor trilu(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  const int64_t k = in.size() > 1 && in[1] != nullptr ? get_int(*in[1], 0) : 0;
  const bool upper = node.attrs.get_int("upper") != 0;
  Tensor y = make(x.dtype(), x.shape());  // zeros
  for (int64_t i = 0; i < x.numel(); ++i) {
    const Index index = unravel(i, x.shape());
    const int64_t row = index[index.size() - 2], column = index.back();
    if (upper ? column - row >= k : column - row <= k) copy_element(x, i, y, i);
  }
  return y;
}

Tensor cumsum(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  const int64_t axis = positive_axis(get_int(*in[1], 0), x.rank());
  const bool exclusive = node.attrs.get_int("exclusive") != 0, reverse = node.attrs.get_int("reverse") != 0;
  Tensor y = make(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    Index index = unravel(i, x.shape());
    const int64_t at = index[static_cast<size_t>(axis)];
    double sum = 0;
    for (int64_t j = 0; j < x.shape()[static_cast<size_t>(axis)]; ++j) {
      const bool counted = reverse ? (exclusive ? j > at : j >= at) : (exclusive ? j < at : j <= at);
      if (!counted) continue;
      index[static_cast<size_t>(axis)] = j;
      sum += get(x, ravel(index, x.shape()));
    }
    if (is_integer(y.dtype())) put_int(y, i, static_cast<int64_t>(sum));
    else put(y, i, sum);
  }
  return y;
}

std::vector<Tensor> top_k(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Tensor& x = *in[0];
  const int64_t axis = positive_axis(node.attrs.get_int("axis"), x.rank());
  const int64_t k = get_int(*in[1], 0);
  const bool largest = node.attrs.get_int("largest") != 0;
  Shape shape = x.shape();
  shape[static_cast<size_t>(axis)] = k;
  Tensor values = make(x.dtype(), shape), indices = make(DType::kInt64, shape);
  for (int64_t i = 0; i < values.numel(); ++i) {
    Index index = unravel(i, shape);
    const int64_t rank_wanted = index[static_cast<size_t>(axis)];
    // The element whose count of better elements (value, then index) is rank_wanted.
    for (int64_t j = 0; j < x.shape()[static_cast<size_t>(axis)]; ++j) {
      index[static_cast<size_t>(axis)] = j;
      const double v = get(x, ravel(index, x.shape()));
      int64_t better = 0;
      for (int64_t m = 0; m < x.shape()[static_cast<size_t>(axis)]; ++m) {
        index[static_cast<size_t>(axis)] = m;
        const double w = get(x, ravel(index, x.shape()));
        if ((largest ? w > v : w < v) || (w == v && m < j)) ++better;
      }
      if (better == rank_wanted) {
        index[static_cast<size_t>(axis)] = j;
        copy_element(x, ravel(index, x.shape()), values, i);
        put_int(indices, i, j);
        break;
      }
    }
  }
  std::vector<Tensor> out;
  out.push_back(std::move(values));
  out.push_back(std::move(indices));
  return out;
}

}  // namespace ucudnn::reference
