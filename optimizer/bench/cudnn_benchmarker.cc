// The cuDNN benchmarker (see cudnn_benchmarker.h).
//
// Per kernel: x, w and y are allocated once at the largest micro-batch and
// filled with a fixed pseudo-random pattern; every size uses a prefix of them
// (the backward directions read and write the same three: dY is y, dX is x, dW
// is w). Per size, every algorithm of the kernel's direction is first prepared
// (the backend's kernel of the direction's op — Conv, ConvGradData,
// ConvGradFilter — with that algorithm; fails → unavailable) for its
// workspace, then timed in order of increasing workspace (allocation fails or
// above the cap → unavailable):
// `warmup` runs, the last of them between two CUDA events, then `repeats`
// timed runs; the median is stored. The workspace buffer grows as needed and
// is reused across algorithms.
// Forward ids from kGraphEngineBase are cuDNN graph-API engine configurations
// (runtime/cuda/cudnn_graph.h); each measurement is named by the engine its
// call's prepare got (KernelState::algorithm_name: "ENGINE_<global index>").
//
// Note [dominated algorithms]: an algorithm whose timed warm-up run is more
// than `dominated_factor` × slower than the best median so far — an algorithm
// needing no more workspace, thanks to the order — can never be chosen: the
// DP and the Pareto fronts only ever pick, per size, the fastest algorithm
// within a workspace limit. Its warm-up time is stored and the repeats are
// skipped (only with 2 or more warm-ups: the first run of an algorithm pays
// cuDNN's lazy initialisation). At batch 256 that is GEMM's 32 ms beside
// IMPLICIT_GEMM's 2.6 ms (ResNet-50's 3×3 layer1 convolution, NCHW), so
// recording every micro-batch size 1..B (--batch-sizes all) costs a fraction
// of the full medians.
#include "optimizer/bench/cudnn_benchmarker.h"

#include <algorithm>
#include <limits>
#include <iterator>
#include <map>
#include <mutex>
#include <random>

#include "optimizer/passes/passes.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/cudnn_graph.h"
#include "runtime/cuda/depthwise_conv.h"
#include "runtime/cuda/device_memory.h"

// The database checks stored algorithm numbers against kernel_key.h's counts.
static_assert(ucudnn::optimizer::kCudnnForwardAlgorithms == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
// Forward: cuDNN's, then ours (runtime/cuda/depthwise_conv.h), with the same ids on both sides.
static_assert(ucudnn::optimizer::kUcudnnDepthwiseAlgorithm == ucudnn::cuda::kDepthwiseForwardAlgorithm);
static_assert(ucudnn::optimizer::kGpuForwardAlgorithms == ucudnn::cuda::kForwardAlgorithmCount);
// Then the graph API's engine configurations (runtime/cuda/cudnn_graph.h, Note [graph engine ids]).
static_assert(ucudnn::optimizer::kGraphEngineBase == ucudnn::cuda::kGraphEngineBase);
static_assert(ucudnn::optimizer::kMaxGraphEngineConfigs == ucudnn::cuda::kMaxGraphEngineConfigs);
static_assert(ucudnn::optimizer::kGpuForwardAlgorithms <= ucudnn::optimizer::kGraphEngineBase);
static_assert(ucudnn::optimizer::kCudnnBackwardDataAlgorithms == CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
static_assert(ucudnn::optimizer::kCudnnBackwardFilterAlgorithms == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);

namespace ucudnn::optimizer {

namespace {

static_assert(CUDNN_CONVOLUTION_FWD_ALGO_COUNT == 8, "cuDNN added a forward algorithm: extend kFwdAlgorithmNames");
// cuDNN's forward algorithms, then ucudnn's own (kUcudnnDepthwiseAlgorithm).
constexpr const char* kFwdAlgorithmNames[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                              "FFT",           "FFT_TILING",            "WINOGRAD",
                                              "WINOGRAD_NONFUSED", "UCUDNN_DEPTHWISE"};
static_assert(std::size(kFwdAlgorithmNames) == kGpuForwardAlgorithms);
static_assert(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT == 6, "cuDNN added a backward-data algorithm: extend the names");
constexpr const char* kBwdDataAlgorithmNames[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD",
                                                  "WINOGRAD_NONFUSED"};
static_assert(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT == 7, "cuDNN added a backward-filter algorithm: extend names");
constexpr const char* kBwdFilterAlgorithmNames[] = {"ALGO_0",   "ALGO_1",           "FFT",       "ALGO_3",
                                                    "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};

// One call of the kernel's op at one micro-batch size, as the executor makes it (Note [fused
// nodes]): its input and output shapes and where they lie in the benchmark's x, w, y buffers.
// Conv (X, W) → Y; ConvGradData (dY, W) → dX; ConvGradFilter (X, dY) → dW, whole at every size.
struct Call {
  std::vector<Shape> src_shapes, dst_shapes;
  std::vector<cuda::DeviceTensor> src, dst;
};

int cudnn_algorithm_count(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::kForward: return kGpuForwardAlgorithmIds;  // with UCUDNN_DEPTHWISE and graph engines
    case ConvDirection::kBackwardData: return CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
    case ConvDirection::kBackwardFilter: return CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  }
  return 0;
}

Call make_call(ConvDirection direction, const Shape& x_shape, const Shape& w_shape, const Shape& y_shape,
               void* x, void* w, void* y) {
  const cuda::DeviceTensor xt{DType::kFloat32, x_shape, x}, wt{DType::kFloat32, w_shape, w},
      yt{DType::kFloat32, y_shape, y};
  Call call;
  switch (direction) {
    case ConvDirection::kForward: call.src = {xt, wt}, call.dst = {yt}; break;
    case ConvDirection::kBackwardData: call.src = {yt, wt}, call.dst = {xt}; break;
    case ConvDirection::kBackwardFilter: call.src = {xt, yt}, call.dst = {wt}; break;
  }
  for (const cuda::DeviceTensor& t : call.src) call.src_shapes.push_back(t.shape);
  for (const cuda::DeviceTensor& t : call.dst) call.dst_shapes.push_back(t.shape);
  return call;
}

// Two CUDA events, destroyed with the object.
class EventPair {
 public:
  EventPair() = default;
  ~EventPair() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  Status create() {
    UCUDNN_CUDA_CHECK(cudaEventCreate(&start), "creating a timing event");
    UCUDNN_CUDA_CHECK(cudaEventCreate(&stop), "creating a timing event");
    return Status::ok();
  }
  cudaEvent_t start = nullptr, stop = nullptr;
};

// Fills `buffer` with a repeating pseudo-random pattern in [-1, 1] (seeded).
// The pattern of `seed`, 2^20 values made once per process: sharded benchmarking
// (sharded_benchmarking.h) fills buffers per (kernel, micro-batch), on several threads.
const std::vector<float>& random_pattern(uint32_t seed) {
  static std::mutex mutex;
  static std::map<uint32_t, std::vector<float>> patterns;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, fresh] = patterns.try_emplace(seed, size_t{1} << 20);
  if (fresh) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : it->second) v = dist(rng);
  }
  return it->second;  // map nodes never move
}

Status fill_random(const cuda::DeviceBuffer& buffer, uint32_t seed, const std::string& context) {
  const std::vector<float>& pattern = random_pattern(seed);
  const size_t chunk = pattern.size() * sizeof(float);
  auto* dst = static_cast<std::byte*>(buffer.data());
  for (size_t offset = 0; offset < buffer.bytes(); offset += chunk)
    UCUDNN_CUDA_CHECK(cudaMemcpy(dst + offset, pattern.data(), std::min(chunk, buffer.bytes() - offset),
                                 cudaMemcpyHostToDevice),
                      context);
  return Status::ok();
}

class CudnnBenchmarker final : public Benchmarker {
 public:
  CudnnBenchmarker(cuda::CudaContext& ctx, CudnnBenchmarkOptions options) : ctx_(ctx), options_(options) {
    options_.warmup = std::max(options_.warmup, 1);
    options_.repeats = std::max(options_.repeats, 1);
    options_.dominated_factor = std::max(options_.dominated_factor, 1.0);
    // With one warm-up the timed one is an algorithm's first run, which pays
    // cuDNN's lazy initialisation: too slow to judge it by.
    if (options_.warmup < 2) options_.dominated_factor = std::numeric_limits<double>::infinity();
    key_.device_name = "unknown GPU";
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, ctx.device()) == cudaSuccess) {
      key_.device_name = prop.name;
      key_.sm_count = prop.multiProcessorCount;
    } else {
      cudaGetLastError();
    }
    if (cudaRuntimeGetVersion(&key_.cuda_version) != cudaSuccess) cudaGetLastError();
    if (cudaDriverGetVersion(&key_.driver_version) != cudaSuccess) cudaGetLastError();
    key_.cudnn_version = static_cast<int>(cudnnGetVersion());
    key_.dtype = "float32";
    key_.math_type = ctx.math() == cuda::MathMode::kTf32 ? "tf32" : "fp32";
    key_.layout = "nchw";
  }

  ConvKernelKey device_key() const override { return key_; }

  Expected<KernelTimings> measure(const ir::Graph& graph, const ConvKernel& kernel,
                                  const std::vector<int64_t>& sizes) override {
    if (kernel.nodes.empty() || sizes.empty()) return invalid_argument("cuDNN benchmark: no node or no sizes");
    // The bare convolution: no bias, no fused activation (see the header).
    ir::Node conv = graph.nodes[kernel.nodes.front()];
    const ConvDirection direction = kernel.direction();
    if (direction == ConvDirection::kForward) conv.inputs.resize(2);
    conv.attrs.erase(ir::kFusedActivationAttr);
    const std::string context = "cuDNN benchmark of " + conv.describe() + " (" + conv_direction_name(direction) +
                                ") " + shape_to_string(kernel.x_shape) + "*" + shape_to_string(kernel.w_shape);
    const int64_t largest = *std::max_element(sizes.begin(), sizes.end());
    Shape x_shape = kernel.x_shape, y_shape = kernel.y_shape;
    x_shape[0] = y_shape[0] = largest;

    // X and Y (dX and dY) at the largest size and W (dW): every direction's tensors are these.
    UCUDNN_ASSIGN_OR_RETURN(cuda::DeviceBuffer x, cuda::DeviceBuffer::allocate(shape_numel(x_shape) * 4, context + ": input"));
    UCUDNN_ASSIGN_OR_RETURN(cuda::DeviceBuffer w, cuda::DeviceBuffer::allocate(shape_numel(kernel.w_shape) * 4, context + ": weights"));
    UCUDNN_ASSIGN_OR_RETURN(cuda::DeviceBuffer y, cuda::DeviceBuffer::allocate(shape_numel(y_shape) * 4, context + ": output"));
    UCUDNN_RETURN_IF_ERROR(fill_random(x, 1, context));
    UCUDNN_RETURN_IF_ERROR(fill_random(w, 2, context));
    UCUDNN_RETURN_IF_ERROR(fill_random(y, 3, context));
    std::vector<EventPair> events(static_cast<size_t>(options_.repeats));
    for (EventPair& e : events) UCUDNN_RETURN_IF_ERROR(e.create());

    const cuda::CudaKernel& table = cuda::cuda_kernel(conv_direction_op(direction));
    if (table.prepare == nullptr) return unsupported(context + ": the CUDA backend has no kernel for this op");
    const int count = cudnn_algorithm_count(direction);
    KernelTimings timings;
    Status first_prepare_error;
    bool any_prepared = false;
    for (int64_t size : sizes) {
      x_shape[0] = y_shape[0] = size;
      const Call call = make_call(direction, x_shape, kernel.w_shape, y_shape, x.data(), w.data(), y.data());
      std::vector<AlgoMeasurement>& row = timings.by_batch[size];
      std::vector<std::unique_ptr<cuda::KernelState>> states(static_cast<size_t>(count));
      for (int algorithm = 0; algorithm < count; ++algorithm) {
        AlgoMeasurement m;
        m.algorithm = algorithm;
        m.name = cudnn_algorithm_name(direction, algorithm);
        m.available = false;
        const cuda::PrepareArgs args{ctx_, graph, conv, call.src_shapes, call.dst_shapes, algorithm};
        auto state = table.prepare(args);
        if (state) {
          any_prepared = true;
          m.workspace_bytes = (*state)->workspace_bytes();
          if (std::string name = (*state)->algorithm_name(); !name.empty()) m.name = std::move(name);  // ENGINE_<n>
          states[algorithm] = std::move(*state);
        } else if (first_prepare_error.is_ok()) {  // not supported for this problem
          first_prepare_error = state.status();
        }
        row.push_back(m);
      }
      std::vector<int> order(row.size());
      for (size_t a = 0; a < order.size(); ++a) order[a] = static_cast<int>(a);
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return row[a].workspace_bytes < row[b].workspace_bytes; });
      double best_ms = std::numeric_limits<double>::infinity();
      for (int algorithm : order) {
        if (!states[algorithm]) continue;
        AlgoMeasurement& m = row[algorithm];
        const double dominated_above_ms = options_.dominated_factor * best_ms;
        if (auto time = time_algorithm(*states[algorithm], call.src, call.dst, m.workspace_bytes, dominated_above_ms,
                                       events)) {
          m.time_ms = *time;
          m.available = true;
          best_ms = std::min(best_ms, *time);
        }
      }
    }
    // Not one algorithm could be prepared: the descriptors themselves are wrong
    // (e.g. asymmetric padding) — an error, not a table of unavailable entries.
    if (!any_prepared) return first_prepare_error.with_context(context);
    return timings;
  }

 private:
  // The median time of one prepared algorithm, or nullopt when it cannot run
  // (workspace above the cap or out of memory, any cuDNN or CUDA error). When
  // the timed warm-up run takes longer than `dominated_above_ms`, that time
  // (Note [dominated algorithms]).
  std::optional<double> time_algorithm(cuda::KernelState& state, const std::vector<cuda::DeviceTensor>& src,
                                       const std::vector<cuda::DeviceTensor>& dst, size_t workspace_bytes,
                                       double dominated_above_ms, std::vector<EventPair>& events) {
    if (options_.max_workspace_bytes > 0 && workspace_bytes > options_.max_workspace_bytes) return std::nullopt;
    if (workspace_bytes > workspace_.bytes()) {
      workspace_ = cuda::DeviceBuffer();  // free the smaller one first
      auto grown = cuda::DeviceBuffer::allocate(workspace_bytes, "benchmark workspace");
      if (!grown) {
        cudaGetLastError();  // an out-of-memory error is not sticky; clear it anyway
        return std::nullopt;
      }
      workspace_ = std::move(*grown);
    }
    const cuda::RunArgs run{ctx_, src, dst, workspace_.data(), workspace_bytes};
    EventPair& probe = events.front();
    for (int i = 0; i < options_.warmup; ++i) {
      const bool timed = i + 1 == options_.warmup;
      if (timed && cudaEventRecord(probe.start, ctx_.stream()) != cudaSuccess) return std::nullopt;
      if (!state.run(run).is_ok()) return std::nullopt;
      if (timed && cudaEventRecord(probe.stop, ctx_.stream()) != cudaSuccess) return std::nullopt;
    }
    if (cudaStreamSynchronize(ctx_.stream()) != cudaSuccess) {
      cudaGetLastError();
      return std::nullopt;
    }
    float probe_ms = 0;
    if (cudaEventElapsedTime(&probe_ms, probe.start, probe.stop) != cudaSuccess) return std::nullopt;
    if (probe_ms > dominated_above_ms) return probe_ms;
    for (EventPair& e : events) {
      if (cudaEventRecord(e.start, ctx_.stream()) != cudaSuccess) return std::nullopt;
      if (!state.run(run).is_ok()) return std::nullopt;
      if (cudaEventRecord(e.stop, ctx_.stream()) != cudaSuccess) return std::nullopt;
    }
    if (cudaStreamSynchronize(ctx_.stream()) != cudaSuccess) {
      cudaGetLastError();
      return std::nullopt;
    }
    std::vector<double> times;
    for (EventPair& e : events) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, e.start, e.stop) != cudaSuccess) return std::nullopt;
      times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    return median > 0 ? median : 1e-6;  // event resolution is ~0.5 µs; a time of 0 would look free
  }

  cuda::CudaContext& ctx_;
  CudnnBenchmarkOptions options_;
  ConvKernelKey key_;
  cuda::DeviceBuffer workspace_;
};

}  // namespace

std::string cudnn_fwd_algorithm_name(int algorithm) {
  return cudnn_algorithm_name(ConvDirection::kForward, algorithm);
}

std::string cudnn_algorithm_name(ConvDirection direction, int algorithm) {
  switch (direction) {
    case ConvDirection::kForward:
      if (algorithm >= 0 && algorithm < kGpuForwardAlgorithms) return kFwdAlgorithmNames[algorithm];
      // Which engine a position holds depends on the call (the measurement names it: ENGINE_<global index>).
      if (algorithm >= kGraphEngineBase && algorithm < kGpuForwardAlgorithmIds)
        return "GRAPH_" + std::to_string(algorithm - kGraphEngineBase);
      break;
    case ConvDirection::kBackwardData:
      if (algorithm >= 0 && algorithm < CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT) return kBwdDataAlgorithmNames[algorithm];
      break;
    case ConvDirection::kBackwardFilter:
      if (algorithm >= 0 && algorithm < CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT)
        return kBwdFilterAlgorithmNames[algorithm];
      break;
  }
  return "ALGO_" + std::to_string(algorithm);
}

std::unique_ptr<Benchmarker> make_cudnn_benchmarker(cuda::CudaContext& ctx, CudnnBenchmarkOptions options) {
  return std::make_unique<CudnnBenchmarker>(ctx, options);
}

}  // namespace ucudnn::optimizer
