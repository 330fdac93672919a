// ucudnn's public C++ API: load an ONNX model, plan it, run it.
//
//   ucudnn::SessionOptions options;
//   options.batch = 8;
//   auto session = ucudnn::Session::load("resnet18.onnx", options);
//   if (!session) { std::cerr << session.status().to_string(); return 1; }
//   auto outputs = (*session)->run({input_tensor});
//
// Every session runs a plan made by ucudnn's optimizer (μ-cuDNN). By default
// (SessionOptions as declared) that is policy wr: each convolution's algorithm
// and micro-batches are chosen by dynamic programming within 64 MiB of
// workspace per convolution, from timings of the convolutions on this
// machine's device. Timings are measured the first time a convolution shape is
// met and kept in a SQLite database (SessionOptions::benchmark_db; by default
// $XDG_CACHE_HOME/ucudnn/benchmarks.sqlite, else ~/.cache/ucudnn/benchmarks.sqlite),
// so later loads reuse them. A model without convolutions is planned without
// measuring anything or opening the database. plan() makes the same plan
// without a session: to save it (save_plan, then SessionOptions::plan_path) or
// to report what the optimizer chose.
//
// Every call returns Status/Expected; nothing throws or aborts on bad input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/model_info.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace ucudnn {

enum class Device { kCpu, kCuda };
const char* device_name(Device device);  // "cpu", "cuda"
// True when this build has the CUDA backend and a usable GPU is present.
bool cuda_available();

// How the optimizer plans the convolutions (μ-cuDNN's policies).
enum class Policy {
  kUndivided,  // each convolution's fastest algorithm at the full batch within
               // kernel_workspace_limit — what frameworks do; the baseline `ucudnn report` compares against
  kWr,         // each convolution within kernel_workspace_limit, cut into micro-batches where
               // that is faster (dynamic programming); all share one pool (the default)
  kWd,         // one total_workspace_budget divided among the convolutions by an integer
               // linear program (COIN-OR CBC)
};
const char* policy_name(Policy policy);  // "undivided", "wr", "wd"

// Which micro-batch sizes the optimizer times and may cut a batch of N into.
enum class BatchSizes {
  kPowerOfTwo,  // 1, 2, 4, ... and N (the default)
  kAll,         // every size 1..N: minutes instead of seconds the first time, sometimes better plans
  kUndivided,   // N only
};
const char* batch_sizes_name(BatchSizes sizes);  // "powerOfTwo", "all", "undivided"

// How 4-D activations are stored. The model's inputs and outputs keep their ONNX
// (NCHW) shapes in every layout; transposes happen inside.
enum class Layout {
  kAuto,  // plan both and run the one whose convolutions are predicted faster (CPU: NCHW without oneDNN)
  kNchw,  // ONNX's own layout
  kNhwc,  // channels-last: on CUDA TF32 tensor-core convolutions without workspace; on the CPU oneDNN's
          // convolutions on the tensors as they lie, without reorders, and for 3×3 stride-1 ones of an
          // inference session Winograd F(4×4, 3×3) (a build with oneDNN only)
};
const char* layout_name(Layout layout);  // "auto", "nchw", "nhwc"

// The GPU's float32 arithmetic. The CPU computes FP32 whatever this says; its inference sessions may run
// 3×3 convolutions as Winograd F(4×4, 3×3) where that measures faster (other rounding, within 1e-4 of a
// layer's output scale; cuDNN's FP32 Winograd algorithms are offered the same way on the GPU).
enum class Math {
  kTf32,  // cuDNN and cuBLAS may use TF32 tensor cores (the default, as PyTorch)
  kFp32,  // strict FP32: no TF32 anywhere
};
const char* math_name(Math math);  // "tf32", "fp32"

// CUDA graphs: whether a CUDA session captures its run once and replays it, one launch instead of
// one per kernel (run and run_on_device; the host copies of run stay outside the graph). The first
// run after load is eager, the second is captured; a plan that cannot be captured (a step that checks
// values on the host) or a capture that fails runs eagerly. Bitwise the same results either way.
enum class CudaGraph {
  kAuto,  // on where the plan allows, silently eager otherwise (the default); the CPU runs eagerly
  kOn,    // as kAuto, but a fallback to eager runs is said once on stderr; needs Device::kCuda
  kOff,   // every run eager
};
const char* cuda_graph_name(CudaGraph mode);  // "auto", "on", "off"

// A workspace limit or budget of "no bound": the optimizer then gives every
// convolution its fastest configuration, and convolutions are timed with the
// memory actually free on the device.
inline constexpr size_t kUnlimitedWorkspace = SIZE_MAX;

struct SessionOptions {
  Device device = Device::kCpu;
  // Shapes for graph inputs by name. A given shape sets the model's symbolic dims
  // ("batch"; one value per name across all inputs) and must agree with its static
  // dims and rank: InvalidArgument naming the input and both shapes otherwise.
  std::map<std::string, Shape> input_shapes;
  // Graph inputs whose values are known at load: they become initializers and are
  // folded, so a Reshape's shape, a Slice's starts/ends/axes/steps, Squeeze/Unsqueeze
  // axes, Pad's pads or Split's split fed as graph inputs can be resolved. They are
  // then not among Session::inputs() and not passed to run(). Dtype and shape must
  // match the declaration (their shapes set symbolic dims as input_shapes do).
  std::map<std::string, Tensor> constant_inputs;
  // Value for symbolic dims (usually the batch) not set by input_shapes or constant_inputs.
  int64_t batch = 1;
  // CPU threads; 0 = all the CPUs the process may use.
  int threads = 0;
  // CPU: pin each thread (the loading thread and its OpenMP team) to a CPU of its own, the first
  // `threads` CPUs the process may use; InvalidArgument when there are fewer, off the CPU and under
  // OMP_PROC_BIND/OMP_PLACES; Unsupported for training and where the affinity cannot be set. Off
  // (default): the operating system places them, and threads an earlier session pinned from the
  // same loading thread get every CPU back.
  bool pin_threads = false;
  // CPU, a plan made at load: cut the batch into this many groups of samples, each run through the
  // whole network on one thread of its own, all at once (Note [batch groups], optimizer/batch_groups.h).
  // 0 (auto): the largest divisor of the batch that is at most the thread count, kept when the model
  // allows it and it ran faster than the whole batch when both were timed at load; 1: never. N: the
  // batch must be a multiple of N, N at most the threads, and no node may mix samples (an error otherwise).
  int batch_groups = 0;
  Math math = Math::kTf32;
  Layout layout = Layout::kAuto;  // a saved plan fixes its own

  // The plan: a saved one (`ucudnn plan -o`, save_plan), which fixes the
  // policy, workspace and layout it was made with, so the settings below are
  // not used; or, with plan_path empty, one made at load by the optimizer.
  std::string plan_path;
  Policy policy = Policy::kWr;
  // Policies undivided and wr: the most workspace one convolution may use.
  size_t kernel_workspace_limit = size_t{64} << 20;
  // Policy wd: the workspace all convolutions together may use.
  size_t total_workspace_budget = size_t{64} << 20;
  BatchSizes batch_sizes = BatchSizes::kPowerOfTwo;
  bool share_workspace = false;  // wd only: convolutions that never run at the same time share bytes
  int streams = 1;               // CUDA: 2 runs independent convolutions (a ResNet downsample beside
                                 // its block's main branch) on a second stream; 1 or 2
  std::string benchmark_db;      // "" = $XDG_CACHE_HOME/ucudnn/benchmarks.sqlite (or ~/.cache/...)
  bool rebenchmark = false;      // measure again instead of reusing stored timings
  // CUDA: the GPUs of this host that measure what the database lacks, one thread and cuDNN
  // handle each — "all" or ids "0,1" (all of one model); "" = GPU 0 alone. Not for the CPU.
  std::string benchmark_devices;
  bool progress = true;          // progress bar on stderr while benchmarking (terminals only)
  CudaGraph cuda_graph = CudaGraph::kAuto;  // a Trainer's steps too: captured unless off (one process)
};

// The one check of every option (Session::load and plan() begin with it):
// InvalidArgument naming the option and its value. An application that wants
// to tell bad options from a model that fails to load calls it first (the
// command line does, to exit with 2 for usage errors).
Status check_options(const SessionOptions& options);
// A SessionOptions::benchmark_devices value checked alone, whatever the device: OK for "all" or
// distinct GPU ids "0,2", else InvalidArgument naming the text ("" names no GPU). The command line
// checks its flag and UCUDNN_BENCHMARK_DEVICES with it.
Status check_benchmark_devices(const std::string& devices);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
};

struct MemoryStats {
  size_t arena_bytes = 0;         // activation arena, planned by liveness
  size_t unplanned_bytes = 0;     // sum of all activation tensors (what no planning would need)
  size_t weight_bytes = 0;        // initializers and folded constants
  size_t workspace_bytes = 0;     // workspace pool; 0 when the workspaces are in the arena
  size_t largest_workspace_bytes = 0;  // the largest one step uses (in the pool or in the arena)
  // Kept by prepared kernels between runs, each buffer once: the CPU's copies of constant weights in
  // oneDNN's layout (convolutions, Gemm), or Winograd's transformed filters (4× the weights of such a layer).
  // They are made at the first run: 0 before it.
  size_t kernel_bytes = 0;
  size_t peak_bytes() const { return arena_bytes + weight_bytes + workspace_bytes + kernel_bytes; }
  // "36.8 MiB" (the pool), or "in the arena (largest 36.8 MiB)" (Note [workspace in the arena]).
  std::string workspace_text() const;
};

// One part of a profiled run: a graph node (after the graph passes), or one of
// the copies "copy inputs in" / "copy outputs out" whose op is "copy".
struct StepProfile {
  std::string node;
  std::string op;  // the ONNX op_type ("Conv"), "FusedPointwise(SiLU)" for a fused node, or "copy"
  double ms = 0;   // CPU: wall time; CUDA: device time between events on the stream
};

// How a session runs its batch (Note [batch groups]).
struct BatchGroups {
  int groups = 1;            // 1: every node takes the whole batch on all threads
  int64_t group_batch = 0;   // samples per group when groups > 1
  // batch_groups auto: each way's measured run ("whole batch 21.3 ms, 8 groups of 2 14.1 ms"), or why
  // the batch is not cut ("node 'softmax' (Softmax, opset 13) works along axis 0: ..."); else "".
  std::string note;
};

class GpuTensor;

// Note [one run at a time]: a Session may be used from several threads at once. run, profile,
// run_on_device, set_cuda_graph and memory take the session's lock, so concurrent calls run one after
// another, each on its own inputs and with its own outputs (a session has one arena: its activations
// and workspace are shared by the runs). An uncontended call pays one mutex acquisition;
// callers that want runs in parallel load one session each. A Trainer is not thread-safe: a call that
// arrives while another is running on it is refused (InvalidArgument), never interleaved.
class Session {
 public:
  virtual ~Session() = default;

  // Loads and prepares `model_path`: import, graph passes, the plan (saved or
  // made now), memory, kernels. Errors name what failed and where.
  static Expected<std::unique_ptr<Session>> load(const std::string& model_path, const SessionOptions& options);

  virtual const std::vector<TensorInfo>& inputs() const = 0;
  virtual const std::vector<TensorInfo>& outputs() const = 0;
  // Runs the model. `inputs` are in the order of inputs(); each must match its
  // dtype and shape (a clear error otherwise). Outputs come in the order of outputs().
  // On the CPU the inputs are read where they lie (not copied) and only read: keep them
  // unchanged until run returns.
  virtual Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs) = 0;
  // Runs once like run() (same input rules), timing every step in run order,
  // with the input copies first (none on the CPU) and the output copies last; the outputs are dropped.
  // With batch groups: the steps of the first group, timed while the others run.
  virtual Expected<std::vector<StepProfile>> profile(const std::vector<Tensor>& inputs) = 0;
  // With batch groups: every group's activations and workspaces, the weights and their kept copies once.
  virtual MemoryStats memory() const = 0;
  // The layout this session runs (kNchw or kNhwc; what Layout::kAuto chose).
  virtual Layout layout() const = 0;
  // The plan this session runs, as the JSON a plan file holds (save_plan's format); with batch
  // groups the plan of one group (its batch the group's).
  virtual std::string plan_json() const = 0;
  virtual BatchGroups batch_groups() const = 0;

  // Runs the model on caller-owned GPU memory (CUDA sessions only): inputs[i] points to a device buffer
  // holding input i exactly as inputs()[i] describes it (dtype, shape, densely packed), outputs[i] to one
  // for outputs()[i]. No host copies; returns after the results are in `outputs` (the session's stream is
  // synchronised). The buffers must be on the session's GPU (device 0), must not overlap, and the inputs
  // must be ready: work that writes them on another stream must have finished. Only the pointers are
  // checked (null, host memory), not the sizes. A CPU session returns an Unsupported error.
  virtual Status run_on_device(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) = 0;
  // The same on GpuTensors, whose dtype and shape are checked against inputs() and outputs() first.
  Status run_on_device(const std::vector<GpuTensor>& inputs, std::vector<GpuTensor>& outputs);

  // SessionOptions::cuda_graph for the runs from now on (to time both in one session, as `ucudnn run
  // --cuda-graph compare` does); kOn on a CPU session is InvalidArgument.
  virtual Status set_cuda_graph(CudaGraph mode) = 0;
  // True when runs replay a CUDA graph (from the second run on): cuda_graph is not kOff, the plan
  // can be captured and no capture failed.
  virtual bool cuda_graph_in_use() const = 0;
};

// What plan() decided, in numbers (what `ucudnn plan` prints).
struct PlanSummary {
  std::string device;             // "cpu" or "cuda"
  std::string device_name;        // the processor it was planned for ("NVIDIA H200"; the CPU's model)
  Policy policy = Policy::kWr;
  Layout layout = Layout::kNchw;  // kNchw or kNhwc
  std::string layout_note;        // Layout::kAuto: each layout's predicted time (CPU: and measured run)
  int convolution_kernels = 0;    // distinct convolutions (nodes of equal shapes count once)
  int kernels_benchmarked = 0;    // measured by this plan() call
  int kernels_reused = 0;         // timings taken from the database
  int divided_steps = 0;          // convolution nodes cut into micro-batches
  int side_stream_convolutions = 0;  // streams = 2: convolutions run on the second stream
  double predicted_conv_ms = 0;   // Σ predicted convolution time
  double optimize_seconds = 0;    // wall time of the planning, benchmarks included
  size_t workspace_pool_bytes = 0;  // 0 when the workspaces are in the arena
  size_t largest_workspace_bytes = 0;  // the largest one step uses (in the pool or in the arena)
  size_t arena_bytes = 0;         // planned activation memory (and the workspaces when in the arena)
};

// A plan made by plan(): what Session::load would run for that model and those
// options, with the timings and the choices behind it. Move-only.
class ModelPlan {
 public:
  ModelPlan(ModelPlan&& other) noexcept;
  ModelPlan& operator=(ModelPlan&& other) noexcept;
  ~ModelPlan();

  const PlanSummary& summary() const;
  // The plan file's JSON (what save_plan writes and SessionOptions::plan_path reads).
  std::string to_json() const;
  // `ucudnn report`: per convolution the configuration chosen, its predicted time
  // against the undivided (what Policy::kUndivided runs at the same limit) and the
  // unlimited ones; network totals; the ILP's statistics under wd.
  std::string report_text() const;
  std::string report_json() const;  // the same as one JSON object
  std::string report_html() const;  // a self-contained page (inline CSS and SVG plots)

 private:
  struct Impl;
  explicit ModelPlan(std::unique_ptr<Impl> impl);
  friend Expected<ModelPlan> plan(const std::string& model_path, const SessionOptions& options);
  friend Status save_plan(const ModelPlan& plan, const std::string& path);
  std::unique_ptr<Impl> impl_;
};

// Plans `model_path` exactly as Session::load would with `options` (which must
// not name a plan_path), benchmarking what the database lacks. Device kCuda
// needs no GPU when the database holds the GPU's timings: the plan is then for
// the one GPU recorded there (the same math type), for `ucudnn run --plan` on it.
Expected<ModelPlan> plan(const std::string& model_path, const SessionOptions& options);
// Writes the plan's JSON to `path` atomically: an existing file is replaced whole or left alone.
Status save_plan(const ModelPlan& plan, const std::string& path);

// --- Training (docs/TRAINING.md) ----------------------------------------------------------
//
//   ucudnn::TrainOptions options;
//   options.session.batch = 64;
//   options.learning_rate = 0.1; options.momentum = 0.9;
//   auto trainer = ucudnn::Trainer::load("resnet18.onnx", options);
//   for (...) { auto step = (*trainer)->step({images}, labels); ... }
//   (*trainer)->save("trained.onnx");
//
// The model is an ordinary inference export whose first output is the logits [N, classes].
// One step runs forward in training mode (BatchNormalization on batch statistics, Dropout
// active), softmax cross-entropy against int64 labels [N], the backward pass and the
// optimizer's update. The whole step — forward, backward-data and backward-filter
// convolutions — is planned by the same optimizer as inference (SessionOptions: device,
// policy, workspace, ...), so `wd` divides one workspace budget across all three directions.
enum class Optimizer { kSgd, kAdamW };

namespace distributed {
class Communicator;  // training/distributed/communicator.h
}

struct TrainOptions {
  SessionOptions session;  // device, policy, workspace, batch (the training batch), threads, database
  Optimizer optimizer = Optimizer::kSgd;
  double learning_rate = 0.01;  // the starting rate; set_learning_rate changes it (schedules)
  // torch.optim.SGD's momentum, dampening, Nesterov; both optimizers' (decoupled for AdamW) weight decay.
  double momentum = 0.0, dampening = 0.0, weight_decay = 0.0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;  // torch.optim.AdamW's
  float label_smoothing = 0.0f;
  uint64_t seed = 0;  // Dropout masks: step k draws from seed + k (+ rank · 2^32 in data-parallel training)
  // Data-parallel training (docs/TRAINING.md, "Several GPUs"): this process's rank among the ranks
  // that train one model together, each on its own share of every global batch
  // (training/distributed/connect.h makes it from the launcher's environment). Null: one process.
  // Its memory must be the device's: NCCL for Device::kCuda, host memory (MPI) for Device::kCpu.
  std::shared_ptr<distributed::Communicator> communicator;
  size_t bucket_bytes = size_t{25} << 20;  // gradients are averaged across ranks in buckets of about this size
};

// With several ranks, `loss` and `correct` are the global batch's (every rank's batch together).
struct TrainStepResult {
  float loss = 0;        // mean softmax cross-entropy of the batch (before the update)
  int64_t correct = 0;   // samples whose largest logit is their label
  double upload_ms = 0;  // wall time copying the batch to the device (step_staged: ~0, the copy was overlapped)
  double compute_ms = 0; // wall time of the step on the device: forward, backward and update (step_staged:
                         // and the next batch's copy, which runs beside them)
  // Of compute_ms: waiting, after the backward pass, for the gradients' average across ranks (the
  // buckets averaged during the backward pass overlap with it); 0 for one process.
  double all_reduce_ms = 0;
};

// What training would update in `model_path` (imported at batch 1): the parameters, then the
// BatchNormalization running statistics — as Trainer::parameters() and running_stats() list them.
struct TrainableTensors {
  std::vector<TensorInfo> parameters, running_stats;
};
Expected<TrainableTensors> trainable_tensors(const std::string& model_path);

// Not thread-safe: one call at a time; a call that arrives while another runs is refused
// (Note [one run at a time]).
class Trainer {
 public:
  virtual ~Trainer() = default;
  // Imports the model (no inference passes), builds and plans the training step, the
  // evaluation forward and the optimizer update, and copies the initial weights to the device.
  static Expected<std::unique_ptr<Trainer>> load(const std::string& model_path, const TrainOptions& options);

  // The model's inputs at the training batch (what step and evaluate take), and the trained
  // initializers: parameters, then BatchNormalization running statistics.
  virtual const std::vector<TensorInfo>& inputs() const = 0;
  virtual const std::vector<TensorInfo>& outputs() const = 0;  // the model's; the first is the logits
  virtual const std::vector<TensorInfo>& parameters() const = 0;
  virtual const std::vector<TensorInfo>& running_stats() const = 0;

  // One training step on a batch: host inputs (the model's) and int64 labels [N].
  virtual Expected<TrainStepResult> step(const std::vector<Tensor>& inputs, const Tensor& labels) = 0;
  // Overlapped steps: the copy of the next batch to the device runs while a step computes
  // (docs/TRAINING.md, "The input pipeline"):
  //   trainer->stage({images0}, labels0);            // copies the first batch to the device
  //   for each further batch b: trainer->step_staged({b.images}, b.labels);  // trains on the staged batch
  //   trainer->step_staged({}, {});                  // trains on the last one, stages nothing
  // stage() checks a batch as step() does and copies it; step_staged() trains on the staged batch
  // (as step() would: the same results) while copying `next_inputs` and `next_labels` (nothing when
  // next_inputs is empty) for the step after, and returns once both are done — the next batch's host
  // memory may be reused then. InvalidArgument when no batch is staged (after a failed step too: stage
  // again); a next batch that fails the checks is refused before anything runs.
  virtual Status stage(const std::vector<Tensor>& inputs, const Tensor& labels) = 0;
  virtual Expected<TrainStepResult> step_staged(const std::vector<Tensor>& next_inputs, const Tensor& next_labels) = 0;
  // One step like `step` (it trains), timing every node of the training step and of the update
  // ("update/<parameter>"); CUDA: device time between events, each step alone on one stream.
  virtual Expected<std::vector<StepProfile>> profile_step(const std::vector<Tensor>& inputs,
                                                          const Tensor& labels) = 0;
  // The model's outputs in inference mode (running statistics, no dropout) with the current weights.
  virtual Expected<std::vector<Tensor>> evaluate(const std::vector<Tensor>& inputs) = 0;
  // The optimizer and its settings: "sgd(momentum=0.9, dampening=0, weight_decay=0.0001, nesterov=0)".
  virtual std::string optimizer() const = 0;
  virtual void set_learning_rate(double lr) = 0;
  virtual double learning_rate() const = 0;
  virtual int64_t steps_done() const = 0;

  // The trained initializers by ONNX name (parameters and running statistics), host copies.
  virtual Expected<std::map<std::string, Tensor>> weights() const = 0;
  // Everything a run needs to continue exactly: weights, optimizer state, step, RNG seed.
  virtual Expected<std::map<std::string, Tensor>> state() const = 0;
  virtual Status load_state(const std::map<std::string, Tensor>& state) = 0;
  // Writes the model with the trained initializers (running statistics included) to `onnx_path`.
  virtual Status save(const std::string& onnx_path) const = 0;

  // Device memory of the training step: arena (activations, saved activations, gradients in
  // flight), workspace pool, and the trainer's own buffers as weight_bytes (parameters,
  // gradients, optimizer state, running statistics).
  virtual MemoryStats memory() const = 0;
  // The training step's plan (JSON, as `ucudnn plan` writes).
  virtual std::string plan_json() const = 0;
  // The planner's predicted convolution time of one step (ms; 0 when not predicted).
  virtual double predicted_conv_ms() const = 0;

  // Data-parallel training (TrainOptions::communicator): this process's rank and the number of
  // ranks; 0 and 1 for one process. Every rank plans the step with the same benchmark database
  // (rank 0 first) and load() refuses plans that differ between ranks; it starts every rank from
  // rank 0's weights, and each step averages the gradients across ranks before the update, so
  // the replicas stay identical. step, profile_step, load_state and replica_difference are then
  // collective: every rank calls them in the same order. BatchNormalization's statistics are per
  // rank (each rank's own batch); save, weights and state give this rank's.
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // The largest |difference| between a parameter on any rank and on rank 0 (0: identical replicas;
  // always 0 for one process). Overwrites the gradients (free between steps).
  virtual Expected<double> replica_difference() = 0;
};

// What `ucudnn info` shows of a model, read without resolving shapes (ModelInfo:
// runtime/core/model_info.h, filled by the importer itself).
Expected<ModelInfo> model_info(const std::string& model_path);
// Imports the model as a session does (symbolic dims at 1, shapes resolved by every op's shape rule,
// constants folded, composite ops lowered) without planning or running it: OK when ucudnn can run it,
// else the first problem, naming its node (an attribute, a dtype or a shape ucudnn does not support; an
// inconsistent model). What model_info, reading ops alone, cannot see.
Status check_model_imports(const std::string& model_path);

// Tensor files: an ONNX TensorProto (.pb) or a NumPy array (.npy) in; a
// TensorProto named `name` out, written atomically.
Expected<Tensor> read_tensor_file(const std::string& path);
Status write_tensor_file(const std::string& path, const std::string& name, const Tensor& tensor);

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
  struct Memory;  // the device allocation (runtime/backends/backends.h)
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::unique_ptr<Memory> memory_;
};

}  // namespace ucudnn
