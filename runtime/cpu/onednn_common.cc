// onednn_common.h: the engine, the shared reordered weights, a convolution's geometry.
#include "runtime/cpu/onednn_common.h"

#ifdef UCUDNN_HAVE_ONEDNN
#include <cstring>
#include <initializer_list>
#include <new>
#include <utility>

#include "runtime/core/bytes.h"
#include "runtime/core/tensor.h"
#include "runtime/cpu/shared_weights.h"

namespace ucudnn::cpu::onednn {

// Note [oneDNN primitive cache]: oneDNN's own cache is turned off. It treats memory descriptors
// that differ only in the strides of dims of size 1 as equal (NCHW and NHWC of [N, C, 1, 1]), so a
// primitive created for one layout was handed back for the other: which implementation ran, and so
// the scratchpad a workspace query answered, depended on what the process had created before, and a
// plan measured in one process needed more workspace in the next. Our caches keep every primitive
// we use, keyed by the whole problem, so nothing is created twice.
dnnl::engine& engine() {
  static dnnl::engine e = [] {
    dnnl::set_primitive_cache_capacity(0);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return e;
}

std::shared_ptr<dnnl::memory> shared_reordered_weights(const dnnl::reorder& reorder, dnnl::memory user,
                                                       const dnnl::memory::desc& to, const float* w, size_t count) {
  using Layouts = std::pair<dnnl::memory::desc, dnnl::memory::desc>;  // from, to
  static SharedWeights<Layouts, dnnl::memory> registry;
  auto convert = [&] {
    std::shared_ptr<dnnl::memory> reordered;
    try {
      reordered = std::make_shared<dnnl::memory>(to, engine());
    } catch (const dnnl::error&) {
      throw std::bad_alloc();  // the only way making a memory object of a valid desc fails
    }
    dnnl::stream stream(engine());
    reorder.execute(stream, user, *reordered);
    stream.wait();
    return reordered;
  };
  auto same = [&](const dnnl::memory& a, const dnnl::memory& b) {
    return std::memcmp(a.get_data_handle(), b.get_data_handle(), to.get_size()) == 0;
  };
  return registry.get({user.get_desc(), to}, w, count, convert, same);
}

namespace {

// Right/bottom padding that makes oneDNN's output size equal ONNX's (floor) one.
int64_t pad_end(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin) {
  return (out - 1) * stride + (kernel - 1) * dilation + 1 - in - pad_begin;
}

}  // namespace

ConvGeometry conv_geometry(const ConvProblem& p) {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  ConvGeometry g;
  g.src_dims = {p.batch, p.in_channels, p.in_h, p.in_w};
  g.dst_dims = {p.batch, p.out_channels, p.out_h, p.out_w};
  const bool grouped = p.group > 1;
  g.wei_dims = grouped
                   ? dnnl::memory::dims{p.group, p.filters_per_group(), p.channels_per_group(), p.kernel_h, p.kernel_w}
                   : dnnl::memory::dims{p.out_channels, p.in_channels, p.kernel_h, p.kernel_w};
  const tag activations = p.channels_last ? tag::nhwc : tag::nchw;  // dims stay N, C, H, W
  const tag weights = p.channels_last ? (grouped ? tag::gohwi : tag::ohwi) : (grouped ? tag::goihw : tag::oihw);
  g.user_src = dnnl::memory::desc(g.src_dims, dt::f32, activations);
  g.user_dst = dnnl::memory::desc(g.dst_dims, dt::f32, activations);
  g.user_wei = dnnl::memory::desc(g.wei_dims, dt::f32, weights);
  g.strides = {p.stride_h, p.stride_w};
  g.dilates = {p.dilation_h - 1, p.dilation_w - 1};  // oneDNN counts from 0
  g.pad_l = {p.pad_top, p.pad_left};
  g.pad_r = {pad_end(p.in_h, p.out_h, p.kernel_h, p.stride_h, p.dilation_h, p.pad_top),
             pad_end(p.in_w, p.out_w, p.kernel_w, p.stride_w, p.dilation_w, p.pad_left)};
  return g;
}

bool fits(const ConvProblem& p) {
  auto bytes = [](std::initializer_list<int64_t> dims) {
    size_t n = sizeof(float);
    for (int64_t d : dims) n = saturating_mul(n, static_cast<size_t>(d));
    return n;
  };
  return p.batch > 0 && bytes({p.batch, p.in_channels, p.in_h, p.in_w}) <= kMaxTensorBytes &&
         bytes({p.out_channels, p.channels_per_group(), p.kernel_h, p.kernel_w}) <= kMaxTensorBytes &&
         bytes({p.batch, p.out_channels, p.out_h, p.out_w}) <= kMaxTensorBytes;
}

std::vector<int64_t> problem_fields(const ConvProblem& p) {
  return {p.batch,    p.in_channels, p.in_h,       p.in_w,       p.out_channels, p.group,    p.kernel_h,
          p.kernel_w, p.stride_h,    p.stride_w,   p.dilation_h, p.dilation_w,   p.pad_top,  p.pad_left,
          p.out_h,    p.out_w,       p.channels_last};
}

std::optional<dnnl::reorder> make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  if (from == to) return std::nullopt;
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
}

dnnl::memory unbound(const dnnl::memory::desc& desc) { return dnnl::memory(desc, engine(), DNNL_MEMORY_NONE); }

void bind(const dnnl::memory& memory, const void* data) { memory.set_data_handle(const_cast<void*>(data)); }

}  // namespace ucudnn::cpu::onednn
#endif
