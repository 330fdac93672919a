// The CUDA backend's kernel interface (cuDNN, cuBLAS and our own kernels).
//
// What runtime/cuda/cuda_backend.cc adapts to the backend interface
// (runtime/backend/backend.h). Two-phase with state, because cuDNN wants
// descriptors built once: `prepare` runs at load, for one call's shapes
// (a micro-batch of a divided convolution has its own), builds descriptors,
// fixes the algorithm and reports its workspace bytes — a pure query, nothing
// is allocated on the device. `run` later gets device tensors and a workspace
// slice of at least that size, and only queues work on the context's stream
// (no host sync, no allocation). One kernel per op, defined in
// runtime/cuda/<family>.cc as `const CudaKernel& cuda_kernel_<Op>()`; ops
// without a CUDA kernel return one whose `prepare` is nullptr.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/backend/backend.h"
#include "runtime/core/tensor.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/ir/graph.h"

namespace ucudnn::cuda {

// A dense row-major tensor in device memory (not owning): the backend interface's TensorRef.
using DeviceTensor = runtime::TensorRef;

struct PrepareArgs {
  CudaContext& ctx;
  const ir::Graph& graph;
  const ir::Node& node;
  std::vector<Shape> src_shapes;  // this call's input shapes ({} for an absent input)
  std::vector<Shape> dst_shapes;  // this call's output shapes
  int algorithm = -1;             // Conv: a cudnnConvolutionFwdAlgo_t; -1 = the kernel's default
  bool accumulate = false;        // add to the outputs (β = 1): runtime::KernelRequest::accumulate

  // The host value of input i when it is a constant (initializer or folded), else nullptr.
  const Tensor* constant(size_t i) const;
  DType src_dtype(size_t i) const;
  bool has_src(size_t i) const { return i < node.inputs.size() && node.inputs[i] != ir::kNoValue; }
  // "node 'conv1' (Conv, opset 13), inputs [256, 3, 224, 224] [64, 3, 7, 7]" — for messages.
  std::string describe() const;
  // An Unsupported status naming the node and shapes.
  Status unsupported_error(const std::string& message) const;
};

struct RunArgs {
  CudaContext& ctx;
  const std::vector<DeviceTensor>& src;
  const std::vector<DeviceTensor>& dst;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// What `prepare` returns: descriptors and choices for one call shape.
class KernelState {
 public:
  virtual ~KernelState() = default;
  virtual size_t workspace_bytes() const { return 0; }
  virtual Status run(const RunArgs& args) = 0;
  // runtime::Kernel::capturable: false when run() syncs the stream or copies from pageable host memory.
  virtual bool capturable() const { return true; }
  // The algorithm's name where its id alone does not say it (a cuDNN graph-API engine
  // configuration: "ENGINE_<global index>", runtime/cuda/cudnn_graph.h); "" otherwise.
  virtual std::string algorithm_name() const { return {}; }
  std::string context;  // PrepareArgs::describe(), for errors raised while running
};

struct CudaKernel {
  Expected<std::unique_ptr<KernelState>> (*prepare)(const PrepareArgs& args) = nullptr;
};

const CudaKernel& cuda_kernel(OpKind kind);

// The workspace a step that is not a convolution needs here, from shapes alone (no device: the
// planner's query, runtime/cuda/cuda_registry.cc): BatchNormTrain's and BatchNormGrad's per-channel
// partial sums (batch_norm_step_workspace, batch_norm_train.cc), a split reduction's partial sums
// (reduce_step_workspace, elementwise.cc: a bound), MaxPoolGrad's window choices
// (pool_grad_step_workspace, pooling_grad.cc); 0 for every other op.
size_t cuda_step_workspace(const ir::Graph& graph, const ir::Node& node);
size_t batch_norm_step_workspace(const ir::Graph& graph, const ir::Node& node);
size_t reduce_step_workspace(const ir::Graph& graph, const ir::Node& node);
size_t pool_grad_step_workspace(const ir::Graph& graph, const ir::Node& node);

}  // namespace ucudnn::cuda
