// What the CUDA backend can do (Note [backend capabilities], runtime/backend/backend.h), in a header
// that needs no CUDA: a build without the CUDA backend still plans for a GPU from a recorded database
// (optimizer/bench/device_benchmarker.cc) with these same answers, and no step workspace.
#pragma once

#include <cstddef>

#include "runtime/backend/backend.h"

namespace ucudnn::cuda {

class CudaCapabilities final : public runtime::BackendCapabilities {
 public:
  // `step_workspace`: the CUDA kernels' workspace query (cuda_step_workspace); nullptr answers 0.
  using StepWorkspace = size_t (*)(const ir::Graph& graph, const ir::Node& node);
  explicit CudaCapabilities(StepWorkspace step_workspace) : step_workspace_(step_workspace) {}

  const char* name() const override { return "cuda"; }
  bool runs_channels_last() const override { return true; }
  size_t step_workspace(const ir::Graph& graph, const ir::Node& node) const override {
    return step_workspace_ != nullptr ? step_workspace_(graph, node) : 0;
  }
  bool adds_residual_in_place() const override { return false; }  // only the CPU's convolutions do
  bool takes_gpu_fusions() const override { return true; }
  // BatchNormTrain/Grad with their Relu and residual (Note [batch norm with its activation]).
  bool trains_fused_batch_norm() const override { return true; }
  bool trains_channels_last() const override { return true; }
  bool is_host_memory() const override { return false; }
  // The H200 (`ucudnn run --device-io` of one Transpose, median of 20): [128, 64, 112, 112] float32
  // (411 MB) 0.31 ms either way, [128, 320, 14, 14] (32 MB) 0.036 ms; so ~1e-9 ms a byte. The
  // fixed part is a launch and a pass the fused neighbours no longer share: RegNetY-800MF ran 1.05 ms
  // slower with ~80 more Transposes of small tensors.
  runtime::TransposeCost layout_transpose_cost() const override { return {1e-9, 0.01}; }
  bool chooses_layout_by_running() const override { return false; }  // the GPU keeps the prediction

 private:
  StepWorkspace step_workspace_;
};

}  // namespace ucudnn::cuda
