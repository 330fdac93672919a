// CPU kernel of FusedConvDepthwise (Note [pointwise-depthwise fusion], runtime/ir/fusion.h): one oneDNN
// convolution primitive, the 1×1 with its bias and activation, then the depthwise as a post-op
// (post_ops::append_dw) with its bias and activation. oneDNN computes the 1×1's output a few rows at a time
// into per-thread buffers and runs the depthwise over them, so that output is never written whole. Prepared
// once: the weights, constants of the graph, are reordered into the primitive's layouts then (the kernel
// keeps them). A build without oneDNN has no kernel (the planner never fuses there).
//
// Note [fused depthwise in blocked layouts]: the primitive takes X and writes Y in oneDNN's preferred
// (blocked, nChw16c) layouts, reordered from and to NHWC in the workspace where they differ. Given NHWC
// itself, oneDNN 2.6.3's JIT kernel for the pair (jit_1x1) computes wrong values once a row is wider than
// 64 (most of MobileNetV3-L's 16 → 64 channels at 112×112 came out wrong, at 2 threads and at 8, while
// the unit tests' small images passed); in blocked layouts it matches the two convolutions. The planner
// also checks every fused pair's output against the two Convs before it fuses (Note [timed depthwise
// fusion]). Workspace: [scratchpad | X blocked | Y blocked], each copy only where the layouts put the bytes
// elsewhere (16 channels in nChw16c lie as in NHWC: MobileNetV3's X binds as it lies).
#include <limits>
#include <string>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ir/fusion.h"

#ifdef UCUDNN_HAVE_ONEDNN
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "runtime/cpu/onednn_common.h"
#endif

namespace ucudnn::cpu {

#ifndef UCUDNN_HAVE_ONEDNN

const CpuKernel& cpu_kernel_FusedConvDepthwise() {
  static const CpuKernel k{};  // no kernel: the CPU backend names the op when a graph has it
  return k;
}

#else

namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// The primitive for `node` with these input shapes (X, W, B, W_dw, B_dw; {} where absent) and Y's.
struct FusedPrimitive {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::memory::desc user_src, user_dst, user_wei, user_dw_wei, bias, dw_bias;
  size_t src_offset = 0, dst_offset = 0, workspace = 0;  // Note [fused depthwise in blocked layouts]
  bool src_as_is = false, dst_as_is = false;             // X, Y bound as they lie (same_bytes_as_nhwc)
};

constexpr size_t kAlign = 64;  // oneDNN's own alignment for its buffers
size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Whether the primitive's layout `blocked` of a 4-D tensor puts its bytes where NHWC (`nhwc`) does: the same
// desc, or one channel block holding every channel (nChw16c of 16 channels is NHWC), so X or Y binds as it lies.
bool same_bytes_as_nhwc(const dnnl::memory::desc& blocked, const dnnl::memory::desc& nhwc) {
  if (blocked == nhwc) return true;
  const dnnl_memory_desc_t& d = blocked.data;
  if (d.format_kind != dnnl_blocked || d.ndims != 4) return false;
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  return b.inner_nblks == 1 && b.inner_idxs[0] == 1 && b.inner_blks[0] == d.dims[1] && d.padded_dims[1] == d.dims[1] &&
         b.strides[3] == b.inner_blks[0] && b.strides[2] == d.dims[3] * b.strides[3] &&
         b.strides[0] == d.dims[2] * b.strides[2] && blocked.get_size() == nhwc.get_size();
}

Expected<FusedPrimitive> make_primitive(const ir::Node& node, const std::vector<Shape>& src, const Shape& y) {
  if (src.size() <= ir::kDepthwiseWeightInput || src[0].size() != 4 || src[1].size() != 4 ||
      src[ir::kDepthwiseWeightInput].size() != 4 || y.size() != 4)
    return internal_error(node.describe() + ": FusedConvDepthwise called without 4-D X, W, W_dw and Y");
  const Shape& x = src[0];
  const Shape& w_dw = src[ir::kDepthwiseWeightInput];
  const int64_t n = x[0], h = x[1], w = x[2], c = x[3], m = src[1][0];
  const std::vector<int64_t> strides = node.attrs.get_ints(ir::kDepthwiseStridesAttr);
  const std::vector<int64_t> pads = node.attrs.get_ints(ir::kDepthwisePadsAttr);
  // oneDNN's depthwise post-op has one kernel size, stride and leading pad for both axes.
  if (w_dw[1] != w_dw[2] || strides.size() != 2 || strides[0] != strides[1] || pads.size() != 4 ||
      pads[0] != pads[1])
    return unsupported(node.describe() + ": oneDNN fuses a square depthwise window only (kernel " +
                       shape_to_string(w_dw) + ", strides " + shape_to_string(strides) + ", pads " +
                       shape_to_string(pads) + ")");
  auto act = [&](const char* a, const char* lo, const char* hi) { return ir::conv_activation(node, a, lo, hi); };
  UCUDNN_ASSIGN_OR_RETURN(const ir::ConvActivation first,
                          act(ir::kFusedActivationAttr, ir::kFusedActivationMinAttr, ir::kFusedActivationMaxAttr));
  UCUDNN_ASSIGN_OR_RETURN(
      const ir::ConvActivation second,
      act(ir::kDepthwiseActivationAttr, ir::kDepthwiseActivationMinAttr, ir::kDepthwiseActivationMaxAttr));
  const bool has_bias = src.size() > 2 && !src[2].empty();
  FusedPrimitive f;
  f.user_wei = dnnl::memory::desc({m, c, 1, 1}, dt::f32, tag::ohwi);
  f.user_dw_wei = dnnl::memory::desc({m, 1, 1, w_dw[1], w_dw[2]}, dt::f32, tag::goihw);  // = [M, R, S, 1]
  f.bias = has_bias ? dnnl::memory::desc({m}, dt::f32, tag::x) : dnnl::memory::desc();
  f.dw_bias = dnnl::memory::desc({m}, dt::f32, tag::x);
  f.user_src = dnnl::memory::desc({n, c, h, w}, dt::f32, tag::nhwc);
  f.user_dst = dnnl::memory::desc({n, m, y[1], y[2]}, dt::f32, tag::nhwc);
  try {
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        dnnl::memory::desc({n, c, h, w}, dt::f32, tag::any), dnnl::memory::desc({m, c, 1, 1}, dt::f32, tag::any),
        f.bias, dnnl::memory::desc({n, m, h, w}, dt::f32, tag::any), {1, 1}, {0, 0}, {0, 0});
    dnnl::post_ops ops;
    onednn::append_activation(first, ops);
    ops.append_dw(dt::f32, dt::f32, dt::f32, w_dw[1], strides[0], pads[0], 0, {});
    onednn::append_activation(second, ops);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    attr.set_post_ops(ops);
    f.pd = dnnl::convolution_forward::primitive_desc(desc, attr, onednn::engine());
  } catch (const dnnl::error& e) {
    return unsupported(node.describe() + ": oneDNN has no fused 1x1 + depthwise convolution for X " +
                       shape_to_string(x) + ", W_dw " + shape_to_string(w_dw) + " (" + e.what() + ")");
  }
  // The depthwise's output as oneDNN computes it (its trailing pad its own) must be Y as the graph has it.
  if (y != Shape{n, y[1], y[2], m} || f.pd.dst_desc().dims() != f.user_dst.dims())
    return unsupported(node.describe() + ": oneDNN's fused depthwise output is not Y " + shape_to_string(y) +
                       " (its window differs from the graph's)");
  f.src_offset = aligned(f.pd.scratchpad_desc().get_size());
  f.src_as_is = same_bytes_as_nhwc(f.pd.src_desc(), f.user_src);
  f.dst_as_is = same_bytes_as_nhwc(f.pd.dst_desc(), f.user_dst);
  f.dst_offset = f.src_offset + (f.src_as_is ? 0 : aligned(f.pd.src_desc().get_size()));
  f.workspace = f.dst_offset + (f.dst_as_is ? 0 : aligned(f.pd.dst_desc().get_size()));
  return f;
}

// A memory of `desc` holding `user`'s contents (at `data`, of layout `user`) in desc's layout.
dnnl::memory reordered(const dnnl::memory::desc& user, const float* data, const dnnl::memory::desc& desc) {
  dnnl::memory from(user, onednn::engine(), const_cast<float*>(data));
  dnnl::memory to(desc, onednn::engine());
  dnnl::stream stream(onednn::engine());
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
  return to;
}

class FusedConvDepthwiseCall final : public runtime::Kernel {
 public:
  // w, w_dw, b_dw (nullptr: zeros) are read now; b (the 1×1's bias) at every run.
  FusedConvDepthwiseCall(const ir::Node& node, FusedPrimitive f, const float* w, const float* w_dw,
                         const float* b_dw)
      : node_(node), f_(std::move(f)), conv_(f_.pd), stream_(onednn::engine()) {
    if (!f_.src_as_is) src_in_ = dnnl::reorder(dnnl::reorder::primitive_desc(
                           onednn::engine(), f_.user_src, onednn::engine(), f_.pd.src_desc()));
    if (!f_.dst_as_is) dst_out_ = dnnl::reorder(dnnl::reorder::primitive_desc(
                           onednn::engine(), f_.pd.dst_desc(), onednn::engine(), f_.user_dst));
    const auto dw_wei_desc = f_.pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS);
    wei_ = reordered(f_.user_wei, w, f_.pd.weights_desc());
    dw_wei_ = reordered(f_.user_dw_wei, w_dw, dw_wei_desc);
    dw_bias_ = dnnl::memory(f_.dw_bias, onednn::engine());
    const size_t m = f_.dw_bias.get_size();
    if (b_dw != nullptr)
      std::memcpy(dw_bias_.get_data_handle(), b_dw, m);
    else
      std::memset(dw_bias_.get_data_handle(), 0, m);
    kept_bytes_ = wei_.get_desc().get_size() + dw_wei_desc.get_size() + m;
  }

  size_t workspace_bytes() const override { return f_.workspace; }
  runtime::KeptBuffer kept() const override { return {wei_.get_data_handle(), kept_bytes_}; }

  Status run(const runtime::KernelIo& io) override {
    if (io.src.size() <= ir::kDepthwiseWeightInput || io.dst.empty())
      return internal_error(node_.describe() + ": run without its tensors");
    if (io.workspace_bytes < workspace_bytes() || (workspace_bytes() > 0 && io.workspace == nullptr))
      return invalid_argument(node_.describe() + ": needs " + std::to_string(workspace_bytes()) +
                              " workspace bytes, got " + std::to_string(io.workspace_bytes));
    use_session_threads();
    char* ws = static_cast<char*>(io.workspace);
    void* x = const_cast<void*>(io.src[0].data);
    void* y = io.dst[0].data;
    dnnl::memory user_src(f_.user_src, onednn::engine(), x), user_dst(f_.user_dst, onednn::engine(), y);
    dnnl::memory src(f_.pd.src_desc(), onednn::engine(), src_in_ ? ws + f_.src_offset : x);
    dnnl::memory dst(f_.pd.dst_desc(), onednn::engine(), dst_out_ ? ws + f_.dst_offset : y);
    if (src_in_) src_in_->execute(stream_, user_src, src);
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, src},
        {DNNL_ARG_WEIGHTS, wei_},
        {DNNL_ARG_DST, dst},
        {DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS, dw_wei_},
        {DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS, dw_bias_},
        {DNNL_ARG_SCRATCHPAD, dnnl::memory(f_.pd.scratchpad_desc(), onednn::engine(), io.workspace)}};
    if (!f_.bias.is_zero()) {
      if (io.src.size() < 3 || io.src[2].dtype == DType::kUndefined)
        return internal_error(node_.describe() + ": prepared with a bias, run without one");
      args.emplace(DNNL_ARG_BIAS, dnnl::memory(f_.bias, onednn::engine(), const_cast<void*>(io.src[2].data)));
    }
    conv_.execute(stream_, args);
    if (dst_out_) dst_out_->execute(stream_, dst, user_dst);
    stream_.wait();
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  FusedPrimitive f_;
  dnnl::convolution_forward conv_;
  std::optional<dnnl::reorder> src_in_, dst_out_;  // X into, Y out of the primitive's layouts
  dnnl::stream stream_;
  dnnl::memory wei_, dw_wei_, dw_bias_;
  size_t kept_bytes_ = 0;
};

size_t fused_workspace(const ir::Node& node, const std::vector<Shape>& src_shapes, int /*algorithm*/) {
  if (src_shapes.empty()) return std::numeric_limits<size_t>::max();
  // Y's shape from the node's own rule is not at hand here: the depthwise window over X.
  const Shape& x = src_shapes[0];
  if (x.size() != 4 || src_shapes.size() <= ir::kDepthwiseWeightInput) return std::numeric_limits<size_t>::max();
  const Shape& w_dw = src_shapes[ir::kDepthwiseWeightInput];
  const std::vector<int64_t> s = node.attrs.get_ints(ir::kDepthwiseStridesAttr);
  const std::vector<int64_t> p = node.attrs.get_ints(ir::kDepthwisePadsAttr);
  if (w_dw.size() != 4 || s.size() != 2 || p.size() != 4 || s[0] < 1 || s[1] < 1)
    return std::numeric_limits<size_t>::max();
  const Shape y = {x[0], (x[1] + p[0] + p[2] - w_dw[1]) / s[0] + 1, (x[2] + p[1] + p[3] - w_dw[2]) / s[1] + 1,
                   w_dw[0]};
  auto f = make_primitive(node, src_shapes, y);
  return f ? f->workspace : std::numeric_limits<size_t>::max();
}

Expected<std::unique_ptr<runtime::Kernel>> prepare_fused(const runtime::KernelRequest& r) {
  if (r.dst_shapes.empty()) return internal_error(r.node.describe() + ": prepared without Y");
  std::vector<DType> dtypes;
  for (ir::ValueId id : r.node.inputs) dtypes.push_back(id == ir::kNoValue ? DType::kUndefined : r.graph.value(id).dtype);
  UCUDNN_RETURN_IF_ERROR(check_float_convolution_inputs(r.node, dtypes));
  auto constant = [&](size_t i) -> const Tensor* {
    if (i >= r.node.inputs.size() || r.node.inputs[i] == ir::kNoValue) return nullptr;
    const ir::Value& v = r.graph.value(r.node.inputs[i]);
    return v.constant ? &*v.constant : nullptr;
  };
  const Tensor* w = constant(1);
  const Tensor* w_dw = constant(ir::kDepthwiseWeightInput);
  const Tensor* b_dw = constant(ir::kDepthwiseBiasInput);
  const bool dw_bias = ir::kDepthwiseBiasInput < r.node.inputs.size() &&
                       r.node.inputs[ir::kDepthwiseBiasInput] != ir::kNoValue;
  if (w == nullptr || w_dw == nullptr || (dw_bias && b_dw == nullptr))
    return unsupported(r.node.describe() + ": the fused convolution needs its weights and depthwise bias to be " +
                       "constants of the graph (inference)");
  UCUDNN_ASSIGN_OR_RETURN(FusedPrimitive f, make_primitive(r.node, r.src_shapes, r.dst_shapes[0]));
  return std::unique_ptr<runtime::Kernel>(new FusedConvDepthwiseCall(
      r.node, std::move(f), w->data<float>(), w_dw->data<float>(), b_dw ? b_dw->data<float>() : nullptr));
}

// Without a prepared call: prepared on the spot from the tensors given.
Status run_fused(const KernelArgs& args) {
  if (args.src.size() <= ir::kDepthwiseWeightInput || args.dst.empty() || !args.src[0] || !args.src[1] ||
      !args.src[ir::kDepthwiseWeightInput] || !args.dst[0])
    return internal_error(args.node.describe() + ": run without X, W, W_dw or Y");
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const Tensor* t : args.src) {
    shapes.push_back(t ? t->shape() : Shape{});
    dtypes.push_back(t ? t->dtype() : DType::kUndefined);
  }
  UCUDNN_RETURN_IF_ERROR(check_float_convolution_inputs(args.node, dtypes));
  UCUDNN_ASSIGN_OR_RETURN(FusedPrimitive f, make_primitive(args.node, shapes, args.dst[0]->shape()));
  const Tensor* b_dw = args.src.size() > ir::kDepthwiseBiasInput ? args.src[ir::kDepthwiseBiasInput] : nullptr;
  FusedConvDepthwiseCall call(args.node, std::move(f), args.src[1]->data<float>(),
                              args.src[ir::kDepthwiseWeightInput]->data<float>(),
                              b_dw ? b_dw->data<float>() : nullptr);
  auto ref = [](const Tensor* t) {
    return t ? runtime::TensorRef{t->dtype(), t->shape(), const_cast<void*>(t->raw())} : runtime::TensorRef{};
  };
  std::vector<runtime::TensorRef> src, dst = {ref(args.dst[0])};
  for (const Tensor* t : args.src) src.push_back(ref(t));
  return call.run(runtime::KernelIo{src, dst, args.workspace, args.workspace_bytes});
}

}  // namespace

const CpuKernel& cpu_kernel_FusedConvDepthwise() {
  static const CpuKernel k{.workspace_bytes = fused_workspace, .run = run_fused, .prepare = prepare_fused};
  return k;
}

#endif  // UCUDNN_HAVE_ONEDNN

}  // namespace ucudnn::cpu
