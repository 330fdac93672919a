// The CPU backend's kernel interface (Eigen and plain loops, OpenMP threads).
//
// Kernels are two-phase, as everywhere in ucudnn: `workspace_bytes` is a pure
// query on shapes (and algorithm), then `run` gets preallocated outputs and a
// workspace of at least that size. Kernels never allocate large buffers while
// running. One kernel per op, defined in runtime/cpu/<family>.cc as
// `const CpuKernel& cpu_kernel_<Op>()`; the table is generated from op_list.h.
//
// Sizes: every value's shape has a byte size that fits in int64 (check_value_sizes,
// runtime/ir/graph.h: run at shape inference and again by the executor), so kernels
// index their tensors with plain int64 arithmetic. A workspace query that multiplies
// dims of different tensors (a convolution's column matrix) saturates instead.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "runtime/backend/backend.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace ucudnn::cpu {

struct KernelArgs {
  const ir::Node& node;
  std::vector<const Tensor*> src;  // node inputs; nullptr for an absent optional input
  std::vector<Tensor*> dst;        // node outputs, allocated with their inferred shapes
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  int algorithm = -1;              // Conv only: a CpuConvAlgorithm; -1 = the kernel's default
  bool accumulate = false;         // add to dst's contents instead of overwriting (KernelRequest::accumulate)
};

struct CpuKernel {
  // Scratch bytes `run` needs for these input shapes and algorithm; nullptr → 0.
  size_t (*workspace_bytes)(const ir::Node& node, const std::vector<Shape>& src_shapes, int algorithm) = nullptr;
  Status (*run)(const KernelArgs& args) = nullptr;
  // Optional: the backend's prepared call, for a kernel with state made once per call (Conv: oneDNN's
  // primitive and reordered constant weights; Gemm: oneDNN's matmul). Its workspace is at most
  // `workspace_bytes`'s. A null hook, or a null kernel from it → the backend calls `run`.
  Expected<std::unique_ptr<runtime::Kernel>> (*prepare)(const runtime::KernelRequest& request) = nullptr;
};

const CpuKernel& cpu_kernel(OpKind kind);

// How many algorithms the CPU offers for `op`: the convolution directions' counts
// (runtime/cpu/conv_algorithms.h, conv_grad.h; ids 0 .. count-1, -1 = the default), 0 for every other op.
int cpu_algorithm_count(OpKind op);

// Applies the activation optimizer/passes fused into `node` (attribute
// "activation", e.g. Conv or Add followed by Relu) to `dst` in place; nothing
// when the node has none. Unsupported for an activation or dtype it lacks.
Status apply_fused_activation(const ir::Node& node, Tensor& dst);

// The error for a node the channels-last pass marked (Note [channels-last],
// runtime/ir/layout.h): that layout is the CUDA backend's; the CPU runs NCHW.
Status channels_last_unsupported(const ir::Node& node);

// Number of threads kernels use (OpenMP, Eigen, oneDNN); set_num_threads(0): all the process's CPUs.
void set_num_threads(int n);
// Note [pinned threads]: pin: the calling thread's OpenMP team (set_num_threads' count) on one CPU
// each, the first of those the process may use; InvalidArgument when there are more threads than
// such CPUs, or when OMP_PROC_BIND/OMP_PLACES bind them already. Not pin: threads pinned before
// get all of the process's CPUs back.
Status pin_threads(bool pin);
int num_threads();
// Applies set_num_threads' count on the calling thread (OpenMP keeps it per thread); the
// backend's calls run this first, so any thread that runs a session uses the session's count.
// Inside a ThreadsOfThisThread scope the calling thread uses that scope's count instead.
void use_session_threads();

// While alive, the calling thread's kernels use `n` threads whatever the session's count: a batch
// group's thread runs its group on itself alone (Note [batch groups], optimizer/batch_groups.h).
class ThreadsOfThisThread {
 public:
  explicit ThreadsOfThisThread(int n);
  ~ThreadsOfThisThread();
  ThreadsOfThisThread(const ThreadsOfThisThread&) = delete;
  ThreadsOfThisThread& operator=(const ThreadsOfThisThread&) = delete;

 private:
  int previous_override_;
  int previous_threads_;
};

}  // namespace ucudnn::cpu
