// Forward convolutions through cuDNN's graph API: descriptors, the engine list, plans (see cudnn_graph.h).
//
// Note [graph tensor alignment]: each tensor declares CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, the
// alignment every pointer later given for it keeps, and engines may use vector loads up to it. W is
// a whole tensor (the arena and cudaMalloc align far beyond 16 bytes): 16. X and Y of a micro-batch
// start `first sample` samples into the batch's tensor, so they are only as aligned as one sample's
// bytes: the largest power of two dividing them, at most 16 (4 for a sample of an odd number of
// floats). run() refuses a pointer less aligned than declared rather than let an engine fault.
//
// Note [graph engine filter]: which heuristics results become algorithms. Out always: engines whose
// numerical notes say DOWN_CONVERT_INPUTS or REDUCED_PRECISION_REDUCTION (below float32 precision,
// which the legacy algorithms never go; PyTorch drops them too), and engines whose behaviour note
// says RUNTIME_COMPILATION (NVRTC would compile at every prepare, seconds each). With
// MathMode::kFp32 also the TENSOR_CORE ones: float32 data on tensor cores is TF32, what the legacy
// path's CUDNN_FMA_MATH forbids (Note [conv math type] in conv.cc) and PyTorch's allow_tf32 = False
// filters the same way.
#include "runtime/cuda/cudnn_graph.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>

namespace ucudnn::cuda {

namespace {

constexpr int64_t kXId = 'x', kWId = 'w', kYId = 'y';  // the tensors' unique ids
constexpr int kMaxRank = 8;

Status set(const BackendDescriptor& d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
           int64_t count, const void* values, const std::string& context) {
  UCUDNN_CUDNN_CHECK(cudnnBackendSetAttribute(d.get(), name, type, count, values),
                     context + ", attribute " + std::to_string(static_cast<int>(name)));
  return Status::ok();
}

Status set_descriptor(const BackendDescriptor& d, cudnnBackendAttributeName_t name, const BackendDescriptor& value,
                      const std::string& context) {
  const cudnnBackendDescriptor_t handle = value.get();
  return set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &handle, context);
}

Status set_ints(const BackendDescriptor& d, cudnnBackendAttributeName_t name, const std::vector<int64_t>& values,
                const std::string& context) {
  return set(d, name, CUDNN_TYPE_INT64, static_cast<int64_t>(values.size()), values.data(), context);
}

Status finalize(const BackendDescriptor& d, const char* what, const std::string& context) {
  UCUDNN_CUDNN_CHECK(cudnnBackendFinalize(d.get()), context + ", finalizing the " + what);
  return Status::ok();
}

bool is_not_supported(cudnnStatus_t status) {
  return CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_NOT_SUPPORTED;
}

// Row-major strides of `dims`.
std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

// Strides of [K, C, spatial...] stored channels-last (K, spatial..., C).
std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  int64_t step = dims[1];
  for (size_t i = dims.size() - 1; i >= 2; --i) {
    strides[i] = step;
    step *= dims[i];
  }
  strides[0] = step;
  return strides;
}

// Note [graph tensor alignment]: what a pointer `sample_elements` floats into an aligned buffer keeps.
int64_t sample_alignment(int64_t sample_elements) {
  const int64_t bytes = sample_elements * static_cast<int64_t>(sizeof(float));
  return std::min<int64_t>(16, bytes & -bytes);
}

Status read_tensor(const TensorDescriptor& desc, std::vector<int64_t>* dims, std::vector<int64_t>* strides,
                   const std::string& context) {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int rank = 0;
  std::array<int, kMaxRank> d{}, s{};
  UCUDNN_CUDNN_CHECK(cudnnGetTensorNdDescriptor(desc.get(), kMaxRank, &type, &rank, d.data(), s.data()), context);
  if (type != CUDNN_DATA_FLOAT || rank < 3 || rank > kMaxRank)
    return unsupported(context + ": the graph API path takes float32 tensors of 3 to 8 dims");
  dims->assign(d.begin(), d.begin() + rank);
  strides->assign(s.begin(), s.begin() + rank);
  return Status::ok();
}

Expected<BackendDescriptor> make_tensor(int64_t id, const std::vector<int64_t>& dims,
                                        const std::vector<int64_t>& strides, int64_t alignment,
                                        const std::string& context) {
  const std::string what = context + ", tensor '" + static_cast<char>(id) + "'";
  UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor t, BackendDescriptor::create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what));
  const cudnnDataType_t type = CUDNN_DATA_FLOAT;
  UCUDNN_RETURN_IF_ERROR(set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, what));
  UCUDNN_RETURN_IF_ERROR(set_ints(t, CUDNN_ATTR_TENSOR_DIMENSIONS, dims, what));
  UCUDNN_RETURN_IF_ERROR(set_ints(t, CUDNN_ATTR_TENSOR_STRIDES, strides, what));
  UCUDNN_RETURN_IF_ERROR(set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id, what));
  UCUDNN_RETURN_IF_ERROR(set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, what));
  UCUDNN_RETURN_IF_ERROR(finalize(t, "tensor", what));
  return t;
}

// Stage 2: appends X, W, Y, the convolution, the operation and (last) the operation graph to *parts.
Status build_operation_graph(CudaContext& ctx, const GraphConvProblem& p, const std::string& context,
                             std::vector<BackendDescriptor>* parts) {
  UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor x, make_tensor(kXId, p.x_dims, p.x_strides, p.x_alignment, context));
  UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor w, make_tensor(kWId, p.w_dims, p.w_strides, p.w_alignment, context));
  UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor y, make_tensor(kYId, p.y_dims, p.y_strides, p.y_alignment, context));

  const std::string conv_context = context + ", convolution descriptor";
  UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor conv,
                          BackendDescriptor::create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, conv_context));
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t spatial = static_cast<int64_t>(p.pads.size());
  UCUDNN_RETURN_IF_ERROR(set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, conv_context));
  UCUDNN_RETURN_IF_ERROR(
      set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, conv_context));
  UCUDNN_RETURN_IF_ERROR(set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial, conv_context));
  UCUDNN_RETURN_IF_ERROR(set_ints(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, p.pads, conv_context));
  UCUDNN_RETURN_IF_ERROR(set_ints(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, p.pads, conv_context));
  UCUDNN_RETURN_IF_ERROR(set_ints(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, p.strides, conv_context));
  UCUDNN_RETURN_IF_ERROR(set_ints(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, p.dilations, conv_context));
  UCUDNN_RETURN_IF_ERROR(finalize(conv, "convolution descriptor", conv_context));

  const std::string op_context = context + ", convolution-forward operation";
  UCUDNN_ASSIGN_OR_RETURN(
      BackendDescriptor op,
      BackendDescriptor::create(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, op_context));
  const float alpha = 1.0f, beta = 0.0f;
  UCUDNN_RETURN_IF_ERROR(set_descriptor(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x, op_context));
  UCUDNN_RETURN_IF_ERROR(set_descriptor(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w, op_context));
  UCUDNN_RETURN_IF_ERROR(set_descriptor(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y, op_context));
  UCUDNN_RETURN_IF_ERROR(set_descriptor(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv, op_context));
  UCUDNN_RETURN_IF_ERROR(set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha,
                             op_context));
  UCUDNN_RETURN_IF_ERROR(set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta,
                             op_context));
  UCUDNN_RETURN_IF_ERROR(finalize(op, "convolution-forward operation", op_context));

  const std::string graph_context = context + ", operation graph";
  UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor graph,
                          BackendDescriptor::create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, graph_context));
  const cudnnHandle_t handle = ctx.cudnn();
  const cudnnBackendDescriptor_t ops = op.get();
  UCUDNN_RETURN_IF_ERROR(set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, graph_context));
  UCUDNN_RETURN_IF_ERROR(
      set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ops, graph_context));
  UCUDNN_RETURN_IF_ERROR(finalize(graph, "operation graph", graph_context));

  for (BackendDescriptor* d : {&x, &w, &y, &conv, &op, &graph}) parts->push_back(std::move(*d));
  return Status::ok();
}

// Stage 4's engine configuration of `config` on `graph`; appends the engine, its knob choices and
// (last) the engine configuration to *parts.
Status build_engine_config(cudnnBackendDescriptor_t graph, const GraphEngineConfig& config,
                           const std::string& context, std::vector<BackendDescriptor>* parts) {
  const std::string what = context + ", " + config.name();
  UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor engine, BackendDescriptor::create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, what));
  UCUDNN_RETURN_IF_ERROR(
      set(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph, what));
  UCUDNN_RETURN_IF_ERROR(set(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &config.engine, what));
  UCUDNN_RETURN_IF_ERROR(finalize(engine, "engine", what));

  std::vector<BackendDescriptor> knobs;
  std::vector<cudnnBackendDescriptor_t> knob_handles;
  for (const auto& [type, value] : config.knobs) {
    UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor knob,
                            BackendDescriptor::create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, what));
    const auto knob_type = static_cast<cudnnBackendKnobType_t>(type);
    UCUDNN_RETURN_IF_ERROR(set(knob, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &knob_type, what));
    UCUDNN_RETURN_IF_ERROR(set(knob, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value, what));
    UCUDNN_RETURN_IF_ERROR(finalize(knob, "knob choice", what));
    knob_handles.push_back(knob.get());
    knobs.push_back(std::move(knob));
  }

  UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor cfg, BackendDescriptor::create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, what));
  UCUDNN_RETURN_IF_ERROR(set_descriptor(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, engine, what));
  if (!knob_handles.empty())
    UCUDNN_RETURN_IF_ERROR(set(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                               static_cast<int64_t>(knob_handles.size()), knob_handles.data(), what));
  UCUDNN_RETURN_IF_ERROR(finalize(cfg, "engine configuration", what));

  parts->push_back(std::move(engine));
  for (BackendDescriptor& knob : knobs) parts->push_back(std::move(knob));
  parts->push_back(std::move(cfg));
  return Status::ok();
}

// Stage 3's heuristics of one mode: the engine configurations in cuDNN's order (none when the
// mode does not support this graph).
Expected<std::vector<BackendDescriptor>> heuristic_configs(const BackendDescriptor& graph,
                                                           cudnnBackendHeurMode_t mode, const std::string& context) {
  const std::string what = context + ", heuristics mode " + std::to_string(static_cast<int>(mode));
  UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor heur, BackendDescriptor::create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, what));
  UCUDNN_RETURN_IF_ERROR(set_descriptor(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, what));
  UCUDNN_RETURN_IF_ERROR(set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, what));
  std::vector<BackendDescriptor> configs;
  const cudnnStatus_t finalized = cudnnBackendFinalize(heur.get());
  if (is_not_supported(finalized)) return configs;
  if (finalized != CUDNN_STATUS_SUCCESS) return cudnn_error(finalized, "cudnnBackendFinalize", what);
  int64_t count = 0;
  UCUDNN_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
                     what + ", counting the results");
  std::vector<cudnnBackendDescriptor_t> handles;
  for (int64_t i = 0; i < count; ++i) {
    UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor cfg, BackendDescriptor::create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, what));
    handles.push_back(cfg.get());
    configs.push_back(std::move(cfg));
  }
  int64_t returned = 0;
  if (count > 0)
    UCUDNN_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, handles.data()),
                       what + ", reading the results");
  configs.resize(static_cast<size_t>(std::clamp<int64_t>(returned, 0, count)));
  return configs;
}

// What heuristics' configuration `cfg` is, or nullopt when Note [graph engine filter] leaves it out.
Expected<std::optional<GraphEngineConfig>> read_config(const BackendDescriptor& cfg, MathMode math,
                                                       const std::string& context) {
  const std::string what = context + ", reading a heuristics result";
  UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor engine, BackendDescriptor::create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, what));
  cudnnBackendDescriptor_t engine_handle = engine.get();
  int64_t n = 0;
  UCUDNN_CUDNN_CHECK(cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                              1, &n, &engine_handle),
                     what);
  GraphEngineConfig config;
  UCUDNN_CUDNN_CHECK(cudnnBackendGetAttribute(engine_handle, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                              &config.engine),
                     what + " (global index)");

  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> numerical{};
  int64_t numerical_count = 0;
  UCUDNN_CUDNN_CHECK(cudnnBackendGetAttribute(engine_handle, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                              CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT,
                                              &numerical_count, numerical.data()),
                     what + " (numerical notes)");
  for (int64_t i = 0; i < std::min<int64_t>(numerical_count, CUDNN_NUMERICAL_NOTE_TYPE_COUNT); ++i) {
    const cudnnBackendNumericalNote_t note = numerical[static_cast<size_t>(i)];
    if (note == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS || note == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION ||
        (math == MathMode::kFp32 && note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE))
      return std::optional<GraphEngineConfig>();
  }
  std::array<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT> behavior{};
  int64_t behavior_count = 0;
  UCUDNN_CUDNN_CHECK(cudnnBackendGetAttribute(engine_handle, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                              CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &behavior_count, behavior.data()),
                     what + " (behaviour notes)");
  for (int64_t i = 0; i < std::min<int64_t>(behavior_count, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT); ++i)
    if (behavior[static_cast<size_t>(i)] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION)
      return std::optional<GraphEngineConfig>();

  std::vector<BackendDescriptor> knobs;
  std::vector<cudnnBackendDescriptor_t> knob_handles;
  for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
    UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor knob,
                            BackendDescriptor::create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, what));
    knob_handles.push_back(knob.get());
    knobs.push_back(std::move(knob));
  }
  int64_t knob_count = 0;
  UCUDNN_CUDNN_CHECK(cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS, &knob_count,
                                              knob_handles.data()),
                     what + " (knob choices)");
  for (int64_t i = 0; i < std::min<int64_t>(knob_count, CUDNN_KNOB_TYPE_COUNTS); ++i) {
    cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_COUNTS;
    int64_t value = 0;
    const cudnnBackendDescriptor_t knob = knob_handles[static_cast<size_t>(i)];
    UCUDNN_CUDNN_CHECK(cudnnBackendGetAttribute(knob, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &n,
                                                &type),
                       what + " (knob type)");
    UCUDNN_CUDNN_CHECK(
        cudnnBackendGetAttribute(knob, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &n, &value),
        what + " (knob value)");
    config.knobs.emplace_back(static_cast<int64_t>(type), value);
  }
  return std::optional<GraphEngineConfig>(std::move(config));
}

// Stage 3's result, as cached: the list, and why the first configuration left out of it was.
struct EngineList {
  std::vector<GraphEngineConfig> configs;
  std::string first_rejection;
};

Expected<EngineList> enumerate_engines(CudaContext& ctx, const GraphConvProblem& p, const std::string& context) {
  std::vector<BackendDescriptor> parts;
  UCUDNN_RETURN_IF_ERROR(build_operation_graph(ctx, p, context, &parts));
  const BackendDescriptor& graph = parts.back();
  EngineList list;
  for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    UCUDNN_ASSIGN_OR_RETURN(std::vector<BackendDescriptor> configs, heuristic_configs(graph, mode, context));
    for (const BackendDescriptor& cfg : configs) {
      if (list.configs.size() == static_cast<size_t>(kMaxGraphEngineConfigs)) return list;
      UCUDNN_ASSIGN_OR_RETURN(std::optional<GraphEngineConfig> config, read_config(cfg, p.math, context));
      if (!config || std::find(list.configs.begin(), list.configs.end(), *config) != list.configs.end()) continue;
      // Only what finalizes into a plan rebuilt from (engine, knobs) — exactly what prepare will build.
      auto plan = GraphConvPlan::create(ctx, p, *config, context);
      if (plan) {
        list.configs.push_back(std::move(*config));
      } else if (list.first_rejection.empty()) {
        list.first_rejection = plan.status().message();
      }
    }
  }
  return list;
}

// The engine list of `p` on ctx's device, computed once per process.
Expected<EngineList> engine_list(CudaContext& ctx, const GraphConvProblem& p, const std::string& context) {
  static std::mutex mutex;
  static std::map<std::string, EngineList> cache;
  const std::string key = "device=" + std::to_string(ctx.device()) + ";" + p.key();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  UCUDNN_ASSIGN_OR_RETURN(EngineList list, enumerate_engines(ctx, p, context));
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, std::move(list)).first->second;
}

std::string join(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

}  // namespace

bool graph_engines_enabled() {
  const char* value = std::getenv("UCUDNN_GRAPH_ENGINES");
  return value == nullptr || std::string_view(value) != "0";
}

BackendDescriptor::~BackendDescriptor() {
  if (handle_) cudnnBackendDestroyDescriptor(handle_);
}

BackendDescriptor& BackendDescriptor::operator=(BackendDescriptor&& other) noexcept {
  if (this != &other) {
    if (handle_) cudnnBackendDestroyDescriptor(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

Expected<BackendDescriptor> BackendDescriptor::create(cudnnBackendDescriptorType_t type, const std::string& context) {
  BackendDescriptor d;
  UCUDNN_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d.handle_),
                     context + ", descriptor type " + std::to_string(static_cast<int>(type)));
  return d;
}

std::string GraphConvProblem::key() const {
  std::ostringstream out;
  out << "x=" << join(x_dims) << "/" << join(x_strides) << "@" << x_alignment << ";w=" << join(w_dims) << "/"
      << join(w_strides) << "@" << w_alignment << ";y=" << join(y_dims) << "/" << join(y_strides) << "@"
      << y_alignment << ";pad=" << join(pads) << ";stride=" << join(strides) << ";dil=" << join(dilations)
      << ";math=" << (math == MathMode::kTf32 ? "tf32" : "fp32");
  return out.str();
}

Expected<GraphConvProblem> graph_conv_problem(const TensorDescriptor& x, const FilterDescriptor& w,
                                              const ConvolutionDescriptor& conv, const TensorDescriptor& y,
                                              MathMode math, const std::string& context) {
  GraphConvProblem p;
  p.math = math;
  UCUDNN_RETURN_IF_ERROR(read_tensor(x, &p.x_dims, &p.x_strides, context));
  UCUDNN_RETURN_IF_ERROR(read_tensor(y, &p.y_dims, &p.y_strides, context));
  const size_t rank = p.x_dims.size();

  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  int w_rank = 0;
  std::array<int, kMaxRank> w_dims{};
  // The filter's and the convolution's getters are asked for exactly the ranks X implies (their
  // "expected" dimension; the convolution's may not exceed CUDNN_DIM_MAX - 2).
  UCUDNN_CUDNN_CHECK(cudnnGetFilterNdDescriptor(w.get(), static_cast<int>(rank), &type, &format, &w_rank,
                                                w_dims.data()),
                     context);
  if (type != CUDNN_DATA_FLOAT || static_cast<size_t>(w_rank) != rank || p.y_dims.size() != rank)
    return internal_error(context + ": X, W and Y of the legacy descriptors differ in rank or type");
  p.w_dims.assign(w_dims.begin(), w_dims.begin() + w_rank);
  p.w_strides = format == CUDNN_TENSOR_NHWC ? channels_last_strides(p.w_dims) : packed_strides(p.w_dims);

  int spatial = 0;
  std::array<int, kMaxRank> pads{}, strides{}, dilations{};
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  UCUDNN_CUDNN_CHECK(cudnnGetConvolutionNdDescriptor(conv.get(), static_cast<int>(rank) - 2, &spatial, pads.data(),
                                                     strides.data(), dilations.data(), &mode, &compute),
                     context);
  int groups = 1;
  UCUDNN_CUDNN_CHECK(cudnnGetConvolutionGroupCount(conv.get(), &groups), context);
  if (static_cast<size_t>(spatial) + 2 != rank || mode != CUDNN_CROSS_CORRELATION || compute != CUDNN_DATA_FLOAT ||
      p.w_dims[1] * groups != p.x_dims[1])
    return internal_error(context + ": the legacy convolution descriptor does not match X and W");
  p.pads.assign(pads.begin(), pads.begin() + spatial);
  p.strides.assign(strides.begin(), strides.begin() + spatial);
  p.dilations.assign(dilations.begin(), dilations.begin() + spatial);
  p.x_alignment = sample_alignment(p.x_strides[0]);
  p.y_alignment = sample_alignment(p.y_strides[0]);
  return p;
}

Expected<std::vector<GraphEngineConfig>> graph_engine_configs(CudaContext& ctx, const GraphConvProblem& problem,
                                                              const std::string& context) {
  UCUDNN_ASSIGN_OR_RETURN(EngineList list, engine_list(ctx, problem, context));
  return list.configs;
}

Expected<std::unique_ptr<GraphConvPlan>> GraphConvPlan::create(CudaContext& ctx, const GraphConvProblem& problem,
                                                               const GraphEngineConfig& config,
                                                               const std::string& context) {
  std::unique_ptr<GraphConvPlan> plan(new GraphConvPlan());
  plan->config_ = config;
  plan->problem_ = problem;
  plan->context_ = context + ", cuDNN graph " + config.name();
  UCUDNN_RETURN_IF_ERROR(build_operation_graph(ctx, problem, context, &plan->parts_));
  const cudnnBackendDescriptor_t graph = plan->parts_.back().get();  // owned by parts_, which only grows
  UCUDNN_RETURN_IF_ERROR(build_engine_config(graph, config, context, &plan->parts_));
  const BackendDescriptor& cfg = plan->parts_.back();

  const std::string what = plan->context_ + ", execution plan";
  UCUDNN_ASSIGN_OR_RETURN(plan->plan_, BackendDescriptor::create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, what));
  const cudnnHandle_t handle = ctx.cudnn();
  UCUDNN_RETURN_IF_ERROR(set(plan->plan_, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, what));
  UCUDNN_RETURN_IF_ERROR(set_descriptor(plan->plan_, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg, what));
  UCUDNN_RETURN_IF_ERROR(finalize(plan->plan_, "execution plan", what));
  int64_t workspace = 0, n = 0;
  UCUDNN_CUDNN_CHECK(cudnnBackendGetAttribute(plan->plan_.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                              CUDNN_TYPE_INT64, 1, &n, &workspace),
                     what + " (workspace size)");
  if (workspace < 0) return internal_error(what + ": cuDNN reports a negative workspace size");
  plan->workspace_bytes_ = static_cast<size_t>(workspace);
  return plan;
}

GraphConvPlan::~GraphConvPlan() {
  plan_ = BackendDescriptor();
  while (!parts_.empty()) parts_.pop_back();
}

Status GraphConvPlan::run(CudaContext& ctx, const void* x, const void* w, void* y, void* workspace,
                          size_t workspace_available) const {
  if (workspace_bytes_ > 0 && (workspace == nullptr || workspace_available < workspace_bytes_))
    return invalid_argument(context_ + ": needs " + std::to_string(workspace_bytes_) + " workspace bytes, got " +
                            std::to_string(workspace == nullptr ? 0 : workspace_available));
  const std::pair<const void*, int64_t> tensors[] = {{x, problem_.x_alignment}, {w, problem_.w_alignment},
                                                     {y, problem_.y_alignment}};
  for (const auto& [pointer, alignment] : tensors)
    if (reinterpret_cast<uintptr_t>(pointer) % static_cast<uintptr_t>(alignment) != 0)
      return invalid_argument(context_ + ": a tensor pointer is not " + std::to_string(alignment) +
                              "-byte aligned as declared (Note [graph tensor alignment])");
  const std::string what = context_ + ", variant pack";
  UCUDNN_ASSIGN_OR_RETURN(BackendDescriptor pack,
                          BackendDescriptor::create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, what));
  const int64_t ids[] = {kXId, kWId, kYId};
  void* pointers[] = {const_cast<void*>(x), const_cast<void*>(w), y};
  UCUDNN_RETURN_IF_ERROR(set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, ids, what));
  UCUDNN_RETURN_IF_ERROR(set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers, what));
  UCUDNN_RETURN_IF_ERROR(set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, what));
  UCUDNN_RETURN_IF_ERROR(finalize(pack, "variant pack", what));
  UCUDNN_CUDNN_CHECK(cudnnBackendExecute(ctx.cudnn(), plan_.get(), pack.get()), context_);
  return Status::ok();
}

Expected<std::unique_ptr<GraphConvPlan>> prepare_graph_conv(CudaContext& ctx, const TensorDescriptor& x,
                                                            const FilterDescriptor& w,
                                                            const ConvolutionDescriptor& conv,
                                                            const TensorDescriptor& y, int position,
                                                            const std::string& context) {
  if (!graph_engines_enabled())
    return unsupported(context + ": cuDNN graph-API engine configurations are turned off (UCUDNN_GRAPH_ENGINES=0)");
  if (position < 0 || position >= kMaxGraphEngineConfigs)
    return invalid_argument(context + ": no graph-API engine position " + std::to_string(position));
  UCUDNN_ASSIGN_OR_RETURN(GraphConvProblem problem, graph_conv_problem(x, w, conv, y, ctx.math(), context));
  UCUDNN_ASSIGN_OR_RETURN(EngineList list, engine_list(ctx, problem, context));
  if (static_cast<size_t>(position) >= list.configs.size())
    return unsupported(context + ": cuDNN's graph API offers " + std::to_string(list.configs.size()) +
                       " engine configurations for this convolution, none at position " + std::to_string(position) +
                       (list.first_rejection.empty() ? "" : " (first rejected: " + list.first_rejection + ")"));
  return GraphConvPlan::create(ctx, problem, list.configs[static_cast<size_t>(position)], context);
}

}  // namespace ucudnn::cuda
