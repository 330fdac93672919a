// oneDNN backward convolutions (see onednn_conv_grad.h). One primitive per (direction, kind, threads,
// problem), created on first use with a forward primitive of the same problem as oneDNN's hint, and
// cached (entries are never removed), so workspace_bytes is a query and neither prepare nor run
// re-creates it. The primitives take their scratchpad from the caller (scratchpad_mode::user).
//
// Note [oneDNN dW accumulate]: ConvGradFilter's micro-batches after the first add to dW (β = 1,
// Note [fused nodes]). oneDNN's backward-weights convolution has no β and takes no post-ops (a sum
// post-op is refused on any but the forward), so the primitive writes its dW into the workspace (its
// own blocked layout, or the user's) and a reorder with a sum post-op (dst = src + dst, which oneDNN's
// reorder has) adds it into dW. Without accumulate the reorder has no post-op, or, where the primitive
// takes dW in the user's layout, it writes dW where it lies. The workspace always has room for dW.
#include "runtime/cpu/onednn_conv_grad.h"

#include <limits>

#ifdef UCUDNN_HAVE_ONEDNN
#include <algorithm>
#include <map>
#include <mutex>
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

bool grad_applies(OpKind, const ConvProblem&, Kind) { return false; }
size_t grad_workspace_bytes(OpKind, const ConvProblem&, Kind) { return std::numeric_limits<size_t>::max(); }
std::unique_ptr<PreparedConvGrad> prepare_grad(OpKind, const ConvProblem&, Kind) { return nullptr; }

#else

namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// A cached primitive with its reorders and the workspace layout:
// [scratchpad | X or dX blocked | dY blocked | W or dW], X, dX, dY and W only where the primitive wants
// a layout other than the user's; ConvGradFilter's dW always (Note [oneDNN dW accumulate]).
// src is X (ConvGradFilter, read) or dX (ConvGradData, written); wei W (read) or dW (written).
struct GradEntry {
  bool ok = false;
  dnnl::primitive conv;
  dnnl::memory::desc user_src, user_wei, user_dst, src, wei, dst, scratchpad_desc;
  std::optional<dnnl::reorder> src_reorder;  // dX out of the blocked copy, or X into it
  std::optional<dnnl::reorder> wei_reorder;  // W into the blocked copy, or dW out of it
  std::optional<dnnl::reorder> dst_in;       // dY into the blocked copy
  std::optional<dnnl::reorder> wei_add;      // ConvGradFilter: dW += the primitive's dW
  size_t scratchpad = 0, src_off = 0, dst_off = 0, wei_off = 0, total = 0;
};

// (direction, kind, threads, problem): oneDNN splits the work for the thread count it was made with.
using Key = std::tuple<int, int, int, std::vector<int64_t>>;

bool is_data(OpKind op) { return op == OpKind::kConvGradData; }

// The reorder dst = src + dst.
dnnl::reorder adding_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  dnnl::post_ops ops;
  ops.append_sum(1.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to, attr));
}

GradEntry create(OpKind op, const ConvProblem& p, Kind kind) {
  GradEntry e;
  if (!fits(p) || (kind != Kind::kDirect && kind != Kind::kDirectPlain)) return e;
  if (op != OpKind::kConvGradData && op != OpKind::kConvGradFilter) return e;
  const ConvGeometry g = conv_geometry(p);
  e.user_src = g.user_src;
  e.user_wei = g.user_wei;
  e.user_dst = g.user_dst;
  const bool plain = kind == Kind::kDirectPlain;
  auto any = [](const dnnl::memory::dims& dims) { return dnnl::memory::desc(dims, dt::f32, tag::any); };
  const dnnl::memory::desc src = plain ? g.user_src : any(g.src_dims);
  const dnnl::memory::desc dst = plain ? g.user_dst : any(g.dst_dims);
  const dnnl::memory::desc wei = any(g.wei_dims);
  const dnnl::algorithm direct = dnnl::algorithm::convolution_direct;
  try {
    const dnnl::convolution_forward::primitive_desc hint(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, direct, src, wei, dst, g.strides,
                                        g.dilates, g.pad_l, g.pad_r),
        engine());
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (is_data(op)) {
      const dnnl::convolution_backward_data::primitive_desc pd(
          dnnl::convolution_backward_data::desc(direct, src, wei, dst, g.strides, g.dilates, g.pad_l, g.pad_r), attr,
          engine(), hint);
      e.src = pd.diff_src_desc();
      e.wei = pd.weights_desc();
      e.dst = pd.diff_dst_desc();
      e.scratchpad_desc = pd.scratchpad_desc();
      e.conv = dnnl::convolution_backward_data(pd);
      e.src_reorder = make_reorder(e.src, e.user_src);
      e.wei_reorder = make_reorder(e.user_wei, e.wei);
    } else {
      const dnnl::convolution_backward_weights::primitive_desc pd(
          dnnl::convolution_backward_weights::desc(direct, src, wei, dst, g.strides, g.dilates, g.pad_l, g.pad_r),
          attr, engine(), hint);
      e.src = pd.src_desc();
      e.wei = pd.diff_weights_desc();
      e.dst = pd.diff_dst_desc();
      e.scratchpad_desc = pd.scratchpad_desc();
      e.conv = dnnl::convolution_backward_weights(pd);
      e.src_reorder = make_reorder(e.user_src, e.src);
      e.wei_reorder = make_reorder(e.wei, e.user_wei);
      e.wei_add = adding_reorder(e.wei, e.user_wei);  // Note [oneDNN dW accumulate]
    }
    e.dst_in = make_reorder(e.user_dst, e.dst);
    e.scratchpad = e.scratchpad_desc.get_size();
    size_t at = align_up(e.scratchpad, kAlign);
    e.src_off = at;
    if (e.src_reorder) at += align_up(e.src.get_size(), kAlign);
    e.dst_off = at;
    if (e.dst_in) at += align_up(e.dst.get_size(), kAlign);
    e.wei_off = at;
    if (e.wei_reorder || !is_data(op)) at += align_up(e.wei.get_size(), kAlign);
    e.total = at;
    e.ok = e.total <= kMaxTensorBytes;
  } catch (const dnnl::error&) {
    e.ok = false;  // no implementation for this problem in this direction (or this kind)
  }
  return e;
}

// The cached entry; entries are never removed, so the reference stays valid.
const GradEntry& entry(OpKind op, const ConvProblem& p, Kind kind) {
  static std::mutex mutex;
  static std::map<Key, std::unique_ptr<GradEntry>> cache;
  Key key{static_cast<int>(op), static_cast<int>(kind), num_threads(), problem_fields(p)};
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(std::move(key), std::make_unique<GradEntry>(create(op, p, kind))).first;
  return *it->second;
}

// An empty micro-batch (N = 0) runs nothing: the entry of one sample says whether the kind applies.
ConvProblem at_least_one(const ConvProblem& p) {
  ConvProblem one = p;
  if (one.batch == 0) one.batch = 1;
  return one;
}

// Made at prepare: the memory objects and the argument map, so a run only points them at its buffers
// (the user's, or the blocked copies in the workspace), reorders where the layouts differ, and runs
// the primitive.
class OnednnConvGrad final : public PreparedConvGrad {
 public:
  OnednnConvGrad(OpKind op, const ConvProblem& p, const GradEntry& e)
      : data_(is_data(op)), p_(p), e_(e), stream_(engine()), user_src_(unbound(e.user_src)),
        user_wei_(unbound(e.user_wei)), user_dst_(unbound(e.user_dst)), src_(unbound(e.src)), wei_(unbound(e.wei)),
        dst_(unbound(e.dst)) {
    if (data_)
      args_ = {{DNNL_ARG_DIFF_DST, dst_}, {DNNL_ARG_WEIGHTS, wei_}, {DNNL_ARG_DIFF_SRC, src_}};
    else
      args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_DIFF_DST, dst_}, {DNNL_ARG_DIFF_WEIGHTS, wei_}};
    if (e.scratchpad > 0) args_.emplace(DNNL_ARG_SCRATCHPAD, scratchpad_ = unbound(e.scratchpad_desc));
  }

  // An empty micro-batch runs no primitive, as the query (0) says.
  size_t workspace_bytes() const override { return p_.batch == 0 ? 0 : e_.total; }

  void run(const float* src0, const float* src1, float* dst, bool accumulate, void* workspace) override {
    if (p_.batch == 0) {  // dX is empty; dW of no samples is 0
      if (!data_ && !accumulate) std::fill(dst, dst + p_.out_channels * p_.patch_size(), 0.0f);
      return;
    }
    char* ws = static_cast<char*>(workspace);
    // Each tensor the primitive reads or writes: the user's buffer, or its copy in the workspace.
    auto place = [&](const dnnl::memory& m, bool copied, size_t offset, const void* user) {
      bind(m, copied ? static_cast<const void*>(ws + offset) : user);
    };
    if (e_.scratchpad > 0) bind(scratchpad_, ws);
    if (data_) {  // src0 = dY, src1 = W, dst = dX
      bind(user_dst_, src0);
      place(dst_, e_.dst_in.has_value(), e_.dst_off, src0);
      if (e_.dst_in) e_.dst_in->execute(stream_, user_dst_, dst_);
      bind(user_wei_, src1);
      place(wei_, e_.wei_reorder.has_value(), e_.wei_off, src1);
      if (e_.wei_reorder) e_.wei_reorder->execute(stream_, user_wei_, wei_);
      bind(user_src_, dst);
      place(src_, e_.src_reorder.has_value(), e_.src_off, dst);
      e_.conv.execute(stream_, args_);
      if (e_.src_reorder) e_.src_reorder->execute(stream_, src_, user_src_);
    } else {  // src0 = X, src1 = dY, dst = dW
      bind(user_src_, src0);
      place(src_, e_.src_reorder.has_value(), e_.src_off, src0);
      if (e_.src_reorder) e_.src_reorder->execute(stream_, user_src_, src_);
      bind(user_dst_, src1);
      place(dst_, e_.dst_in.has_value(), e_.dst_off, src1);
      if (e_.dst_in) e_.dst_in->execute(stream_, user_dst_, dst_);
      bind(user_wei_, dst);
      // Note [oneDNN dW accumulate]: into the workspace unless the primitive can write dW where it lies.
      place(wei_, e_.wei_reorder.has_value() || accumulate, e_.wei_off, dst);
      e_.conv.execute(stream_, args_);
      if (accumulate) e_.wei_add->execute(stream_, wei_, user_wei_);
      else if (e_.wei_reorder) e_.wei_reorder->execute(stream_, wei_, user_wei_);
    }
    stream_.wait();
  }

 private:
  bool data_;
  ConvProblem p_;
  const GradEntry& e_;
  dnnl::stream stream_;
  // Memory objects share their buffer pointer with the copies args_ holds.
  dnnl::memory user_src_, user_wei_, user_dst_, src_, wei_, dst_, scratchpad_;
  std::unordered_map<int, dnnl::memory> args_;
};

}  // namespace

bool grad_applies(OpKind op, const ConvProblem& p, Kind kind) { return entry(op, at_least_one(p), kind).ok; }

size_t grad_workspace_bytes(OpKind op, const ConvProblem& p, Kind kind) {
  if (!grad_applies(op, p, kind)) return std::numeric_limits<size_t>::max();
  return p.batch == 0 ? 0 : entry(op, p, kind).total;
}

std::unique_ptr<PreparedConvGrad> prepare_grad(OpKind op, const ConvProblem& p, Kind kind) {
  if (!grad_applies(op, p, kind)) return nullptr;
  return std::make_unique<OnednnConvGrad>(op, p, entry(op, at_least_one(p), kind));
}

#endif  // UCUDNN_HAVE_ONEDNN

}  // namespace ucudnn::cpu::onednn
