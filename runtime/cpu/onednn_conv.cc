// oneDNN forward convolutions (see onednn_conv.h). One primitive per problem, created
// on first use and cached, so workspace_bytes is a query and run does not re-create it.
// The primitives take their scratchpad from the caller (scratchpad_mode::user), which
// also makes one primitive safe to run from several threads at once.
#include "runtime/cpu/onednn_conv.h"

#include <limits>

#ifdef UCUDNN_HAVE_ONEDNN
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "runtime/core/bytes.h"
#endif

namespace ucudnn::cpu::onednn {

#ifndef UCUDNN_HAVE_ONEDNN

bool built_in() { return false; }
std::string version() { return ""; }
std::string isa_name() { return ""; }
bool applies(const ConvProblem&, Kind) { return false; }
size_t workspace_bytes(const ConvProblem&, Kind) { return std::numeric_limits<size_t>::max(); }
void run(const ConvProblem&, Kind, const float*, const float*, const float*, float*, void*) {}

#else

namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

constexpr size_t kAlign = 64;  // oneDNN's own alignment for its buffers

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// A cached primitive with its reorders and the workspace layout: offsets of the
// scratchpad, the blocked copies of X, W and Y (only where the primitive wants a
// layout other than the user's), and a zero bias for calls without one.
struct Entry {
  bool ok = false;
  dnnl::convolution_forward conv;
  dnnl::memory::desc user_src, user_wei, user_dst, src, wei, dst, bias, scratchpad_desc;
  std::unique_ptr<dnnl::reorder> src_in, wei_in, dst_out;
  size_t scratchpad = 0, src_off = 0, wei_off = 0, dst_off = 0, bias_off = 0, total = 0;
};

using Key = std::tuple<int, std::vector<int64_t>>;

std::vector<int64_t> problem_fields(const ConvProblem& p) {
  return {p.batch,     p.in_channels, p.in_h,       p.in_w,       p.out_channels, p.group,   p.kernel_h, p.kernel_w,
          p.stride_h,  p.stride_w,    p.dilation_h, p.dilation_w, p.pad_top,      p.pad_left, p.out_h,    p.out_w};
}

// Right/bottom padding that makes oneDNN's output size equal ONNX's (floor) one.
int64_t pad_end(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin) {
  return (out - 1) * stride + (kernel - 1) * dilation + 1 - in - pad_begin;
}

// Tensors past kMaxTensorBytes cannot be indexed by the kernels: not attempted.
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

void make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to, std::unique_ptr<dnnl::reorder>* r) {
  if (from != to) *r = std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
}

Entry create(const ConvProblem& p, Kind kind) {
  Entry e;
  if (!fits(p)) return e;
  const dnnl::memory::dims src_dims = {p.batch, p.in_channels, p.in_h, p.in_w};
  const dnnl::memory::dims dst_dims = {p.batch, p.out_channels, p.out_h, p.out_w};
  const bool grouped = p.group > 1;
  const dnnl::memory::dims wei_dims =
      grouped ? dnnl::memory::dims{p.group, p.filters_per_group(), p.channels_per_group(), p.kernel_h, p.kernel_w}
              : dnnl::memory::dims{p.out_channels, p.in_channels, p.kernel_h, p.kernel_w};
  e.user_src = dnnl::memory::desc(src_dims, dt::f32, tag::nchw);
  e.user_dst = dnnl::memory::desc(dst_dims, dt::f32, tag::nchw);
  e.user_wei = dnnl::memory::desc(wei_dims, dt::f32, grouped ? tag::goihw : tag::oihw);
  e.bias = dnnl::memory::desc({p.out_channels}, dt::f32, tag::x);
  const dnnl::memory::dims strides = {p.stride_h, p.stride_w};
  const dnnl::memory::dims dilates = {p.dilation_h - 1, p.dilation_w - 1};  // oneDNN counts from 0
  const dnnl::memory::dims pad_l = {p.pad_top, p.pad_left};
  const dnnl::memory::dims pad_r = {pad_end(p.in_h, p.out_h, p.kernel_h, p.stride_h, p.dilation_h, p.pad_top),
                                    pad_end(p.in_w, p.out_w, p.kernel_w, p.stride_w, p.dilation_w, p.pad_left)};
  try {
    const auto algorithm =
        kind == Kind::kWinograd ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, algorithm, dnnl::memory::desc(src_dims, dt::f32, tag::any),
        dnnl::memory::desc(wei_dims, dt::f32, tag::any), e.bias, dnnl::memory::desc(dst_dims, dt::f32, tag::any),
        strides, dilates, pad_l, pad_r);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, engine());
    e.src = pd.src_desc();
    e.wei = pd.weights_desc();
    e.dst = pd.dst_desc();
    e.conv = dnnl::convolution_forward(pd);
    make_reorder(e.user_src, e.src, &e.src_in);
    make_reorder(e.user_wei, e.wei, &e.wei_in);
    make_reorder(e.dst, e.user_dst, &e.dst_out);
    // Layout: [scratchpad | X blocked | W blocked | Y blocked | zero bias], each aligned.
    size_t at = align_up(pd.scratchpad_desc().get_size(), kAlign);
    e.src_off = at;
    if (e.src_in) at += align_up(e.src.get_size(), kAlign);
    e.wei_off = at;
    if (e.wei_in) at += align_up(e.wei.get_size(), kAlign);
    e.dst_off = at;
    if (e.dst_out) at += align_up(e.dst.get_size(), kAlign);
    e.bias_off = at;
    at += align_up(e.bias.get_size(), kAlign);
    e.scratchpad_desc = pd.scratchpad_desc();
    e.scratchpad = e.scratchpad_desc.get_size();
    e.total = at;
    e.ok = e.total <= kMaxTensorBytes;
  } catch (const dnnl::error&) {
    e.ok = false;  // no implementation for this problem (or this kind on this CPU)
  }
  return e;
}

// The cached entry; entries are never removed, so the reference stays valid.
const Entry& entry(const ConvProblem& p, Kind kind) {
  static std::mutex mutex;
  static std::map<Key, std::unique_ptr<Entry>> cache;
  Key key{static_cast<int>(kind), problem_fields(p)};
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(std::move(key), std::make_unique<Entry>(create(p, kind))).first;
  return *it->second;
}

}  // namespace

bool built_in() { return true; }

// The instruction set oneDNN dispatches to on this CPU at run time (its own detection).
std::string isa_name() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "isa" + std::to_string(static_cast<int>(dnnl::get_effective_cpu_isa()));
  }
}

std::string version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " " + isa_name();
}

// An empty micro-batch (N = 0) runs nothing: it applies where one sample does and needs no workspace.
bool applies(const ConvProblem& p, Kind kind) {
  if (p.batch == 0) {
    ConvProblem one = p;
    one.batch = 1;
    return entry(one, kind).ok;
  }
  return entry(p, kind).ok;
}

size_t workspace_bytes(const ConvProblem& p, Kind kind) {
  if (p.batch == 0) return applies(p, kind) ? 0 : std::numeric_limits<size_t>::max();
  const Entry& e = entry(p, kind);
  return e.ok ? e.total : std::numeric_limits<size_t>::max();
}

void run(const ConvProblem& p, Kind kind, const float* x, const float* w, const float* bias, float* y,
         void* workspace) {
  if (p.batch == 0) return;
  const Entry& e = entry(p, kind);
  if (!e.ok) return;
  char* ws = static_cast<char*>(workspace);
  // oneDNN's memory objects take non-const handles; X, W and B are only read.
  auto mem = [](const dnnl::memory::desc& d, const void* ptr) {
    return dnnl::memory(d, engine(), const_cast<void*>(ptr));
  };
  dnnl::stream stream(engine());
  dnnl::memory user_src = mem(e.user_src, x), user_wei = mem(e.user_wei, w), user_dst = mem(e.user_dst, y);
  dnnl::memory src = e.src_in ? mem(e.src, ws + e.src_off) : user_src;
  dnnl::memory wei = e.wei_in ? mem(e.wei, ws + e.wei_off) : user_wei;
  dnnl::memory dst = e.dst_out ? mem(e.dst, ws + e.dst_off) : user_dst;
  if (bias == nullptr) {
    float* zero = reinterpret_cast<float*>(ws + e.bias_off);
    std::fill(zero, zero + p.out_channels, 0.0f);
    bias = zero;
  }
  if (e.src_in) e.src_in->execute(stream, user_src, src);
  if (e.wei_in) e.wei_in->execute(stream, user_wei, wei);
  std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, src},
                                                {DNNL_ARG_WEIGHTS, wei},
                                                {DNNL_ARG_BIAS, mem(e.bias, bias)},
                                                {DNNL_ARG_DST, dst}};
  if (e.scratchpad > 0) args.emplace(DNNL_ARG_SCRATCHPAD, mem(e.scratchpad_desc, ws));
  e.conv.execute(stream, args);
  if (e.dst_out) e.dst_out->execute(stream, dst, user_dst);
  stream.wait();
}

#endif  // UCUDNN_HAVE_ONEDNN

}  // namespace ucudnn::cpu::onednn
