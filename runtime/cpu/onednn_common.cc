// onednn_common.h: the engine and the shared reordered weights.
#include "runtime/cpu/onednn_common.h"

#ifdef UCUDNN_HAVE_ONEDNN
#include <cstring>
#include <new>
#include <utility>

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

}  // namespace ucudnn::cpu::onednn
#endif
