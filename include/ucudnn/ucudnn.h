// ucudnn's public C++ API: load an ONNX model, (optionally) plan it, run it.
//
//   ucudnn::SessionOptions options;
//   options.batch = 8;
//   auto session = ucudnn::Session::load("resnet18.onnx", options);
//   if (!session) { std::cerr << session.status().to_string(); return 1; }
//   auto outputs = (*session)->run({input_tensor});
//
// Every call returns Status/Expected; nothing throws or aborts on bad input.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace ucudnn {

enum class Device { kCpu, kCuda };
const char* device_name(Device device);
// True when this build has the CUDA backend and a usable GPU is present.
bool cuda_available();

// How 4-D activations are stored on the GPU. The model's inputs and outputs
// keep their ONNX (NCHW) shapes in every layout; transposes happen inside.
enum class Layout {
  kAuto,  // CUDA: plan both and run the one whose convolutions are predicted faster; CPU: NCHW
  kNchw,  // ONNX's own layout (the only one the CPU backend runs)
  kNhwc,  // channels-last (CUDA only): TF32 tensor-core convolutions without workspace
};
const char* layout_name(Layout layout);  // "auto", "nchw", "nhwc"

struct SessionOptions {
  Device device = Device::kCpu;
  // Shapes for graph inputs by name (overrides the model's declared shape).
  std::map<std::string, Shape> input_shapes;
  // Value for symbolic dims (usually the batch) not fixed by input_shapes.
  int64_t batch = 1;
  // CPU threads; 0 = all cores.
  int threads = 0;

  // How convolutions are planned (the μ-cuDNN optimizer). By default each runs
  // undivided with the backend's default algorithm and nothing is benchmarked.
  std::string plan_path;             // run this saved plan (`ucudnn plan -o`)
  std::string policy;                // or plan now: "undivided", "wr" or "wd"
  size_t workspace_bytes = size_t{64} << 20;  // per kernel (undivided, wr) or total (wd)
  std::string batch_sizes = "powerOfTwo";     // micro-batch sizes: "all", "powerOfTwo", "undivided"
  bool share_workspace = false;      // wd: kernels that never run at the same time share bytes
  int streams = 1;                   // CUDA: 2 runs independent convolutions (a ResNet downsample beside
                                     // its block's main branch) on a second stream; 1 or 2
  std::string benchmark_db;          // "" = ~/.cache/ucudnn/benchmarks.sqlite
  bool rebenchmark = false;          // measure again instead of reusing stored timings
  bool progress = true;              // progress bar on stderr while benchmarking (terminals only)
  bool strict_fp32 = false;          // CUDA: strict FP32 math (no TF32 tensor cores in cuDNN/cuBLAS)
  Layout layout = Layout::kAuto;     // activation layout on the GPU (a saved plan fixes its own)
};

struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
};

struct MemoryStats {
  size_t arena_bytes = 0;         // activation arena, planned by liveness
  size_t unplanned_bytes = 0;     // sum of all activation tensors (what no planning would need)
  size_t weight_bytes = 0;        // initializers and folded constants
  size_t workspace_bytes = 0;     // workspace pool
  size_t peak_bytes() const { return arena_bytes + weight_bytes + workspace_bytes; }
};

// One part of a profiled run: a graph node (after the graph passes), or one of
// the copies "copy inputs in" / "copy outputs out" whose op is "copy".
struct StepProfile {
  std::string node;
  std::string op;  // the ONNX op_type ("Conv"), or "copy"
  double ms = 0;   // CPU: wall time; CUDA: device time between events on the stream
};

class GpuTensor;

class Session {
 public:
  virtual ~Session() = default;

  // Loads and prepares `model_path`: import, graph passes, memory planning.
  static Expected<std::unique_ptr<Session>> load(const std::string& model_path, const SessionOptions& options);

  virtual const std::vector<TensorInfo>& inputs() const = 0;
  virtual const std::vector<TensorInfo>& outputs() const = 0;
  // Runs the model. `inputs` are in the order of inputs(); each must match its
  // dtype and shape (a clear error otherwise). Outputs come in the order of outputs().
  virtual Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) = 0;
  // Runs once like run() (same input rules), timing every step in run order,
  // with the input copies first and the output copies last; the outputs are dropped.
  virtual Expected<std::vector<StepProfile>> profile(const std::vector<Tensor>& inputs) = 0;
  virtual MemoryStats memory() const = 0;
  // The layout this session runs (kNchw or kNhwc; what --layout auto chose).
  virtual Layout layout() const = 0;

  // Runs the model on caller-owned GPU memory (CUDA sessions only): inputs[i] points to a device buffer
  // holding input i exactly as inputs()[i] describes it (dtype, shape, densely packed), outputs[i] to one
  // for outputs()[i]. No host copies; returns after the results are in `outputs` (the session's stream is
  // synchronised). The buffers must be on the session's GPU (device 0), must not overlap, and the inputs
  // must be ready: work that writes them on another stream must have finished. Only the pointers are
  // checked (null, host memory), not the sizes. A CPU session returns an Unsupported error.
  virtual Status run_on_device(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) = 0;
  // The same on GpuTensors, whose dtype and shape are checked against inputs() and outputs() first.
  Status run_on_device(const std::vector<GpuTensor>& inputs, std::vector<GpuTensor>& outputs);
};

// A tensor in GPU memory, owned and move-only: what Session::run_on_device reads and
// writes, for applications without CUDA code of their own. Memory is on the current
// CUDA device (device 0, where CUDA sessions run, unless the application chose another).
// In a build without the CUDA backend every factory returns an Unsupported error.
class GpuTensor {
 public:
  GpuTensor();
  ~GpuTensor();
  GpuTensor(GpuTensor&& other) noexcept;
  GpuTensor& operator=(GpuTensor&& other) noexcept;
  GpuTensor(const GpuTensor&) = delete;
  GpuTensor& operator=(const GpuTensor&) = delete;

  // Zero-filled device memory for dtype[shape]. Fails with kOutOfMemory when it does not fit.
  static Expected<GpuTensor> allocate(DType dtype, Shape shape);
  // A device copy of `host`; returns once the copy is complete.
  static Expected<GpuTensor> upload(const Tensor& host);
  // A host copy. Work still queued on other streams that writes this memory must have finished
  // (run_on_device returns only after it has).
  Expected<Tensor> download() const;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  void* data() const;  // nullptr when the tensor holds no bytes
  // "float32[1, 3, 224, 224] on the GPU"
  std::string describe() const;

 private:
  struct Memory;  // the device allocation (a cuda::DeviceBuffer in CUDA builds)
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::unique_ptr<Memory> memory_;
};

}  // namespace ucudnn
