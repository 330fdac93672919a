// Shape: a tensor's dimensions (static, non-negative) and the helpers around them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ucudnn {

using Shape = std::vector<int64_t>;

// Product of dims; 1 for a scalar (empty shape). Unchecked: for shapes already known to
// fit (every ir::Value's, see check_value_sizes in runtime/ir/graph.h); else checked_numel.
int64_t shape_numel(const Shape& shape);
// The product of dims into *numel, or false when a dim is negative or the product of the
// non-zero dims overflows int64 — so that every partial product of an accepted shape
// (strides, outer/inner splits, a shape with a 0 elsewhere) fits as well.
bool checked_numel(const Shape& shape, int64_t* numel);
// The product of non-negative dims, INT64_MAX when it overflows: for estimates only (FLOPs).
int64_t saturating_numel(const Shape& shape);
// "[1, 3, 224, 224]"
std::string shape_to_string(const Shape& shape);
// Row-major strides in elements.
std::vector<int64_t> shape_strides(const Shape& shape);
// Normalizes a possibly negative axis into [0, rank); returns -1 when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank);
// Product of the dims before `axis` (outer) and after it (inner): a tensor seen
// as [outer, shape[axis], inner]. `axis` must be normalized.
struct AxisSplit {
  int64_t outer = 1, inner = 1;
};
AxisSplit split_at_axis(const Shape& shape, int64_t axis);
// Numpy-style broadcast of two shapes; false when incompatible.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out);

}  // namespace ucudnn
