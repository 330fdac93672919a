// DeviceBuffer: one cudaMalloc'd block, freed on destruction (move-only).
//
// The executor makes exactly three at load (weights, activation arena,
// workspace pool) and none while running. An allocation that does not fit
// fails with kOutOfMemory naming what was asked for, its size and the free and
// total device memory at that moment.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/core/bytes.h"
#include "runtime/core/status.h"

namespace ucudnn::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // `what` names the buffer in the error ("activation arena"). Zero bytes → an empty buffer.
  static Expected<DeviceBuffer> allocate(size_t bytes, const std::string& what);

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace ucudnn::cuda
