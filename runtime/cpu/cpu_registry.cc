// The CPU kernel table, generated from op_list.h, and thread control: one count for the
// session — OpenMP (our loops and oneDNN, which Debian builds on libgomp), Eigen's GEMMs.
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/conv_grad.h"
#include "runtime/cpu/cpu_kernel.h"

namespace ucudnn::cpu {

#define UCUDNN_DECLARE_CPU_KERNEL(name) const CpuKernel& cpu_kernel_##name();
UCUDNN_FOR_EACH_OP(UCUDNN_DECLARE_CPU_KERNEL)
#undef UCUDNN_DECLARE_CPU_KERNEL

const CpuKernel& cpu_kernel(OpKind kind) {
  using Get = const CpuKernel& (*)();
  static const Get table[] = {
#define UCUDNN_CPU_KERNEL_ENTRY(name) &cpu_kernel_##name,
      UCUDNN_FOR_EACH_OP(UCUDNN_CPU_KERNEL_ENTRY)
#undef UCUDNN_CPU_KERNEL_ENTRY
  };
  return table[static_cast<int>(kind)]();
}

int cpu_algorithm_count(OpKind op) {
  switch (op) {
    case OpKind::kConv: return kNumCpuConvAlgorithms;
    case OpKind::kConvGradData: return kNumCpuConvGradDataAlgorithms;
    case OpKind::kConvGradFilter: return kNumCpuConvGradFilterAlgorithms;
    default: return 0;
  }
}

namespace {
std::atomic<int> session_threads{0};  // 0: never set
}  // namespace

void set_num_threads(int n) {
  if (n <= 0) n = omp_get_num_procs();
  session_threads.store(n);
  omp_set_num_threads(n);
  Eigen::setNbThreads(n);
}

// OpenMP's thread count is per calling thread: a thread other than the one that loaded the
// session starts with the default (all cores) until told.
void use_session_threads() {
  const int n = session_threads.load();
  if (n > 0 && omp_get_max_threads() != n) omp_set_num_threads(n);
}

int num_threads() { return omp_get_max_threads(); }

// Note [pinned threads]: SessionOptions::pin_threads (`--pin-threads`). OpenMP keeps its team's
// threads alive between parallel regions, so pinning each member once, from inside a region of the
// session's size, holds for every later region of the same calling thread: oneDNN's, Eigen's and
// ours. Thread i goes to the i-th core the process could use when pin_threads was first called
// (read once: the calling thread is pinned too, and its own mask shrinks to one core). Threads
// the operating system does not move keep their caches; on a shared host a pinned thread also
// cannot dodge a busy core, so this is an option, off by default.
Status pin_threads() {
  static const std::vector<int> allowed = [] {
    std::vector<int> cpus;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) == 0)
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
    return cpus;
  }();
  const int threads = omp_get_max_threads();
  if (allowed.empty()) return unsupported("cannot pin threads: the process's CPU affinity could not be read");
  if (threads > static_cast<int>(allowed.size()))
    return invalid_argument("cannot pin " + std::to_string(threads) + " threads to one core each: this process may "
                            "use " + std::to_string(allowed.size()) + " cores (lower --threads)");
  std::atomic<int> failed{0};
#pragma omp parallel num_threads(threads)
  {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(allowed[static_cast<size_t>(omp_get_thread_num())], &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0) failed.fetch_add(1);
  }
  if (failed.load() > 0)
    return unsupported("cannot pin threads: the operating system refused " + std::to_string(failed.load()) + " of " +
                       std::to_string(threads));
  return Status::ok();
}

}  // namespace ucudnn::cpu
