// Forward convolutions through cuDNN's graph API (the backend descriptors of cudnn_graph.h): the
// engine configurations PyTorch's cudnn.benchmark chooses among, beside the legacy API's eight
// algorithms (runtime/cuda/conv.cc), as more (time, workspace) points for the optimizer.
//
// Stages, for one convolution call (its own N: a micro-batch is a call of its own):
//  1. the problem: dims and strides in cuDNN's [N, C, spatial...] order (NCHW or channels-last
//     memory), pads, strides, dilations, read back from the legacy descriptors conv.cc built;
//  2. the operation graph of one CONVOLUTION_FORWARD operation (x, w, y tensors with unique ids 'x',
//     'w', 'y' and Note [graph tensor alignment]);
//  3. the engine list: heuristics CUDNN_HEUR_MODE_A, then CUDNN_HEUR_MODE_FALLBACK, filtered by
//     Note [graph engine filter], de-duplicated (engine and knob choices), the configurations that
//     finalize into an execution plan, at most kMaxGraphEngineConfigs. Computed once per process and
//     problem (cached) — Note [graph engine ids];
//  4. the plan of one position of that list: engine (global index) + knob choices → engine config →
//     execution plan, whose workspace size is the prepare's answer (a pure query);
//  5. run: a variant pack (x, w, y, workspace) and cudnnBackendExecute on the context's stream.
//
// Note [graph engine ids]: heuristics are deterministic for one cuDNN version, GPU model, math mode
// and call shape, so an engine configuration is named by its POSITION in the list of stage 3: the
// algorithm id kGraphEngineBase + position. A benchmark database row, a plan and the executor's
// prepare all rebuild the same list and so mean the same engine configuration. Ids 0..7 are the legacy
// API's cudnnConvolutionFwdAlgo_t, 8 is ucudnn's depthwise kernel; the ids in between are unused.
//
// UCUDNN_GRAPH_ENGINES=0 in the environment turns the graph API off: every graph id is refused at
// prepare (so plans and benchmarks fall back to the legacy algorithms).
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/cudnn_descriptors.h"

namespace ucudnn::cuda {

inline constexpr int kGraphEngineBase = 16;       // the algorithm id of position 0
inline constexpr int kMaxGraphEngineConfigs = 8;  // positions 0 .. kMaxGraphEngineConfigs - 1

// Whether `algorithm` is a graph-API engine configuration's id (Note [graph engine ids]).
inline bool is_graph_engine_algorithm(int algorithm) {
  return algorithm >= kGraphEngineBase && algorithm < kGraphEngineBase + kMaxGraphEngineConfigs;
}

// False when the environment sets UCUDNN_GRAPH_ENGINES=0 (read at every call).
bool graph_engines_enabled();

// One cudnnBackendDescriptor_t, destroyed with the object; movable, not copyable.
class BackendDescriptor {
 public:
  BackendDescriptor() = default;
  ~BackendDescriptor();
  BackendDescriptor(BackendDescriptor&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  BackendDescriptor& operator=(BackendDescriptor&& other) noexcept;
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;

  // A new descriptor of `type`; `context` names the call for errors.
  static Expected<BackendDescriptor> create(cudnnBackendDescriptorType_t type, const std::string& context);
  cudnnBackendDescriptor_t get() const { return handle_; }

 private:
  cudnnBackendDescriptor_t handle_ = nullptr;
};

// A forward convolution in the graph API's terms (stage 1). Dims and strides in elements, in cuDNN's
// [N, C, spatial...] order whatever the memory layout; W is [K, C/group, spatial...] (the group
// count follows from X's C).
struct GraphConvProblem {
  std::vector<int64_t> x_dims, x_strides, w_dims, w_strides, y_dims, y_strides;
  std::vector<int64_t> pads, strides, dilations;  // per spatial dim; the pads on both sides
  int64_t x_alignment = 16, w_alignment = 16, y_alignment = 16;  // Note [graph tensor alignment]
  MathMode math = MathMode::kTf32;

  // The engine list's cache key (with the device): every field.
  std::string key() const;
};

// The problem of the legacy descriptors x, w, conv, y (runtime/cuda/conv.cc's, float32).
Expected<GraphConvProblem> graph_conv_problem(const TensorDescriptor& x, const FilterDescriptor& w,
                                              const ConvolutionDescriptor& conv, const TensorDescriptor& y,
                                              MathMode math, const std::string& context);

// One engine configuration: an engine and its knob choices, as heuristics gave them.
struct GraphEngineConfig {
  int64_t engine = -1;                             // CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::vector<std::pair<int64_t, int64_t>> knobs;  // (cudnnBackendKnobType_t, value), in heuristics' order

  // "ENGINE_<global index>": the benchmark's and the report's name.
  std::string name() const { return "ENGINE_" + std::to_string(engine); }
  friend bool operator==(const GraphEngineConfig&, const GraphEngineConfig&) = default;
};

// The engine list of stage 3 for `problem` on ctx's device (cached per process; thread-safe).
// Empty when cuDNN offers nothing usable.
Expected<std::vector<GraphEngineConfig>> graph_engine_configs(CudaContext& ctx, const GraphConvProblem& problem,
                                                              const std::string& context);

// A finalized execution plan of one engine configuration, with every descriptor it was built from.
class GraphConvPlan {
 public:
  // The plan of `config` for `problem` (stages 2 and 4).
  static Expected<std::unique_ptr<GraphConvPlan>> create(CudaContext& ctx, const GraphConvProblem& problem,
                                                         const GraphEngineConfig& config,
                                                         const std::string& context);

  size_t workspace_bytes() const { return workspace_bytes_; }
  const GraphEngineConfig& config() const { return config_; }

  // y = conv(x, w) on ctx's stream (stage 5); `workspace` holds `workspace_available` bytes. Refuses
  // pointers less aligned than the tensors were declared (Note [graph tensor alignment]).
  Status run(CudaContext& ctx, const void* x, const void* w, void* y, void* workspace,
             size_t workspace_available) const;

  ~GraphConvPlan();  // the plan, then its parts in the reverse order of their making
  GraphConvPlan(const GraphConvPlan&) = delete;
  GraphConvPlan& operator=(const GraphConvPlan&) = delete;

 private:
  GraphConvPlan() = default;
  GraphEngineConfig config_;
  GraphConvProblem problem_;
  std::vector<BackendDescriptor> parts_;  // tensors, convolution, operation, graph, engine, knobs, config
  BackendDescriptor plan_;
  size_t workspace_bytes_ = 0;
  std::string context_;
};

// What conv.cc calls for algorithm kGraphEngineBase + position: the plan of that position of the
// engine list for the legacy descriptors' convolution. Errors (the caller's "unavailable"): the
// graph API turned off (UCUDNN_GRAPH_ENGINES=0), a position beyond the list, a plan that fails.
Expected<std::unique_ptr<GraphConvPlan>> prepare_graph_conv(CudaContext& ctx, const TensorDescriptor& x,
                                                            const FilterDescriptor& w,
                                                            const ConvolutionDescriptor& conv,
                                                            const TensorDescriptor& y, int position,
                                                            const std::string& context);

}  // namespace ucudnn::cuda
