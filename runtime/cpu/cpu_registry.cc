// The CPU kernel table, generated from op_list.h, and thread control: one count for the
// session — OpenMP (our loops and oneDNN, which Debian builds on libgomp), Eigen's GEMMs.
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "runtime/cpu/conv_algorithms.h"
#include "runtime/cpu/conv_grad.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/ops/lowered_ops.h"

namespace ucudnn::cpu {

#define UCUDNN_DECLARE_CPU_KERNEL(name) const CpuKernel& cpu_kernel_##name();
UCUDNN_FOR_EACH_OP(UCUDNN_DECLARE_CPU_KERNEL)
#undef UCUDNN_DECLARE_CPU_KERNEL

// None for the ops the importer lowers (Note [lowered ops], runtime/ops/lowered_ops.h).
#define UCUDNN_NO_CPU_KERNEL(name)         \
  const CpuKernel& cpu_kernel_##name() { \
    static const CpuKernel k{};          \
    return k;                            \
  }
UCUDNN_FOR_EACH_LOWERED_OP(UCUDNN_NO_CPU_KERNEL)
#undef UCUDNN_NO_CPU_KERNEL

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
thread_local int thread_override = 0;  // ThreadsOfThisThread's count; 0: none

// The CPUs this process may run on, as the operating system said when first asked (before any
// pinning shrinks the calling thread's own mask); empty when it could not be read.
const std::vector<int>& process_cpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> found;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) == 0)
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &mask)) found.push_back(cpu);
    return found;
  }();
  return cpus;
}

// The largest team pin_threads(true) pinned from this thread; its threads are unpinned when a
// session loaded from this thread asks for none.
thread_local int pinned_team = 0;

// Sets the mask of every member of a team of `threads` (the calling thread is member 0): cpus[i]
// alone for member i, or every CPU of `cpus` when `alone` is false. The number that failed.
int set_team_affinity(int threads, const std::vector<int>& cpus, bool alone) {
  std::atomic<int> failed{0};
#pragma omp parallel num_threads(threads)
  {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (alone) CPU_SET(cpus[static_cast<size_t>(omp_get_thread_num())], &mask);
    else
      for (int cpu : cpus) CPU_SET(cpu, &mask);
    if (pthread_setaffinity_np(pthread_self(), sizeof mask, &mask) != 0) failed.fetch_add(1);
  }
  return failed.load();
}

}  // namespace

void set_num_threads(int n) {
  // All cores: those the process may use. omp_get_num_procs counts the calling thread's own mask,
  // one CPU once it is pinned; but under OpenMP's own binding (OMP_PROC_BIND, OMP_PLACES) it counts
  // the places, while the calling thread's mask is the first place alone.
  const bool omp_binds = omp_get_proc_bind() != omp_proc_bind_false;
  if (n <= 0)
    n = omp_binds || process_cpus().empty() ? omp_get_num_procs() : static_cast<int>(process_cpus().size());
  session_threads.store(n);
  omp_set_num_threads(n);
  Eigen::setNbThreads(n);
}

// OpenMP's thread count is per calling thread: a thread other than the one that loaded the
// session starts with the default (all cores) until told.
void use_session_threads() {
  const int n = thread_override > 0 ? thread_override : session_threads.load();
  if (n > 0 && omp_get_max_threads() != n) omp_set_num_threads(n);
}

ThreadsOfThisThread::ThreadsOfThisThread(int n)
    : previous_override_(thread_override), previous_threads_(omp_get_max_threads()) {
  thread_override = n;
  omp_set_num_threads(n);
}

ThreadsOfThisThread::~ThreadsOfThisThread() {
  thread_override = previous_override_;
  omp_set_num_threads(previous_threads_);
}

int num_threads() { return omp_get_max_threads(); }

// Note [pinned threads]: SessionOptions::pin_threads (`--pin-threads`). OpenMP keeps its team's
// threads alive between parallel regions, so setting each member's mask once, from inside a region
// of the session's size, holds for every later region of the same calling thread: oneDNN's,
// Eigen's and ours. Member i (the calling thread is member 0) goes to the i-th CPU the process may
// use (process_cpus, read before any pinning). A session (a GPU one, plan() too) loaded from the
// same thread without pinning gives every thread pinned from it, that thread too, all of the
// process's CPUs back; pinning is per loading thread, as OpenMP's teams are. Threads the caller starts
// while its own thread is pinned inherit its one CPU: the trainer refuses pinning for that reason
// (its data loaders). OpenMP's own binding (OMP_PROC_BIND, OMP_PLACES) is left alone: pinning is
// refused under it. Threads the operating system does not move keep their caches; on a shared host
// a pinned thread also cannot move off a busy core, so this is an option, off by default.
Status pin_threads(bool pin) {
  const int threads = omp_get_max_threads();
  if (!pin) {
    if (pinned_team == 0 || process_cpus().empty()) return Status::ok();
    const int team = std::max(pinned_team, threads);
    pinned_team = 0;
    const int failed = set_team_affinity(team, process_cpus(), false);
    if (failed > 0)
      return unsupported("cannot unpin threads: the operating system refused " + std::to_string(failed) + " of " +
                         std::to_string(team));
    return Status::ok();
  }
  if (omp_get_proc_bind() != omp_proc_bind_false)
    return invalid_argument("cannot pin threads: OpenMP already binds them (OMP_PROC_BIND or OMP_PLACES is set); "
                            "unset those or leave out --pin-threads");
  const std::vector<int>& cpus = process_cpus();
  if (cpus.empty()) return unsupported("cannot pin threads: the process's CPU affinity could not be read");
  if (threads > static_cast<int>(cpus.size()))
    return invalid_argument("cannot pin " + std::to_string(threads) + " threads to one CPU each: this process may "
                            "use " + std::to_string(cpus.size()) + " CPUs (lower --threads)");
  pinned_team = std::max(pinned_team, threads);
  const int failed = set_team_affinity(threads, cpus, true);
  if (failed > 0)
    return unsupported("cannot pin threads: the operating system refused " + std::to_string(failed) + " of " +
                       std::to_string(threads));
  return Status::ok();
}

}  // namespace ucudnn::cpu
