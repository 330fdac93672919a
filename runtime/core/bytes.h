// Byte sizes for people: formatting ("64.0 MiB") and parsing ("64MiB").
#pragma once

#include <cstddef>
#include <string>

#include "runtime/core/status.h"

namespace ucudnn {

// The alignment of every buffer the executor carves out of a larger one (weights,
// arena values, workspace slices): cudaMalloc's own, so sub-buffers keep it.
inline constexpr size_t kBufferAlignment = 256;

// `bytes` rounded up to a multiple of `alignment` (a power of two). Sizes that
// come from outside go through checked_add first.
inline constexpr size_t align_up(size_t bytes, size_t alignment = kBufferAlignment) {
  return (bytes + alignment - 1) & ~(alignment - 1);
}

// a + b, or false when the sum does not fit in size_t.
inline bool checked_add(size_t a, size_t b, size_t* sum) { return !__builtin_add_overflow(a, b, sum); }

// "512 B", "1.5 KiB", "64.0 MiB", "1.2 GiB"; SIZE_MAX is "unlimited".
std::string format_bytes(size_t bytes);
// Parses "64MiB", "512MB", "1GiB", "1048576", "unlimited" (→ SIZE_MAX) into bytes;
// InvalidArgument with examples otherwise.
Expected<size_t> parse_byte_size(const std::string& text);

}  // namespace ucudnn
