// The CPU kernel table, generated from op_list.h, and thread control: one count for the
// session — OpenMP (our loops and oneDNN, which Debian builds on libgomp), Eigen's GEMMs.
#include <omp.h>

#include <atomic>

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

}  // namespace ucudnn::cpu
