// CUDA kernels of GatherElements, ScatterElements and ScatterND (runtime/ops/indexing.h): one launch each
// (indexing_kernels.cu), a scatter after copying data into its output. Index values computed at run time
// are read to the host and checked first (Note [values checked on the host], elementwise.cc); constant ones
// were checked by the shape rule at import.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/elementwise.h"
#include "runtime/cuda/indexing_kernels.h"
#include "runtime/ops/indexing.h"

namespace ucudnn::cuda {

namespace {

using StateOr = Expected<std::unique_ptr<KernelState>>;

// What every one of the three states keeps: the index check, if the indices come at run time.
class IndexingState : public KernelState {
 public:
  bool indices32 = false;
  bool check_indices = false;      // indices computed at run time
  std::vector<int64_t> index_dims;  // the dims they index (cycled: indexing.h's check_indices)
  std::string where;
  bool capturable() const override { return !check_indices; }  // it reads the indices to the host

 protected:
  Status check(const RunArgs& a) const {
    if (!check_indices) return Status::ok();
    UCUDNN_ASSIGN_OR_RETURN(std::vector<int64_t> values, read_ints_to_host(a.src[1], a.ctx));
    return ucudnn::check_indices(values, index_dims, where + " (indices computed at run time)");
  }
  // dst = data, unless the executor gave them one buffer.
  static Status copy_data(const RunArgs& a) {
    if (a.dst[0].data != a.src[0].data && a.src[0].nbytes() > 0)
      UCUDNN_CUDA_CHECK(cudaMemcpyAsync(a.dst[0].data, a.src[0].data, a.src[0].nbytes(), cudaMemcpyDeviceToDevice,
                                        a.ctx.stream()),
                        "");
    return Status::ok();
  }
};

// The shared part of prepare: index dtype, run-time check, rank.
Status prepare_indexing(const PrepareArgs& a, IndexingState* s) {
  const DType index_type = a.src_dtype(1);
  if (index_type != DType::kInt64 && index_type != DType::kInt32) return a.unsupported_error("indices not int32/int64");
  const size_t elem = dtype_size(a.src_dtype(0));
  if (elem != 1 && elem != 2 && elem != 4 && elem != 8) return a.unsupported_error("element size");
  if (a.src_shapes[0].size() > static_cast<size_t>(kMaxDims) || a.src_shapes[1].size() > static_cast<size_t>(kMaxDims))
    return a.unsupported_error("rank above " + std::to_string(kMaxDims));
  s->indices32 = index_type == DType::kInt32;
  s->check_indices = a.constant(1) == nullptr;
  s->where = a.describe();
  return Status::ok();
}

ElementsGeometry elements_geometry(const PrepareArgs& a) {
  const Shape& data = a.src_shapes[0];
  const Shape& indices = a.src_shapes[1];
  ElementsGeometry g;
  g.rank = static_cast<int>(indices.size());
  g.axis = static_cast<int>(normalize_axis(a.node.attrs.get_int("axis"), static_cast<int64_t>(data.size())));
  g.axis_dim = data[static_cast<size_t>(g.axis)];
  const std::vector<int64_t> strides = shape_strides(data);
  for (size_t d = 0; d < indices.size(); ++d) {
    g.dims[d] = indices[d];
    g.strides[d] = strides[d];
  }
  return g;
}

class GatherElementsState final : public IndexingState {
 public:
  ElementsGeometry g;
  Status run(const RunArgs& a) override {
    UCUDNN_RETURN_IF_ERROR(check(a));
    UCUDNN_CUDA_CHECK(launch_gather_elements(a.src[0].data, a.src[1].data, indices32, a.dst[0].data,
                                             dtype_size(a.src[0].dtype), a.dst[0].numel(), g, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

StateOr prepare_gather_elements(const PrepareArgs& a) {
  auto s = std::make_unique<GatherElementsState>();
  UCUDNN_RETURN_IF_ERROR(prepare_indexing(a, s.get()));
  s->g = elements_geometry(a);
  s->index_dims = {s->g.axis_dim};
  return std::unique_ptr<KernelState>(std::move(s));
}

class ScatterElementsState final : public IndexingState {
 public:
  ElementsGeometry g;
  ScatterReduction reduction = ScatterReduction::kNone;
  Status run(const RunArgs& a) override {
    UCUDNN_RETURN_IF_ERROR(check(a));
    UCUDNN_RETURN_IF_ERROR(copy_data(a));
    UCUDNN_CUDA_CHECK(launch_scatter_elements(static_cast<int>(reduction), static_cast<int>(a.src[0].dtype),
                                              dtype_size(a.src[0].dtype), a.src[1].data, indices32, a.src[2].data,
                                              a.dst[0].data, a.src[1].numel(), g, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

StateOr prepare_scatter_elements(const PrepareArgs& a) {
  auto s = std::make_unique<ScatterElementsState>();
  UCUDNN_RETURN_IF_ERROR(prepare_indexing(a, s.get()));
  UCUDNN_ASSIGN_OR_RETURN(s->reduction, scatter_reduction(a.node.attrs.get_string("reduction")));
  s->g = elements_geometry(a);
  s->index_dims = {s->g.axis_dim};
  return std::unique_ptr<KernelState>(std::move(s));
}

class ScatterNDState final : public IndexingState {
 public:
  TupleGeometry g;
  ScatterReduction reduction = ScatterReduction::kNone;
  Status run(const RunArgs& a) override {
    UCUDNN_RETURN_IF_ERROR(check(a));
    UCUDNN_RETURN_IF_ERROR(copy_data(a));
    UCUDNN_CUDA_CHECK(launch_scatter_nd(static_cast<int>(reduction), static_cast<int>(a.src[0].dtype),
                                        dtype_size(a.src[0].dtype), a.src[1].data, indices32, a.src[2].data,
                                        a.dst[0].data, g, a.ctx.stream()),
                      "");
    return Status::ok();
  }
};

StateOr prepare_scatter_nd(const PrepareArgs& a) {
  auto s = std::make_unique<ScatterNDState>();
  UCUDNN_RETURN_IF_ERROR(prepare_indexing(a, s.get()));
  UCUDNN_ASSIGN_OR_RETURN(s->reduction, scatter_reduction(a.node.attrs.get_string("reduction")));
  const Shape& data = a.src_shapes[0];
  const Shape& indices = a.src_shapes[1];
  const std::vector<int64_t> strides = shape_strides(data);
  s->g.k = static_cast<int>(indices.back());
  s->g.tuples = shape_numel(indices) / indices.back();
  s->g.slice = strides[static_cast<size_t>(s->g.k) - 1];
  for (int j = 0; j < s->g.k; ++j) {
    s->g.dims[j] = data[static_cast<size_t>(j)];
    s->g.strides[j] = strides[static_cast<size_t>(j)];
  }
  s->index_dims.assign(data.begin(), data.begin() + s->g.k);
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_GatherElements() {
  static const CudaKernel k{.prepare = prepare_gather_elements};
  return k;
}
const CudaKernel& cuda_kernel_ScatterElements() {
  static const CudaKernel k{.prepare = prepare_scatter_elements};
  return k;
}
const CudaKernel& cuda_kernel_ScatterND() {
  static const CudaKernel k{.prepare = prepare_scatter_nd};
  return k;
}

}  // namespace ucudnn::cuda
