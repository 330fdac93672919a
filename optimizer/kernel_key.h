// ConvKernelKey: everything that determines a convolution kernel's timings.
//
// A "kernel" in the optimizer is one convolution call in one direction at one
// shape, on one device with one cuDNN. The key holds the device identity, the
// data type, math type, layout, every convolution parameter and the direction.
// Its canonical string (to_string) is the benchmark database's key, so two keys
// are equal exactly when their strings are equal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/ir/op_list.h"

namespace ucudnn::optimizer {

enum class ConvDirection { kForward, kBackwardData, kBackwardFilter };

// "fwd", "bwd_data", "bwd_filter".
const char* conv_direction_name(ConvDirection direction);
// Inverse of conv_direction_name; also accepts the probe CSVs' "bwdd" / "bwdf".
std::optional<ConvDirection> parse_conv_direction(std::string_view name);

struct ConvKernelKey {
  // Device part.
  std::string device_name;    // e.g. "NVIDIA H200" or the CPU model
  int sm_count = 0;           // 0 on the CPU
  int cuda_version = 0;       // e.g. 13000; 0 on the CPU
  int cudnn_version = 0;      // e.g. 91900; 0 on the CPU
  int driver_version = 0;     // e.g. 13000; 0 on the CPU
  // Numerics and memory layout.
  std::string dtype = "float32";
  std::string math_type = "default";  // cuDNN math type: "default", "tensor_op", "fma", ...
  std::string layout = "nchw";        // "nchw" or "nhwc"
  // Convolution parameters (N is the mini-batch; micro-batches live in the DB rows): the
  // forward convolution's in every direction, so a layer's three kernels differ only in `direction`.
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t k = 0, r = 0, s = 0;         // filter: output channels, height, width
  int64_t pad_h = 0, pad_w = 0;           // top, left
  int64_t pad_h_end = -1, pad_w_end = -1;  // bottom, right; -1 = equal to top, left (symmetric)
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
  ConvDirection direction = ConvDirection::kForward;

  // Canonical, stable text form; the benchmark database key. Example:
  // "dev=NVIDIA H200;sm=132;cuda=13000;cudnn=91900;drv=13000;dtype=float32;math=default;
  //  layout=nchw;n=256;c=3;h=224;w=224;k=64;r=11;s=11;pad=2,2;stride=4,4;dil=1,1;g=1;dir=fwd"
  std::string to_string() const;

  friend bool operator==(const ConvKernelKey&, const ConvKernelKey&) = default;
};

// Inverse of ConvKernelKey::to_string: nullopt when `text` is not a key it could
// have written (a field missing, out of order or malformed, an unknown layout or
// direction). The benchmark database checks every stored key with it.
std::optional<ConvKernelKey> parse_kernel_key(std::string_view text);

// cuDNN 9's algorithm counts (CUDNN_CONVOLUTION_{FWD,BWD_DATA,BWD_FILTER}_ALGO_COUNT;
// bench/cudnn_benchmarker.cc asserts they match the cuDNN it is built with).
inline constexpr int kCudnnForwardAlgorithms = 8;
inline constexpr int kCudnnBackwardDataAlgorithms = 6;
inline constexpr int kCudnnBackwardFilterAlgorithms = 7;
// The GPU's forward algorithms are cuDNN's, then ucudnn's own depthwise convolution
// "UCUDNN_DEPTHWISE" (runtime/cuda/depthwise_conv.h; bench/cudnn_benchmarker.cc asserts the ids agree).
inline constexpr int kUcudnnDepthwiseAlgorithm = kCudnnForwardAlgorithms;
inline constexpr int kGpuForwardAlgorithms = kUcudnnDepthwiseAlgorithm + 1;
// Then, from id kGraphEngineBase, up to kMaxGraphEngineConfigs cuDNN graph-API engine configurations,
// each named by its position in cuDNN's heuristics list for the call (runtime/cuda/cudnn_graph.h, Note
// [graph engine ids]); the ids between are never available. A GPU's forward ids: 0 .. kGpuForwardAlgorithmIds - 1.
inline constexpr int kGraphEngineBase = 16;
inline constexpr int kMaxGraphEngineConfigs = 8;
inline constexpr int kGpuForwardAlgorithmIds = kGraphEngineBase + kMaxGraphEngineConfigs;

// The op computing `direction`: Conv, ConvGradData, ConvGradFilter.
OpKind conv_direction_op(ConvDirection direction);
// algorithm_count, max_algorithm_count: optimizer/bench/benchmark_db.h (they ask the CPU backend).

struct ConvKernelKeyHash {
  size_t operator()(const ConvKernelKey& key) const;
};

}  // namespace ucudnn::optimizer

template <>
struct std::hash<ucudnn::optimizer::ConvKernelKey> {
  size_t operator()(const ucudnn::optimizer::ConvKernelKey& key) const {
    return ucudnn::optimizer::ConvKernelKeyHash{}(key);
  }
};
