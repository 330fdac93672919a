// oneDNN forward convolutions (see onednn_conv.h). One primitive per (kind, epilogue,
// problem), created on first use and cached (entries are never removed), so
// workspace_bytes is a query and neither prepare nor run re-creates it. The primitives
// take their scratchpad from the caller (scratchpad_mode::user).
//
// Note [oneDNN weights]: the primitive wants W in its own blocked layout. A prepared
// convolution whose weights are constant holds that copy (made at the first run, looked up
// again only when a run passes another W pointer), shared with the other calls of the same
// layouts and W values (Note [shared converted weights]); one whose weights may change
// (training) reorders W into its workspace on every run. The workspace query
// (workspace_bytes) is the latter's, so a plan made without knowing fits either.
//
// Note [oneDNN epilogue]: bias is the primitive's bias; a residual z is a sum post-op
// (Y's buffer holds z before the convolution: copied in unless z is Y already (Note [residual in
// place]), or reordered into the blocked Y); the activation an eltwise post-op after it:
// Y = act(conv + B + z), Note [fused nodes]'s order. SiLU and sigmoid are the exception: oneDNN 2.6's
// swish and logistic post-ops cost more than the primitive without them and a vectorised pass over Y
// after it (Note [vector activations]), so those two always run after the primitive.
#include "runtime/cpu/onednn_conv.h"

#include <cassert>
#include <limits>

#ifdef UCUDNN_HAVE_ONEDNN
#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "runtime/core/bytes.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/onednn_common.h"
#endif

namespace ucudnn::cpu::onednn {

#ifndef UCUDNN_HAVE_ONEDNN

bool built_in() { return false; }
std::string version() { return ""; }
std::string isa_name() { return ""; }
bool applies(const ConvProblem&, Kind) { return false; }
size_t workspace_bytes(const ConvProblem&, Kind) { return std::numeric_limits<size_t>::max(); }
std::unique_ptr<PreparedConv> prepare(const ConvProblem&, Kind, const ConvEpilogue&, bool) { return nullptr; }

#else

namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// A cached primitive with its reorders and the workspace layout:
// [scratchpad | X blocked | Y blocked | W blocked], each part only where the primitive wants
// a layout other than the user's; W last, so a call with constant weights needs the prefix.
struct Entry {
  bool ok = false;
  dnnl::convolution_forward conv;
  dnnl::memory::desc user_src, user_wei, user_dst, src, wei, dst, bias, scratchpad_desc;
  std::optional<dnnl::reorder> src_in, wei_in, dst_in, dst_out;  // dst_in: z into a blocked Y
  size_t scratchpad = 0, src_off = 0, dst_off = 0, wei_off = 0, total = 0;
  std::string implementation;  // oneDNN's name for the kernel it chose ("brgconv:avx512_core", ...)
};

// (kind, epilogue, Clip's bounds as bits, threads, problem): oneDNN splits the work for the thread
// count it was made with.
using Key = std::tuple<int, int, uint32_t, uint32_t, int, std::vector<int64_t>>;

int epilogue_bits(const ConvEpilogue& e) {
  return (e.bias ? 1 : 0) | (e.residual ? 2 : 0) | static_cast<int>(e.activation.kind) << 2;
}

// Whether the activation becomes a post-op: not SiLU nor sigmoid (Note [oneDNN epilogue]).
bool fuses_activation(const ir::ConvActivation& a) {
  return a.kind != ir::ConvActivationKind::kSiLU && a.kind != ir::ConvActivationKind::kSigmoid;
}

// The activation as an eltwise post-op (Note [oneDNN epilogue]; SiLU and sigmoid are not asked for
// since fuses_activation, and stay here for the switch to cover every kind): oneDNN's swish(x) = x · sigmoid(αx),
// hardswish(x) = x · relu6(x + 3) / 6 and clip(x) = min(max(x, α), β) are ONNX's SiLU, HardSwish and Clip.
void append_activation(const ir::ConvActivation& a, dnnl::post_ops& ops) {
  using dnnl::algorithm;
  switch (a.kind) {
    case ir::ConvActivationKind::kIdentity: return;
    case ir::ConvActivationKind::kRelu: ops.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f); return;
    case ir::ConvActivationKind::kSiLU: ops.append_eltwise(1.0f, algorithm::eltwise_swish, 1.0f, 0.0f); return;
    case ir::ConvActivationKind::kHardSwish: ops.append_eltwise(1.0f, algorithm::eltwise_hardswish, 0.0f, 0.0f); return;
    case ir::ConvActivationKind::kSigmoid: ops.append_eltwise(1.0f, algorithm::eltwise_logistic, 0.0f, 0.0f); return;
    case ir::ConvActivationKind::kClip: ops.append_eltwise(1.0f, algorithm::eltwise_clip, a.min, a.max); return;
    default: assert(false && "ir::conv_activation gives no other kind"); return;
  }
}

dnnl::algorithm conv_algorithm(Kind kind) {
  switch (kind) {
    case Kind::kWinograd: return dnnl::algorithm::convolution_winograd;
    case Kind::kAuto: return dnnl::algorithm::convolution_auto;
    case Kind::kDirect:
    case Kind::kDirectPlain: break;
  }
  return dnnl::algorithm::convolution_direct;
}

Entry create(const ConvProblem& p, Kind kind, const ConvEpilogue& epilogue) {
  Entry e;
  if (!fits(p)) return e;
  const ConvGeometry g = conv_geometry(p);
  e.user_src = g.user_src;
  e.user_dst = g.user_dst;
  e.user_wei = g.user_wei;
  e.bias = epilogue.bias ? dnnl::memory::desc({p.out_channels}, dt::f32, tag::x) : dnnl::memory::desc();
  const bool plain = kind == Kind::kDirectPlain;
  try {
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, conv_algorithm(kind),
        plain ? g.user_src : dnnl::memory::desc(g.src_dims, dt::f32, tag::any),
        dnnl::memory::desc(g.wei_dims, dt::f32, tag::any), e.bias,
        plain ? g.user_dst : dnnl::memory::desc(g.dst_dims, dt::f32, tag::any), g.strides, g.dilates, g.pad_l,
        g.pad_r);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::post_ops ops;  // Note [oneDNN epilogue]
    if (epilogue.residual) ops.append_sum(1.0f);
    append_activation(epilogue.activation, ops);
    attr.set_post_ops(ops);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, engine());
    e.src = pd.src_desc();
    e.wei = pd.weights_desc();
    e.dst = pd.dst_desc();
    e.conv = dnnl::convolution_forward(pd);
    e.implementation = pd.impl_info_str();
    e.src_in = make_reorder(e.user_src, e.src);
    e.wei_in = make_reorder(e.user_wei, e.wei);
    e.dst_out = make_reorder(e.dst, e.user_dst);
    if (e.dst_out && epilogue.residual) e.dst_in = make_reorder(e.user_dst, e.dst);
    e.scratchpad_desc = pd.scratchpad_desc();
    e.scratchpad = e.scratchpad_desc.get_size();
    size_t at = align_up(e.scratchpad, kAlign);
    e.src_off = at;
    if (e.src_in) at += align_up(e.src.get_size(), kAlign);
    e.dst_off = at;
    if (e.dst_out) at += align_up(e.dst.get_size(), kAlign);
    e.wei_off = at;
    if (e.wei_in) at += align_up(e.wei.get_size(), kAlign);
    e.total = at;
    e.ok = e.total <= kMaxTensorBytes;
  } catch (const dnnl::error&) {
    e.ok = false;  // no implementation for this problem (or this kind on this CPU)
  }
  return e;
}

// The cached entry; entries are never removed, so the reference stays valid.
const Entry& entry(const ConvProblem& p, Kind kind, const ConvEpilogue& epilogue = {}) {
  static std::mutex mutex;
  static std::map<Key, std::unique_ptr<Entry>> cache;
  Key key{static_cast<int>(kind), epilogue_bits(epilogue), std::bit_cast<uint32_t>(epilogue.activation.min),
          std::bit_cast<uint32_t>(epilogue.activation.max), num_threads(), problem_fields(p)};
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(std::move(key), std::make_unique<Entry>(create(p, kind, epilogue))).first;
  return *it->second;
}

// Winograd and auto are refused where the direct primitive is what oneDNN would run anyway.
bool entry_applies(const ConvProblem& p, Kind kind) {
  if (kind == Kind::kAuto && !entry(p, Kind::kWinograd).ok) return false;
  return entry(p, kind).ok;
}

// Made at prepare: the memory objects and the argument map, so a run only points them at its
// buffers, reorders where the layouts differ, and runs the primitive. The first run with a constant
// W (and one with another W pointer) also fetches or makes the shared reordered copy.
class OnednnConv final : public PreparedConv {
 public:
  // `e` has the epilogue fused when `fused` (but for an activation that fuses_activation refuses,
  // which run() applies after); otherwise it is the bare convolution and run() adds the epilogue after
  // (apply_conv_epilogue).
  OnednnConv(const ConvProblem& p, const Entry& e, const ConvEpilogue& epilogue, bool fused, bool weights_constant)
      : p_(p), e_(e), epilogue_(epilogue), fused_(fused),
        after_(fused && !fuses_activation(epilogue.activation) ? epilogue.activation : ir::ConvActivation{}),
        stream_(engine()), user_src_(unbound(e.user_src)),
        user_wei_(unbound(e.user_wei)), user_dst_(unbound(e.user_dst)),
        src_(e.src_in ? unbound(e.src) : user_src_), dst_(e.dst_out ? unbound(e.dst) : user_dst_),
        wei_(!e.wei_in ? user_wei_ : unbound(e.wei)),
        cached_weights_(weights_constant && e.wei_in) {  // Note [oneDNN weights]: kept when constant
    args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, wei_}, {DNNL_ARG_DST, dst_}};
    if (fused_ && epilogue_.bias) args_.emplace(DNNL_ARG_BIAS, bias_ = unbound(e.bias));
    if (fused_ && epilogue_.residual && e.dst_in) z_ = unbound(e.user_dst);
    if (e.scratchpad > 0) args_.emplace(DNNL_ARG_SCRATCHPAD, scratchpad_ = unbound(e.scratchpad_desc));
  }

  // An empty micro-batch runs nothing (run returns at once), as the query (0) says.
  size_t workspace_bytes() const override { return p_.batch == 0 ? 0 : cached_weights_ ? e_.wei_off : e_.total; }
  runtime::KeptBuffer kept() const override {
    return reordered_ ? runtime::KeptBuffer{reordered_.get(), e_.wei.get_size()} : runtime::KeptBuffer{};
  }
  // The sum post-op reads Y (Note [oneDNN epilogue]); the bare primitive overwrites it.
  bool adds_residual_in_place() const override { return fused_ || !epilogue_.residual; }

  void run(const float* x, const float* w, const float* bias, const float* z, float* y, void* workspace) override {
    if (p_.batch == 0) return;
    char* ws = static_cast<char*>(workspace);
    bind(user_src_, x);
    bind(user_dst_, y);
    if (e_.src_in) {
      bind(src_, ws + e_.src_off);
      e_.src_in->execute(stream_, user_src_, src_);
    }
    if (e_.dst_out) bind(dst_, ws + e_.dst_off);
    bind(user_wei_, w);
    if (e_.wei_in) {
      if (!cached_weights_) {
        bind(wei_, ws + e_.wei_off);
        e_.wei_in->execute(stream_, user_wei_, wei_);
      } else if (weights_from_ != w) {  // Note [oneDNN weights]
        const auto count = static_cast<size_t>(p_.out_channels * p_.channels_per_group() * p_.kernel_h * p_.kernel_w);
        reordered_ = shared_reordered_weights(*e_.wei_in, user_wei_, e_.wei, w, count);
        bind(wei_, reordered_->get_data_handle());
        weights_from_ = w;
      }
    }
    if (fused_ && epilogue_.bias) bind(bias_, bias);
    if (fused_ && epilogue_.residual) {  // Note [oneDNN epilogue]: Y's buffer holds z first
      if (e_.dst_in) {
        bind(z_, z);
        e_.dst_in->execute(stream_, z_, dst_);
      } else if (z != y) {
        std::memcpy(y, z, static_cast<size_t>(p_.batch * p_.out_channels * p_.out_plane()) * sizeof(float));
      }
    }
    if (e_.scratchpad > 0) bind(scratchpad_, ws);
    e_.conv.execute(stream_, args_);
    if (e_.dst_out) e_.dst_out->execute(stream_, dst_, user_dst_);
    stream_.wait();
    if (!fused_)
      apply_conv_epilogue(p_, epilogue_.bias ? bias : nullptr, epilogue_.residual ? z : nullptr, epilogue_.activation,
                          y);
    else if (after_.kind != ir::ConvActivationKind::kIdentity)
      apply_conv_epilogue(p_, nullptr, nullptr, after_, y);
  }

 private:
  ConvProblem p_;
  const Entry& e_;
  ConvEpilogue epilogue_;
  bool fused_;
  ir::ConvActivation after_;  // the activation run() applies after the fused primitive, if any
  dnnl::stream stream_;
  // Memory objects share their buffer pointer with the copies args_ holds.
  dnnl::memory user_src_, user_wei_, user_dst_, src_, dst_, wei_, bias_, z_, scratchpad_;
  bool cached_weights_;                     // wei_ points at reordered_ (W constant)
  std::shared_ptr<dnnl::memory> reordered_;  // W reordered, shared (Note [shared converted weights])
  const float* weights_from_ = nullptr;     // the W pointer reordered_ was made from
  std::unordered_map<int, dnnl::memory> args_;
};

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
    return entry_applies(one, kind);
  }
  return entry_applies(p, kind);
}

// The bare primitive's, or a fused one's where it needs more (a sum post-op may want more scratchpad),
// over the epilogues that add a residual z (with or without a bias and a Relu: what fuse_conv_add and
// fuse_conv_any_add make). The plan's workspace then lets those fuse, which adding z where it lies
// needs (Note [residual in place]); an epilogue without z that needs more runs bare, then a pass.
size_t workspace_bytes(const ConvProblem& p, Kind kind) {
  if (!applies(p, kind)) return std::numeric_limits<size_t>::max();
  if (p.batch == 0) return 0;
  size_t bytes = entry(p, kind).total;
  for (const bool bias : {false, true})
    for (const bool relu : {false, true}) {
      const ConvEpilogue residual{.bias = bias, .residual = true,
                                  .activation = {relu ? ir::PointwiseOp::kRelu : ir::PointwiseOp::kIdentity}};
      const Entry& fused = entry(p, kind, residual);
      if (fused.ok) bytes = std::max(bytes, fused.total);
    }
  return bytes;
}

// The epilogue is fused where oneDNN takes it, the fused primitive needs no more workspace than
// the query promised, and (unless it adds z, which only the fused primitive can do in place) oneDNN
// runs the same kernel as without it: a post-op that sends oneDNN to a slower kernel (say gemm
// instead of brgconv) would cost more than the separate pass, and the planner timed the bare one.
// Else the bare primitive runs and the epilogue follows. A SiLU or sigmoid follows the primitive either
// way (fuses_activation).
std::unique_ptr<PreparedConv> prepare(const ConvProblem& p, Kind kind, const ConvEpilogue& epilogue,
                                      bool weights_constant) {
  if (!applies(p, kind)) return nullptr;
  ConvProblem one = p;
  if (one.batch == 0) one.batch = 1;  // never run (run returns at once); any entry will do
  const Entry& bare = entry(one, kind);
  ConvEpilogue in_primitive = epilogue;
  if (!fuses_activation(epilogue.activation)) in_primitive.activation = {};
  const Entry& fused = entry(one, kind, in_primitive);
  const bool use_fused = fused.ok && fused.total <= workspace_bytes(one, kind) &&
                         (epilogue.residual || fused.implementation == bare.implementation);
  return std::make_unique<OnednnConv>(p, use_fused ? fused : bare, epilogue, use_fused, weights_constant);
}

#endif  // UCUDNN_HAVE_ONEDNN

}  // namespace ucudnn::cpu::onednn
