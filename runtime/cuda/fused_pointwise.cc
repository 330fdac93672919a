// CUDA kernel of FusedPointwise (Note [pointwise programs], runtime/ir/pointwise_program.h):
// prepare decodes the program (runtime/ops/fused_pointwise.h) and fixes every leaf's kind and
// broadcast strides (set_broadcast_layout), the output's dims collapsed where every strided leaf
// allows (a per-channel [1, C, 1, 1] leaf indexes [N, C, H·W]); run fills in the pointers and is
// one launch (fused_pointwise_kernels.cu): float4 when every leaf is read four elements at a time
// (full, scalar, or strided and constant or contiguous over four of the innermost dim) and aligned;
// a thread a column when a concat is read with leaves that vary along its axis alone (DenseNet's
// Concat → BN → ReLU); else an element a thread. Each kernel is generated for the node's program when
// NVRTC allows (Note [generated pointwise kernels]), else interpreted.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/elementwise.h"
#include "runtime/cuda/fused_pointwise_kernels.h"
#include "runtime/cuda/pointwise_jit.h"
#include "runtime/ops/fused_pointwise.h"

namespace ucudnn::cuda {

namespace {

class FusedPointwiseState final : public KernelState {
 public:
  PointwiseParams params;  // everything but the pointers
  std::vector<size_t> leaf_input;  // the input each leaf reads (the concat leaf: none)
  bool vector = false;             // float4 when the pointers are aligned too
  GeneratedPointwiseKernels generated;  // null ones: the interpreter's (Note [generated pointwise kernels])
  Status run(const RunArgs& a) override {
    PointwiseParams p = params;
    bool aligned = reinterpret_cast<uintptr_t>(a.dst[0].data) % 16 == 0;
    for (int l = 0; l < p.leaves; ++l) {
      if (p.kind[l] == PointwiseLeafKind::kConcat) continue;
      p.data[l] = a.src[leaf_input[static_cast<size_t>(l)]].as<const float>();
      const bool read_by_four = p.kind[l] == PointwiseLeafKind::kFull ||
                                (p.kind[l] == PointwiseLeafKind::kStrided && p.strides[l][p.rank - 1] == 1);
      if (read_by_four) aligned = aligned && reinterpret_cast<uintptr_t>(p.data[l]) % 16 == 0;
    }
    for (int piece = 0; piece < p.pieces; ++piece) p.piece[piece] = a.src[static_cast<size_t>(piece)].as<const float>();
    if (p.by_axis) {
      UCUDNN_CUDA_CHECK(launch_fused_pointwise_concat(p, a.dst[0].as<float>(), generated, a.ctx.stream()), "");
    } else {
      UCUDNN_CUDA_CHECK(launch_fused_pointwise(p, a.dst[0].as<float>(), a.dst[0].numel(), vector && aligned,
                                               generated, a.ctx.stream()),
                        "");
    }
    return Status::ok();
  }
};

// Each strided leaf's strides over the output's dims, dims of 1 dropped and neighbours merged where
// the outer stride steps over the inner dim for every strided leaf.
void collapse_dims(const Shape& out, const std::vector<std::vector<int64_t>>& strides, PointwiseParams* p) {
  p->rank = 0;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = p->rank > 0;
    for (int l = 0; l < p->leaves && merge; ++l)
      if (p->kind[l] == PointwiseLeafKind::kStrided) merge = p->strides[l][p->rank - 1] == strides[l][d] * out[d];
    if (merge) {
      p->dims[p->rank - 1] *= out[d];
    } else {
      p->dims[p->rank] = out[d];
      ++p->rank;
    }
    for (int l = 0; l < p->leaves; ++l)
      if (p->kind[l] == PointwiseLeafKind::kStrided) p->strides[l][p->rank - 1] = strides[l][d];
  }
}

// Whether every strided leaf is constant (stride 0) or contiguous and 4-aligned (stride 1, the other
// strides multiples of 4) over four consecutive elements of the innermost collapsed dim.
bool reads_by_four(const PointwiseParams& p) {
  if (p.rank == 0 || p.dims[p.rank - 1] % 4 != 0) return false;
  for (int l = 0; l < p.leaves; ++l) {
    if (p.kind[l] != PointwiseLeafKind::kStrided) continue;
    const int64_t inner = p.strides[l][p.rank - 1];
    if (inner != 0 && inner != 1) return false;
    for (int d = 0; d + 1 < p.rank && inner == 1; ++d)
      if (p.strides[l][d] % 4 != 0) return false;
  }
  return true;
}

// The concat leaf's pieces and, when every other leaf varies along the concat axis alone
// (`strides`: each leaf's over the output's dims, empty for full and scalar ones), the by_axis
// kernel's tiles.
void set_concat(const PointwiseProgram& program, const std::vector<Shape>& src_shapes, const Shape& out,
                const std::vector<std::vector<int64_t>>& strides, PointwiseParams* p) {
  const auto axis = static_cast<size_t>(program.concat_axis);
  p->pieces = program.concat_count;
  p->axis = out[axis];
  for (size_t d = axis + 1; d < out.size(); ++d) p->inner *= out[d];
  for (size_t d = 0; d < axis; ++d) p->outer *= out[d];
  for (int piece = 0; piece < p->pieces; ++piece)
    p->begin[piece + 1] = p->begin[piece] + src_shapes[static_cast<size_t>(piece)][axis];
  p->by_axis = true;
  for (int l = 1; l < p->leaves && p->by_axis; ++l) {
    const std::vector<int64_t>& s = strides[static_cast<size_t>(l)];
    if (p->kind[l] == PointwiseLeafKind::kFull) p->by_axis = false;
    for (size_t d = 0; d < s.size() && p->by_axis; ++d) p->by_axis = d == axis || s[d] == 0;
    if (p->kind[l] == PointwiseLeafKind::kStrided) p->axis_stride[l] = s[axis];
  }
  int64_t tiles = 0;
  for (int piece = 0; piece < p->pieces; ++piece) {
    tiles += ((p->begin[piece + 1] - p->begin[piece]) * p->inner + kConcatTile - 1) / kConcatTile;
    if (tiles > INT32_MAX) p->by_axis = false;  // past a grid's x; the general kernel takes it
    p->tile_begin[piece + 1] = static_cast<int32_t>(std::min<int64_t>(tiles, INT32_MAX));
  }
}

Expected<std::unique_ptr<KernelState>> prepare_fused_pointwise(const PrepareArgs& a) {
  for (size_t i = 0; i < a.src_shapes.size(); ++i)
    if (a.src_dtype(i) != DType::kFloat32) return a.unsupported_error("only float32 inputs");
  const Shape& out = a.dst_shapes[0];
  Expected<PointwiseProgram> decoded =
      decode_pointwise_program(a.node, a.src_shapes.size(), static_cast<int64_t>(out.size()));
  if (!decoded) return decoded.status().with_context(a.describe());
  const PointwiseProgram& program = *decoded;
  UCUDNN_ASSIGN_OR_RETURN(std::vector<Shape> leaf_shapes, pointwise_leaf_shapes(program, a.src_shapes));
  auto s = std::make_unique<FusedPointwiseState>();
  PointwiseParams& p = s->params;
  p.leaves = program.leaves;
  p.count = static_cast<int>(program.code.size());
  for (int i = 0; i < p.count; ++i) {
    const PointwiseInstruction& ins = program.code[static_cast<size_t>(i)];
    p.op[i] = static_cast<uint8_t>(ins.op);
    p.a[i] = static_cast<uint8_t>(ins.a);
    p.b[i] = static_cast<uint8_t>(ins.b);
    p.p0[i] = ins.p0;
    p.p1[i] = ins.p1;
  }
  std::vector<std::vector<int64_t>> strides(static_cast<size_t>(p.leaves));
  bool any_strided = false;
  for (int l = 0; l < p.leaves; ++l) {
    s->leaf_input.push_back(program.input_of_leaf(l));
    const Shape& shape = leaf_shapes[static_cast<size_t>(l)];
    if (l == 0 && program.concat_count > 0) {
      p.kind[l] = PointwiseLeafKind::kConcat;
    } else if (shape == out) {
      p.kind[l] = PointwiseLeafKind::kFull;
    } else if (shape_numel(shape) == 1) {
      p.kind[l] = PointwiseLeafKind::kScalar;
    } else {
      StridedLayout layout;
      if (!set_broadcast_layout(out, shape, 0, &layout)) return a.unsupported_error("rank above the limit");
      p.kind[l] = PointwiseLeafKind::kStrided;
      strides[static_cast<size_t>(l)].assign(layout.strides[0], layout.strides[0] + out.size());
      any_strided = true;
    }
  }
  if (program.concat_count > 0) set_concat(program, a.src_shapes, out, strides, &p);
  if (any_strided) collapse_dims(out, strides, &p);
  s->vector = program.concat_count == 0 && shape_numel(out) % 4 == 0 && (!any_strided || reads_by_four(p));
  PointwiseKernelSet set;
  set.concat = p.by_axis;
  set.general = !p.by_axis;
  set.vector = s->vector;
  set.index32 = pointwise_index32(shape_numel(out));
  s->generated = generated_pointwise_kernels(p, set);
  return std::unique_ptr<KernelState>(std::move(s));
}

}  // namespace

const CudaKernel& cuda_kernel_FusedPointwise() {
  static const CudaKernel k{.prepare = prepare_fused_pointwise};
  return k;
}

}  // namespace ucudnn::cuda
