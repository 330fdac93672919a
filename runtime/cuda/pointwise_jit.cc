// Generated FusedPointwise kernels (Note [generated pointwise kernels], pointwise_jit.h): the source
// writer, NVRTC loaded with dlopen, the process-wide cache of loaded kernels and the disk cache of cubins.
#include "runtime/cuda/pointwise_jit.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>

#include "runtime/core/file_io.h"
#include "runtime/core/fnv1a.h"
#include "runtime/cuda/pointwise_jit_headers.h"

namespace ucudnn::cuda {

namespace {

// The NVRTC functions we call, from the library found at run time.
struct Nvrtc {
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
  std::string version;  // "13.0"
  std::string missing;  // why NVRTC is unusable; empty when loaded
};

template <typename F>
bool find_symbol(void* library, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(library, name));
  return *f != nullptr;
}

const Nvrtc& nvrtc() {
  static const Nvrtc loaded = [] {
    Nvrtc n;
    void* library = nullptr;
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so"})
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (library == nullptr) {
      n.missing = "NVRTC (libnvrtc.so.13) was not found on the library path";
      return n;
    }
    const bool all = find_symbol(library, "nvrtcCreateProgram", &n.create) &&
                     find_symbol(library, "nvrtcCompileProgram", &n.compile) &&
                     find_symbol(library, "nvrtcGetProgramLogSize", &n.log_size) &&
                     find_symbol(library, "nvrtcGetProgramLog", &n.log) &&
                     find_symbol(library, "nvrtcGetCUBINSize", &n.cubin_size) &&
                     find_symbol(library, "nvrtcGetCUBIN", &n.cubin) &&
                     find_symbol(library, "nvrtcDestroyProgram", &n.destroy) &&
                     find_symbol(library, "nvrtcGetErrorString", &n.error_string);
    decltype(&nvrtcVersion) version = nullptr;
    int major = 0, minor = 0;
    if (!all || !find_symbol(library, "nvrtcVersion", &version) || version(&major, &minor) != NVRTC_SUCCESS)
      n.missing = "the NVRTC library found lacks a function ucudnn calls";
    n.version = std::to_string(major) + "." + std::to_string(minor);
    return n;
  }();
  return loaded;
}

// A register of the generated run(): a leaf in reg[], an instruction's result in a local.
std::string register_name(const PointwiseParams& p, int r) {
  return r < p.leaves ? "reg[" + std::to_string(r) + "]" : "r" + std::to_string(r);
}

// Prints "sm_XY" for the current device, or the CUDA error.
Expected<std::string> current_arch() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return device_error("the current GPU's compute capability could not be read");
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

Expected<GeneratedPointwiseKernels> load_kernels(const std::vector<char>& cubin, const PointwiseKernelSet& set) {
  cudaLibrary_t library = nullptr;
  if (cudaError_t e = cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
      e != cudaSuccess) {
    (void)cudaGetLastError();  // not left for a later launch's check to find
    return device_error(std::string("loading a generated pointwise kernel: ") + cudaGetErrorString(e));
  }
  GeneratedPointwiseKernels kernels;  // the library stays loaded for the process: the cache holds its kernels
  kernels.index32 = set.index32;
  const std::pair<bool, const void**> wanted[] = {
      {set.general, &kernels.general}, {set.vector, &kernels.vector}, {set.concat, &kernels.concat}};
  const char* names[] = {"ucudnn_pointwise_general", "ucudnn_pointwise_vector", "ucudnn_pointwise_concat"};
  for (int k = 0; k < 3; ++k) {
    if (!wanted[k].first) continue;
    cudaKernel_t kernel = nullptr;
    if (cudaError_t e = cudaLibraryGetKernel(&kernel, library, names[k]); e != cudaSuccess) {
      (void)cudaGetLastError();
      return device_error(std::string("finding ") + names[k] + " in a generated library: " + cudaGetErrorString(e));
    }
    *wanted[k].second = reinterpret_cast<const void*>(kernel);
  }
  return kernels;
}

// FNV-1a of `text` (Note [legacy fnv1a basis]), as 16 hex digits.
std::string fnv1a_hex(const std::string& text) {
  const uint64_t hash = fnv1a(text, kLegacyFnv1aBasis);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

// What a generated source compiles to besides its own text: the built-in headers (the kernel bodies),
// so a cubin cached by another version of them is not taken.
const std::string& headers_digest() {
  static const std::string digest = [] {
    std::string all;
    for (int h = 0; h < kPointwiseJitHeaderCount; ++h) all += std::string(kPointwiseJitHeaders[h]) + '\0';
    return fnv1a_hex(all);
  }();
  return digest;
}

// The disk cache: <user_cache_dir>/kernels/pointwise-<hash of key>.bin holds the key, a NUL, then the cubin.
// A file whose key differs (a hash collision, another version) or whose cubin does not load is a miss.
std::string cache_path(const std::string& key) {
  return (std::filesystem::path(user_cache_dir()) / "kernels" / ("pointwise-" + fnv1a_hex(key) + ".bin")).string();
}

std::optional<std::vector<char>> read_cached(const std::string& key) {
  std::ifstream in(cache_path(key), std::ios::binary);
  if (!in) return std::nullopt;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() <= key.size() + 1 || bytes.compare(0, key.size(), key) != 0 || bytes[key.size()] != '\0')
    return std::nullopt;
  return std::vector<char>(bytes.begin() + static_cast<std::ptrdiff_t>(key.size()) + 1, bytes.end());
}

// Best effort: a cache that cannot be written only costs the next process a compile.
void write_cached(const std::string& key, const std::vector<char>& cubin) {
  const std::string path = cache_path(key);
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
  std::string bytes = key;
  bytes.push_back('\0');
  bytes.append(cubin.begin(), cubin.end());
  (void)write_file_atomically(path, bytes);
}

bool generation_enabled() {
  const char* flag = std::getenv("UCUDNN_POINTWISE_JIT");
  return flag == nullptr || std::string(flag) != "0";
}

}  // namespace

std::string generated_pointwise_source(const PointwiseParams& p, const PointwiseKernelSet& set) {
  std::ostringstream s;
  s << "typedef signed char int8_t;\ntypedef unsigned char uint8_t;\ntypedef int int32_t;\n"
       "typedef long long int64_t;\ntypedef unsigned long long uint64_t;\n"
       "#include \"runtime/cuda/fused_pointwise_device.cuh\"\n"
       "namespace ucudnn::cuda::device {\n"
       "struct Generated {\n"
       "  static constexpr int kLeaves = " << p.leaves << ";\n"
       "  __device__ static float run(const PointwiseParams& p, float* reg) {\n";
  for (int i = 0; i < p.count; ++i) {
    const int r = p.leaves + i;
    s << "    const float " << register_name(p, r) << " = ir::eval_pointwise(static_cast<ir::PointwiseOp>("
      << static_cast<int>(p.op[i]) << "), " << register_name(p, p.a[i]) << ", " << register_name(p, p.b[i])
      << ", p.p0[" << i << "], p.p1[" << i << "]);\n";
  }
  s << "    return " << register_name(p, p.leaves + p.count - 1) << ";\n  }\n};\n"
    << "}  // namespace ucudnn::cuda::device\n";
  const char* index = set.index32 ? "int32_t" : "int64_t";
  const char* entry = "extern \"C\" __global__ void ";
  const char* params = "(const __grid_constant__ ucudnn::cuda::PointwiseParams p, ";
  if (set.general)
    s << entry << "ucudnn_pointwise_general" << params << "float* __restrict__ dst, " << index << " n) {\n"
      << "  ucudnn::cuda::device::general_kernel<ucudnn::cuda::device::Generated>(p, dst, n);\n}\n";
  if (set.vector)
    s << entry << "ucudnn_pointwise_vector" << params << "float4* __restrict__ dst, " << index << " n4) {\n"
      << "  ucudnn::cuda::device::vector_kernel<ucudnn::cuda::device::Generated>(p, dst, n4);\n}\n";
  if (set.concat)
    s << entry << "ucudnn_pointwise_concat" << params << "float* __restrict__ dst) {\n"
      << "  ucudnn::cuda::device::concat_kernel<ucudnn::cuda::device::Generated>(p, dst);\n}\n";
  return s.str();
}

Expected<std::vector<char>> compile_pointwise_source(const std::string& source, const std::string& arch) {
  const Nvrtc& n = nvrtc();
  if (!n.missing.empty()) return unsupported(n.missing);
  nvrtcProgram program = nullptr;
  if (nvrtcResult r = n.create(&program, source.c_str(), "ucudnn_pointwise.cu", kPointwiseJitHeaderCount,
                               kPointwiseJitHeaders, kPointwiseJitHeaderNames);
      r != NVRTC_SUCCESS)
    return internal_error(std::string("nvrtcCreateProgram: ") + n.error_string(r));
  const std::string gpu = "--gpu-architecture=" + arch;
  // -default-device: the headers' unannotated constexpr helpers are device functions here.
  const char* options[] = {"--std=c++17", "-default-device", gpu.c_str()};
  const nvrtcResult compiled = n.compile(program, 3, options);
  Expected<std::vector<char>> result = std::vector<char>();
  if (compiled != NVRTC_SUCCESS) {
    size_t size = 0;
    n.log_size(program, &size);
    std::string log(size, '\0');
    if (size > 0) n.log(program, log.data());
    result = internal_error("NVRTC could not compile a generated pointwise kernel for " + arch + " (" +
                            n.error_string(compiled) + "):\n" + log);
  } else {
    size_t size = 0;
    n.cubin_size(program, &size);
    result->resize(size);
    n.cubin(program, result->data());
  }
  n.destroy(&program);
  return result;
}

GeneratedPointwiseKernels generated_pointwise_kernels(const PointwiseParams& params, const PointwiseKernelSet& set) {
  static std::mutex mutex;
  static std::map<std::string, GeneratedPointwiseKernels> cache;  // source + arch → kernels (null: failed)
  static bool reported = false;
  if (!generation_enabled()) return {};
  Expected<std::string> arch = current_arch();
  if (!arch) return {};
  const std::string source = generated_pointwise_source(params, set);
  const std::string key = *arch + " NVRTC " + nvrtc().version + " headers " + headers_digest() + "\n" + source;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Expected<GeneratedPointwiseKernels> kernels = unsupported("not in the disk cache");
  if (std::optional<std::vector<char>> cached = read_cached(key)) kernels = load_kernels(*cached, set);
  if (!kernels) {
    Expected<std::vector<char>> cubin = compile_pointwise_source(source, *arch);
    kernels = cubin ? load_kernels(*cubin, set) : Expected<GeneratedPointwiseKernels>(cubin.status());
    if (kernels) write_cached(key, *cubin);
  }
  if (!kernels && !reported) {
    std::fprintf(stderr, "ucudnn: note: fused pointwise kernels run interpreted (slower): %s\n",
                 kernels.status().message().c_str());
    reported = true;
  }
  return cache[key] = kernels ? *kernels : GeneratedPointwiseKernels{};
}

}  // namespace ucudnn::cuda
