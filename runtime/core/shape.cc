// Shape helpers.
#include "runtime/core/shape.h"

#include <algorithm>

#include "runtime/core/bytes.h"

namespace ucudnn {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool checked_numel(const Shape& shape, int64_t* numel) {
  int64_t nonzero = 1;
  bool any_zero = false;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d == 0) any_zero = true;
    else if (!checked_mul(nonzero, d, &nonzero)) return false;
  }
  *numel = any_zero ? 0 : nonzero;
  return true;
}

int64_t saturating_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n = saturating_mul(n, d);
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<int64_t> shape_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return -1;
  return axis < 0 ? axis + rank : axis;
}

AxisSplit split_at_axis(const Shape& shape, int64_t axis) {
  AxisSplit split;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis) split.outer *= shape[d];
    if (d > axis) split.inner *= shape[d];
  }
  return split;
}

bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out) {
  const size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    result[i] = da == 1 ? db : da;
  }
  *out = std::move(result);
  return true;
}

}  // namespace ucudnn
