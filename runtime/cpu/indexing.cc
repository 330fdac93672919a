// CPU kernels of GatherElements, ScatterElements and ScatterND (runtime/ops/indexing.h): plain loops in
// the order of the indices; a plain write copies element bytes (any dtype), a reduction computes in the
// element's type (float32, int32, int64). Index values are checked as they are read: one out of range is
// an InvalidArgument naming the node.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ops/indexing.h"

namespace ucudnn::cpu {

namespace {

int64_t index_at(const Tensor& indices, int64_t i) {
  return indices.dtype() == DType::kInt32 ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
}

// Index i of `indices` made non-negative for a dim of `dim`; an error naming the node past its ends.
Expected<int64_t> checked_index(const KernelArgs& args, const Tensor& indices, int64_t i, int64_t dim) {
  const int64_t v = index_at(indices, i);
  if (v < -dim || v >= dim)
    return invalid_argument(args.node.describe() + ": index " + std::to_string(v) +
                            " is out of range for a dimension of " + std::to_string(dim));
  return v < 0 ? v + dim : v;
}

// Row-major coordinates of flat index i in `shape`.
void unravel(int64_t i, const Shape& shape, std::vector<int64_t>& coords) {
  coords.resize(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = i % shape[d];
    i /= shape[d];
  }
}

template <typename T>
T reduce(ScatterReduction r, T current, T update) {
  switch (r) {
    case ScatterReduction::kAdd: return static_cast<T>(current + update);
    case ScatterReduction::kMul: return static_cast<T>(current * update);
    case ScatterReduction::kMax: return std::max(current, update);
    case ScatterReduction::kMin: return std::min(current, update);
    case ScatterReduction::kNone: break;
  }
  return update;
}

// Writes updates' element u into out's element at, plainly or reduced.
class ScatterWriter {
 public:
  ScatterWriter(const Tensor& updates, Tensor& out, ScatterReduction r) : updates_(updates), out_(out), r_(r) {}
  void write(int64_t u, int64_t at) {
    switch (r_ == ScatterReduction::kNone ? DType::kUndefined : out_.dtype()) {
      case DType::kFloat32: apply<float>(u, at); break;
      case DType::kInt32: apply<int32_t>(u, at); break;
      case DType::kInt64: apply<int64_t>(u, at); break;
      default: {  // a plain write (the shape rule allows reductions on the three above only)
        const size_t bytes = dtype_size(out_.dtype());
        std::memcpy(static_cast<char*>(out_.raw()) + at * bytes, static_cast<const char*>(updates_.raw()) + u * bytes,
                    bytes);
      }
    }
  }

 private:
  template <typename T>
  void apply(int64_t u, int64_t at) {
    out_.data<T>()[at] = reduce(r_, out_.data<T>()[at], updates_.data<T>()[u]);
  }
  const Tensor& updates_;
  Tensor& out_;
  ScatterReduction r_;
};

// out = data (unless the executor gave them one buffer).
void copy_data(const KernelArgs& args) {
  if (args.dst[0]->raw() != args.src[0]->raw() && args.src[0]->nbytes() > 0)
    std::memcpy(args.dst[0]->raw(), args.src[0]->raw(), args.src[0]->nbytes());
}

Status run_gather_elements(const KernelArgs& args) {
  const Tensor& data = *args.src[0];
  const Tensor& indices = *args.src[1];
  Tensor& out = *args.dst[0];
  const auto axis = static_cast<size_t>(normalize_axis(args.node.attrs.get_int("axis"), data.rank()));
  const std::vector<int64_t> strides = shape_strides(data.shape());
  const size_t bytes = dtype_size(data.dtype());
  std::vector<int64_t> coords;
  for (int64_t i = 0; i < out.numel(); ++i) {
    unravel(i, indices.shape(), coords);
    UCUDNN_ASSIGN_OR_RETURN(coords[axis], checked_index(args, indices, i, data.shape()[axis]));
    int64_t from = 0;
    for (size_t d = 0; d < coords.size(); ++d) from += coords[d] * strides[d];
    std::memcpy(static_cast<char*>(out.raw()) + i * bytes, static_cast<const char*>(data.raw()) + from * bytes, bytes);
  }
  return Status::ok();
}

Status run_scatter_elements(const KernelArgs& args) {
  const Tensor& indices = *args.src[1];
  Tensor& out = *args.dst[0];
  UCUDNN_ASSIGN_OR_RETURN(const ScatterReduction r, scatter_reduction(args.node.attrs.get_string("reduction")));
  const auto axis = static_cast<size_t>(normalize_axis(args.node.attrs.get_int("axis"), out.rank()));
  const std::vector<int64_t> strides = shape_strides(out.shape());
  copy_data(args);
  ScatterWriter writer(*args.src[2], out, r);
  std::vector<int64_t> coords;
  for (int64_t i = 0; i < indices.numel(); ++i) {
    unravel(i, indices.shape(), coords);
    UCUDNN_ASSIGN_OR_RETURN(coords[axis], checked_index(args, indices, i, out.shape()[axis]));
    int64_t at = 0;
    for (size_t d = 0; d < coords.size(); ++d) at += coords[d] * strides[d];
    writer.write(i, at);
  }
  return Status::ok();
}

Status run_scatter_nd(const KernelArgs& args) {
  const Tensor& indices = *args.src[1];
  Tensor& out = *args.dst[0];
  UCUDNN_ASSIGN_OR_RETURN(const ScatterReduction r, scatter_reduction(args.node.attrs.get_string("reduction")));
  const int64_t k = indices.shape().back();
  const int64_t tuples = k == 0 ? 0 : indices.numel() / k;
  const std::vector<int64_t> strides = shape_strides(out.shape());
  const int64_t slice = out.rank() == 0 ? 1 : strides[static_cast<size_t>(k) - 1];  // elements below the tuple
  copy_data(args);
  ScatterWriter writer(*args.src[2], out, r);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t at = 0;
    for (int64_t j = 0; j < k; ++j) {
      UCUDNN_ASSIGN_OR_RETURN(const int64_t v, checked_index(args, indices, t * k + j, out.shape()[j]));
      at += v * strides[static_cast<size_t>(j)];
    }
    for (int64_t e = 0; e < slice; ++e) writer.write(t * slice + e, at + e);
  }
  return Status::ok();
}

}  // namespace

const CpuKernel& cpu_kernel_GatherElements() {
  static const CpuKernel k{.run = run_gather_elements};
  return k;
}
const CpuKernel& cpu_kernel_ScatterElements() {
  static const CpuKernel k{.run = run_scatter_elements};
  return k;
}
const CpuKernel& cpu_kernel_ScatterND() {
  static const CpuKernel k{.run = run_scatter_nd};
  return k;
}

}  // namespace ucudnn::cpu
