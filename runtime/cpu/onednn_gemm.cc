// onednn_gemm.h: Note [oneDNN Gemm].
#include "runtime/cpu/onednn_gemm.h"

#ifdef UCUDNN_HAVE_ONEDNN
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <dnnl.hpp>

#include "runtime/cpu/cpu_kernel.h"
#include "runtime/cpu/onednn_common.h"
#endif

namespace ucudnn::cpu::onednn {

#ifndef UCUDNN_HAVE_ONEDNN

std::unique_ptr<runtime::Kernel> prepare_gemm(const runtime::KernelRequest&) { return nullptr; }

#else

namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

// Y [M, N] = A [M, K] · B (+ C as a bias row), B reordered into the primitive's layout at the first
// run and again only when a run passes another B pointer (used as it lies where the primitive takes
// the user's layout). Its scratchpad (a few KiB) is its own.
class OnednnGemm final : public runtime::Kernel {
 public:
  OnednnGemm(const ir::Node& node, const dnnl::matmul::primitive_desc& pd, const dnnl::memory::desc& user_b,
             bool bias, Shape a_shape, Shape y_shape)
      : node_(node), a_shape_(std::move(a_shape)), y_shape_(std::move(y_shape)), matmul_(pd),
        b_reorder_(pd.weights_desc() == user_b ? std::nullopt
                                                : std::optional<dnnl::reorder>(dnnl::reorder::primitive_desc(
                                                      engine(), user_b, engine(), pd.weights_desc()))),
        b_desc_(pd.weights_desc()), b_count_(user_b.get_size() / sizeof(float)), stream_(engine()),
        a_(unbound(pd.src_desc())), user_b_(unbound(user_b)), y_(unbound(pd.dst_desc())),
        scratchpad_(pd.scratchpad_desc().get_size()) {
    args_ = {{DNNL_ARG_SRC, a_}, {DNNL_ARG_DST, y_}};
    if (bias) args_.emplace(DNNL_ARG_BIAS, bias_ = unbound(pd.bias_desc()));
    if (!scratchpad_.empty())
      args_.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), engine(), scratchpad_.data()));
  }

  size_t workspace_bytes() const override { return 0; }
  runtime::KeptBuffer kept() const override {
    return reordered_ ? runtime::KeptBuffer{reordered_.get(), b_desc_.get_size()} : runtime::KeptBuffer{};
  }

  Status run(const runtime::KernelIo& io) override {
    if (io.src.size() < 2 || io.dst.empty() || io.src[0].shape != a_shape_ || io.dst[0].shape != y_shape_)
      return internal_error(node_.describe() + ": Gemm run with other tensors than it was prepared for");
    use_session_threads();
    const float* b = io.src[1].as<const float>();
    try {
      if (b != b_from_) {
        user_b_.set_data_handle(const_cast<float*>(b));
        if (b_reorder_) {
          reordered_ = shared_reordered_weights(*b_reorder_, user_b_, b_desc_, b, b_count_);
          args_.insert_or_assign(DNNL_ARG_WEIGHTS, *reordered_);
        } else {
          args_.insert_or_assign(DNNL_ARG_WEIGHTS, user_b_);
        }
        b_from_ = b;
      }
      a_.set_data_handle(const_cast<float*>(io.src[0].as<const float>()));
      y_.set_data_handle(io.dst[0].as<float>());
      if (bias_) bias_.set_data_handle(const_cast<float*>(io.src[2].as<const float>()));
      matmul_.execute(stream_, args_);
      stream_.wait();
    } catch (const dnnl::error& e) {
      return internal_error(node_.describe() + ": oneDNN's matmul or its reorder of B failed: " + e.what());
    }
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  Shape a_shape_, y_shape_;
  dnnl::matmul matmul_;
  std::optional<dnnl::reorder> b_reorder_;  // none where the primitive takes B as it lies
  dnnl::memory::desc b_desc_;
  size_t b_count_;
  dnnl::stream stream_;
  dnnl::memory a_, user_b_, y_, bias_;  // share their buffer pointer with the copies args_ holds
  std::vector<char> scratchpad_;
  std::unordered_map<int, dnnl::memory> args_;
  std::shared_ptr<dnnl::memory> reordered_;  // B in the primitive's layout, shared
  const float* b_from_ = nullptr;            // the B pointer reordered_ was made from
};

bool is_float(const ir::Graph& graph, ir::ValueId id) {
  return id != ir::kNoValue && graph.value(id).dtype == DType::kFloat32;
}

}  // namespace

std::unique_ptr<runtime::Kernel> prepare_gemm(const runtime::KernelRequest& r) {
  const ir::Node& node = r.node;
  const ir::Attributes& attrs = node.attrs;
  auto flag = [&](const char* name) { return attrs.has(name) && attrs.get_int(name) != 0; };
  auto number = [&](const char* name) { return attrs.has(name) ? attrs.get_float(name) : 1.0f; };
  if (r.accumulate || node.inputs.size() < 2 || r.src_shapes.size() < 2 || r.dst_shapes.size() != 1) return nullptr;
  if (flag("transA") || number("alpha") != 1.0f) return nullptr;
  if (!is_float(r.graph, node.inputs[0]) || !is_float(r.graph, node.inputs[1]) ||
      !r.graph.value(node.inputs[1]).constant.has_value())
    return nullptr;
  const Shape& a = r.src_shapes[0];
  const Shape& b = r.src_shapes[1];
  const Shape& y = r.dst_shapes[0];
  if (a.size() != 2 || b.size() != 2 || y.size() != 2) return nullptr;
  const bool trans_b = flag("transB");
  const int64_t m = a[0], k = a[1], n = trans_b ? b[0] : b[1];
  if ((trans_b ? b[1] : b[0]) != k || y != Shape{m, n} || m == 0 || k == 0 || n == 0) return nullptr;
  // C: a bias row of N (shape [N] or [1, N]) with beta 1, or nothing to add.
  const bool has_c = node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue && number("beta") != 0.0f;
  if (has_c) {
    const Shape& c = r.src_shapes[2];
    const bool row = c == Shape{n} || c == Shape{1, n};
    if (!row || number("beta") != 1.0f || !is_float(r.graph, node.inputs[2])) return nullptr;
  }
  use_session_threads();  // oneDNN splits the work for the thread count it is made with
  try {
    const dnnl::memory::desc a_desc({m, k}, dt::f32, tag::ab), y_desc({m, n}, dt::f32, tag::ab);
    const dnnl::memory::desc user_b({k, n}, dt::f32, trans_b ? tag::ba : tag::ab);
    const dnnl::memory::desc bias = has_c ? dnnl::memory::desc({1, n}, dt::f32, tag::ab) : dnnl::memory::desc();
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const dnnl::matmul::primitive_desc pd(
        dnnl::matmul::desc(a_desc, dnnl::memory::desc({k, n}, dt::f32, tag::any), bias, y_desc), attr, engine());
    return std::make_unique<OnednnGemm>(node, pd, user_b, has_c, a, y);
  } catch (const dnnl::error&) {
    return nullptr;  // no matmul for this problem here: the Eigen kernel runs it
  }
}

#endif  // UCUDNN_HAVE_ONEDNN

}  // namespace ucudnn::cpu::onednn
