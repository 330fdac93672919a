// Naive references of the indexing ops (indexing_reference.h).
#include "tests/reference/indexing_reference.h"

#include <algorithm>
#include <string>

#include "tests/reference/element_access.h"
#include "tests/reference/elementwise_reference.h"

namespace ucudnn::reference {

namespace {

int64_t wrapped(int64_t index, int64_t dim) { return index < 0 ? index + dim : index; }

// y[at] combined with update by the reduction named `how` (in double: the tests' values are exact there).
void combine(Tensor& y, int64_t at, const Tensor& updates, int64_t u, const std::string& how) {
  if (how == "none") {
    copy_element(updates, u, y, at);
    return;
  }
  const double a = get(y, at), b = get(updates, u);
  const double r = how == "add" ? a + b : how == "mul" ? a * b : how == "max" ? std::max(a, b) : std::min(a, b);
  if (is_integer(y.dtype())) put_int(y, at, static_cast<int64_t>(r));
  else put(y, at, r);
}

Tensor gather_elements(const Tensor& data, const Tensor& indices, int64_t axis) {
  Tensor y = make(data.dtype(), indices.shape());
  for (int64_t i = 0; i < y.numel(); ++i) {
    Index index = unravel(i, indices.shape());
    index[axis] = wrapped(get_int(indices, i), data.shape()[axis]);
    copy_element(data, ravel(index, data.shape()), y, i);
  }
  return y;
}

Tensor scatter_elements(const std::vector<const Tensor*>& in, int64_t axis, const std::string& how) {
  Tensor y = copy_as(*in[0], in[0]->shape());
  for (int64_t i = 0; i < in[1]->numel(); ++i) {
    Index index = unravel(i, in[1]->shape());
    index[axis] = wrapped(get_int(*in[1], i), in[0]->shape()[axis]);
    combine(y, ravel(index, y.shape()), *in[2], i, how);
  }
  return y;
}

Tensor scatter_nd(const std::vector<const Tensor*>& in, const std::string& how) {
  Tensor y = copy_as(*in[0], in[0]->shape());
  const Shape& data = in[0]->shape();
  const int64_t k = in[1]->shape().back();
  const Shape slice_shape(data.begin() + k, data.end());
  const int64_t slice = shape_numel(slice_shape);
  for (int64_t t = 0; t < in[1]->numel() / k; ++t)
    for (int64_t e = 0; e < slice; ++e) {
      Index index;
      for (int64_t j = 0; j < k; ++j) index.push_back(wrapped(get_int(*in[1], t * k + j), data[j]));
      const Index rest = unravel(e, slice_shape);
      index.insert(index.end(), rest.begin(), rest.end());
      combine(y, ravel(index, data), *in[2], t * slice + e, how);
    }
  return y;
}

// GatherND: output element (t, e) is data[batch(t), indices[t, 0..k), e], t over the index tuples.
Tensor gather_nd(const Tensor& data, const Tensor& indices, int64_t batch_dims) {
  const int64_t k = indices.shape().back(), tuples = indices.numel() / k;
  const Shape& d = data.shape();
  Shape out_shape(indices.shape().begin(), indices.shape().end() - 1);
  const Shape slice_shape(d.begin() + batch_dims + k, d.end());
  out_shape.insert(out_shape.end(), slice_shape.begin(), slice_shape.end());
  Tensor y = make(data.dtype(), out_shape);
  const int64_t slice = shape_numel(slice_shape);
  const int64_t tuples_per_batch = tuples / std::max<int64_t>(1, shape_numel(Shape(d.begin(), d.begin() + batch_dims)));
  for (int64_t t = 0; t < tuples; ++t) {
    Index index = unravel(t / std::max<int64_t>(1, tuples_per_batch), Shape(d.begin(), d.begin() + batch_dims));
    for (int64_t j = 0; j < k; ++j) index.push_back(wrapped(get_int(indices, t * k + j), d[batch_dims + j]));
    for (int64_t e = 0; e < slice; ++e) {
      Index at = index;
      const Index rest = unravel(e, slice_shape);
      at.insert(at.end(), rest.begin(), rest.end());
      copy_element(data, ravel(at, d), y, t * slice + e);
    }
  }
  return y;
}

// OneHot: values[1] where the (truncated) index, wrapped once if negative, equals the position along `axis`.
Tensor one_hot(const Tensor& indices, int64_t depth, const Tensor& values, int64_t axis) {
  Shape out_shape = indices.shape();
  axis = positive_axis(axis, indices.rank() + 1);
  out_shape.insert(out_shape.begin() + axis, depth);
  Tensor y = make(values.dtype(), out_shape);
  for (int64_t i = 0; i < y.numel(); ++i) {
    Index index = unravel(i, out_shape);
    const int64_t position = index[static_cast<size_t>(axis)];
    index.erase(index.begin() + axis);
    const int64_t at = ravel(index, indices.shape());
    const int64_t hot =
        indices.dtype() == DType::kFloat32 ? static_cast<int64_t>(get(indices, at)) : get_int(indices, at);
    copy_element(values, hot == position || hot + depth == position ? 1 : 0, y, i);
  }
  return y;
}

// MaxUnpool: x[i] goes to flat index I[i] of the unpooled shape ((in - 1)·stride + kernel - pads per spatial
// axis), which then sits at the start of each axis of output_shape when one is given.
Tensor max_unpool(const ir::Node& node, const std::vector<const Tensor*>& in) {
  const Shape& x = in[0]->shape();
  const size_t axes = x.size() - 2;
  Shape unpooled = {x[0], x[1]};
  for (size_t d = 0; d < axes; ++d) {
    const int64_t stride = node.attrs.has("strides") ? node.attrs.get_ints("strides")[d] : 1;
    const std::vector<int64_t> pads =
        node.attrs.has("pads") ? node.attrs.get_ints("pads") : std::vector<int64_t>(2 * axes);
    unpooled.push_back((x[d + 2] - 1) * stride + node.attrs.get_ints("kernel_shape")[d] - pads[d] - pads[d + axes]);
  }
  const Tensor* given = input(in, 2);
  const std::vector<int64_t> output = given != nullptr ? ints(given) : unpooled;
  Tensor y = make(DType::kFloat32, Shape(output.begin(), output.end()));
  for (int64_t i = 0; i < in[0]->numel(); ++i)
    copy_element(*in[0], i, y, ravel(unravel(get_int(*in[1], i), unpooled), y.shape()));
  return y;
}

}  // namespace

Expected<std::vector<Tensor>> indexing_reference(const ir::Node& node, const std::vector<const Tensor*>& in) {
  std::vector<Tensor> out;
  const int64_t rank = in[0]->rank();
  switch (node.op) {
    case OpKind::kGatherElements:
      out.push_back(gather_elements(*in[0], *in[1], positive_axis(node.attrs.get_int("axis"), rank)));
      break;
    case OpKind::kScatterElements:
      out.push_back(scatter_elements(in, positive_axis(node.attrs.get_int("axis"), rank),
                                     node.attrs.get_string("reduction")));
      break;
    case OpKind::kScatterND: out.push_back(scatter_nd(in, node.attrs.get_string("reduction"))); break;
    case OpKind::kMaxUnpool: out.push_back(max_unpool(node, in)); break;
    case OpKind::kGatherND: out.push_back(gather_nd(*in[0], *in[1], node.attrs.get_int("batch_dims"))); break;
    case OpKind::kOneHot: {
      const int64_t depth =
          in[1]->dtype() == DType::kFloat32 ? static_cast<int64_t>(get(*in[1], 0)) : get_int(*in[1], 0);
      out.push_back(one_hot(*in[0], depth, *in[2], node.attrs.get_int("axis")));
      break;
    }
    default: return unsupported(std::string("no indexing reference for ") + op_name(node.op));
  }
  return out;
}

}  // namespace ucudnn::reference
