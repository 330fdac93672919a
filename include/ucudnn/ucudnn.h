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
  std::string benchmark_db;          // "" = ~/.cache/ucudnn/benchmarks.sqlite
  bool rebenchmark = false;          // measure again instead of reusing stored timings
  bool progress = true;              // progress bar on stderr while benchmarking (terminals only)
  bool strict_fp32 = false;          // CUDA: strict FP32 math (no TF32 tensor cores in cuDNN/cuBLAS)
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
};

}  // namespace ucudnn
