// The option enums, SessionOptions and TrainOptions as Python classes, field for field the C++ API's
// (include/ucudnn/ucudnn.h says what each means). Every enum also takes its C++ API name as a string
// ("wd", "cuda", "powerOfTwo"; any case) wherever the enum is expected, so `options.policy = "wd"` works;
// byte sizes take an int or a text such as "64MiB" or "unlimited" (parse_byte_size, as the command
// line's --workspace).
#include <pybind11/stl.h>

#include <cctype>
#include <sstream>

#include "python/src/arrays.h"
#include "python/src/binding.h"
#include "python/src/errors.h"
#include "runtime/core/bytes.h"

namespace ucudnn::python {

namespace {

const char* optimizer_name(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kAdamW:
      return "adamw";
  }
  return "?";
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// A Python enum `name` with `values` (Python name, value), constructible from the API's name of a value.
template <typename E>
void bind_enum(py::module_& m, const char* name, const char* doc, const std::vector<std::pair<const char*, E>>& values,
               const char* (*api_name)(E)) {
  py::enum_<E> e(m, name, doc);
  std::vector<E> all;
  for (const auto& [python_name, value] : values) {
    e.value(python_name, value);
    all.push_back(value);
  }
  const std::string enum_name = name;
  e.def(py::init([all, api_name, enum_name](const std::string& text) {
          std::string choices;
          for (E value : all) {
            if (lower(text) == lower(api_name(value))) return value;
            choices += std::string(choices.empty() ? "" : ", ") + "'" + api_name(value) + "'";
          }
          throw py::value_error(enum_name + " must be one of " + choices + ", got '" + text + "'");
        }),
        py::arg("name"), "The value the C++ API names `name` (\"wd\", \"cuda\", ...).");
  e.def_property_readonly(
      "api_name", [api_name](E value) { return std::string(api_name(value)); },
      "The C++ API's and the command line's name of this value.");
  py::implicitly_convertible<py::str, E>();
}

// A byte size from Python: a non-negative int, or a text parse_byte_size reads.
size_t byte_size(py::handle value, const char* option) {
  if (py::isinstance<py::str>(value)) {
    Expected<size_t> bytes = parse_byte_size(value.cast<std::string>());
    if (!bytes) throw py::value_error(std::string(option) + ": " + bytes.status().message());
    return *bytes;
  }
  if (py::isinstance<py::int_>(value) && !py::isinstance<py::bool_>(value)) {
    const unsigned long long bytes = PyLong_AsUnsignedLongLong(value.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw py::value_error(std::string(option) + " must be from 0 to 2**64 - 1 bytes, got " +
                            std::string(py::str(value)));
    }
    return static_cast<size_t>(bytes);
  }
  throw py::type_error(std::string(option) + " must be an int (bytes) or a size such as '64MiB' or 'unlimited', got " +
                       std::string(py::str(py::type::handle_of(value).attr("__name__"))));
}

// An enum option from Python: the enum, or its API name (ValueError listing the names otherwise).
template <typename E>
E to_enum(py::handle value, const char* option) {
  if (py::isinstance<py::str>(value)) return py::type::of<E>()(value).template cast<E>();
  if (py::isinstance<E>(value)) return value.cast<E>();
  throw py::type_error(std::string(option) + " must be a " + std::string(py::str(py::type::of<E>().attr("__name__"))) +
                       " or its name, got " + std::string(py::str(py::type::handle_of(value).attr("__name__"))));
}

// Option `name`, the enum field `member`, read as the enum and set from the enum or its name.
template <typename Options, typename E>
void def_enum(py::class_<Options>& c, const char* name, E Options::*member, const char* doc) {
  c.def_property(
      name, [member](const Options& o) { return o.*member; },
      [member, name](Options& o, py::handle value) { o.*member = to_enum<E>(value, name); }, doc);
}

std::string size_text(size_t bytes) { return bytes == kUnlimitedWorkspace ? "'unlimited'" : std::to_string(bytes); }

std::string repr(const SessionOptions& o) {
  std::ostringstream out;
  out << "SessionOptions(device='" << device_name(o.device) << "', batch=" << o.batch << ", threads=" << o.threads
      << ", policy='" << policy_name(o.policy) << "', kernel_workspace_limit=" << size_text(o.kernel_workspace_limit)
      << ", total_workspace_budget=" << size_text(o.total_workspace_budget) << ", layout='" << layout_name(o.layout)
      << "', math='" << math_name(o.math) << "', batch_sizes='" << batch_sizes_name(o.batch_sizes)
      << "', streams=" << o.streams << ", cuda_graph='" << cuda_graph_name(o.cuda_graph) << "'";
  if (!o.plan_path.empty()) out << ", plan_path='" << o.plan_path << "'";
  if (!o.benchmark_db.empty()) out << ", benchmark_db='" << o.benchmark_db << "'";
  out << ")";
  return out.str();
}

void bind_session_options(py::module_& m) {
  py::class_<SessionOptions> c(m, "SessionOptions",
                               "How a model is loaded and planned: ucudnn::SessionOptions, field for field.");
  c.def(py::init<>())
      .def(py::init<const SessionOptions&>(), py::arg("other"), "A copy of `other`.")
      .def_readwrite("input_shapes", &SessionOptions::input_shapes,
                     "Shapes of graph inputs by name ({'input': [8, 3, 224, 224]}); they set symbolic dims. "
                     "Assign a whole dict: the value read is a copy.")
      .def_property(
          "constant_inputs",
          [](const SessionOptions& o) {
            py::dict values;
            for (const auto& [name, tensor] : o.constant_inputs) values[py::str(name)] = to_numpy(tensor);
            return values;
          },
          [](SessionOptions& o, const py::dict& values) {
            std::map<std::string, Tensor> tensors;
            for (const auto& [name, value] : values) {
              const std::string key = py::cast<std::string>(name);
              tensors[key] = host_tensor_copy(value, "constant input '" + key + "'");
            }
            o.constant_inputs = std::move(tensors);
          },
          "Graph inputs known at load, by name (arrays, copied): folded as initializers.")
      .def_readwrite("batch", &SessionOptions::batch, "Value of symbolic dims (the batch) no shape sets.")
      .def_readwrite("threads", &SessionOptions::threads, "CPU threads; 0: all the process may use.")
      .def_readwrite("pin_threads", &SessionOptions::pin_threads, "CPU: each thread on a CPU of its own.")
      .def_readwrite("batch_groups", &SessionOptions::batch_groups,
                     "CPU: the batch as this many groups of samples run at once; 0: auto, 1: never.")
      .def_readwrite("plan_path", &SessionOptions::plan_path,
                     "A saved plan to run (Plan.save); it fixes policy, workspace and layout.")
      .def_property(
          "kernel_workspace_limit", [](const SessionOptions& o) { return o.kernel_workspace_limit; },
          [](SessionOptions& o, py::handle v) { o.kernel_workspace_limit = byte_size(v, "kernel_workspace_limit"); },
          "Policies undivided and wr: the most workspace one convolution may use (bytes, or '64MiB').")
      .def_property(
          "total_workspace_budget", [](const SessionOptions& o) { return o.total_workspace_budget; },
          [](SessionOptions& o, py::handle v) { o.total_workspace_budget = byte_size(v, "total_workspace_budget"); },
          "Policy wd: the workspace all convolutions together may use (bytes, or '64MiB').")
      .def_property(
          "workspace",
          [](const SessionOptions& o) {
            return o.policy == Policy::kWd ? o.total_workspace_budget : o.kernel_workspace_limit;
          },
          [](SessionOptions& o, py::handle v) {
            (o.policy == Policy::kWd ? o.total_workspace_budget : o.kernel_workspace_limit) = byte_size(v, "workspace");
          },
          "The command line's --workspace: total_workspace_budget under policy wd, else kernel_workspace_limit. "
          "Set the policy first.")
      .def_readwrite("share_workspace", &SessionOptions::share_workspace, "wd: share bytes between convolutions.")
      .def_readwrite("streams", &SessionOptions::streams, "CUDA: 1 or 2 streams.")
      .def_readwrite("benchmark_db", &SessionOptions::benchmark_db, "The benchmark database ('': the user's cache).")
      .def_readwrite("rebenchmark", &SessionOptions::rebenchmark, "Measure again instead of reusing timings.")
      .def_readwrite("benchmark_devices", &SessionOptions::benchmark_devices, "CUDA: 'all' or GPU ids '0,1'.")
      .def_readwrite("progress", &SessionOptions::progress, "Progress bar on stderr while benchmarking (terminals).")
      .def(
          "check", [](const SessionOptions& o) { check(check_options(o)); },
          "Raises ValueError naming the first bad option (ucudnn::check_options).")
      .def("__repr__", &repr);
  def_enum(c, "device", &SessionOptions::device, "Device.CPU or Device.CUDA (or 'cpu', 'cuda').");
  def_enum(c, "math", &SessionOptions::math, "GPU float32 math: Math.TF32 or Math.FP32.");
  def_enum(c, "layout", &SessionOptions::layout, "Layout.AUTO, NCHW or NHWC.");
  def_enum(c, "policy", &SessionOptions::policy, "Policy.UNDIVIDED, WR (default) or WD.");
  def_enum(c, "batch_sizes", &SessionOptions::batch_sizes, "BatchSizes.POWER_OF_TWO, ALL or UNDIVIDED.");
  def_enum(c, "cuda_graph", &SessionOptions::cuda_graph, "CudaGraph.AUTO, ON or OFF.");
}

void bind_train_options(py::module_& m) {
  py::class_<TrainOptions> c(m, "TrainOptions", "How a Trainer trains: ucudnn::TrainOptions (one process).");
  c.def(py::init<>())
      .def(py::init<const TrainOptions&>(), py::arg("other"), "A copy of `other`.")
      .def_readwrite("session", &TrainOptions::session, "Device, policy, workspace, batch (the training batch), ...")
      .def_readwrite("learning_rate", &TrainOptions::learning_rate)
      .def_readwrite("momentum", &TrainOptions::momentum)
      .def_readwrite("dampening", &TrainOptions::dampening)
      .def_readwrite("weight_decay", &TrainOptions::weight_decay)
      .def_readwrite("nesterov", &TrainOptions::nesterov)
      .def_readwrite("beta1", &TrainOptions::beta1)
      .def_readwrite("beta2", &TrainOptions::beta2)
      .def_readwrite("epsilon", &TrainOptions::epsilon)
      .def_readwrite("label_smoothing", &TrainOptions::label_smoothing)
      .def_readwrite("seed", &TrainOptions::seed, "Dropout masks: step k draws from seed + k.")
      .def_property(
          "bucket_bytes", [](const TrainOptions& o) { return o.bucket_bytes; },
          [](TrainOptions& o, py::handle v) { o.bucket_bytes = byte_size(v, "bucket_bytes"); })
      .def("__repr__", [](const TrainOptions& o) {
        std::ostringstream out;
        out << "TrainOptions(optimizer='" << optimizer_name(o.optimizer) << "', learning_rate=" << o.learning_rate
            << ", momentum=" << o.momentum << ", weight_decay=" << o.weight_decay << ", session=" << repr(o.session)
            << ")";
        return out.str();
      });
  def_enum(c, "optimizer", &TrainOptions::optimizer, "Optimizer.SGD or ADAMW (or 'sgd', 'adamw').");
}

}  // namespace

void bind_options(py::module_& m) {
  bind_enum<Device>(m, "Device", "Where a session runs.", {{"CPU", Device::kCpu}, {"CUDA", Device::kCuda}},
                    device_name);
  bind_enum<Policy>(m, "Policy", "How the optimizer plans the convolutions (μ-cuDNN's policies).",
                    {{"UNDIVIDED", Policy::kUndivided}, {"WR", Policy::kWr}, {"WD", Policy::kWd}}, policy_name);
  bind_enum<BatchSizes>(
      m, "BatchSizes", "Which micro-batch sizes the optimizer may cut a batch into.",
      {{"POWER_OF_TWO", BatchSizes::kPowerOfTwo}, {"ALL", BatchSizes::kAll}, {"UNDIVIDED", BatchSizes::kUndivided}},
      batch_sizes_name);
  bind_enum<Layout>(m, "Layout", "How 4-D activations are stored.",
                    {{"AUTO", Layout::kAuto}, {"NCHW", Layout::kNchw}, {"NHWC", Layout::kNhwc}}, layout_name);
  bind_enum<Math>(m, "Math", "The GPU's float32 arithmetic.", {{"TF32", Math::kTf32}, {"FP32", Math::kFp32}},
                  math_name);
  bind_enum<CudaGraph>(m, "CudaGraph", "Whether a CUDA session replays its run as a CUDA graph.",
                       {{"AUTO", CudaGraph::kAuto}, {"ON", CudaGraph::kOn}, {"OFF", CudaGraph::kOff}}, cuda_graph_name);
  bind_enum<Optimizer>(m, "Optimizer", "A Trainer's optimizer.",
                       {{"SGD", Optimizer::kSgd}, {"ADAMW", Optimizer::kAdamW}}, optimizer_name);
  bind_session_options(m);
  bind_train_options(m);
}

}  // namespace ucudnn::python
