// Byte sizes: overflow-checked arithmetic on sizes and counts, and byte sizes for
// people (formatting "64.0 MiB", parsing "64MiB").
//
// Every size computed from something outside (a model's shapes, a plan, a flag)
// goes through the checked functions here: they answer false (or saturate)
// instead of wrapping, so the caller can refuse with a message naming the sizes.
#pragma once

#include <cstddef>
#include <cstdint>
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
// a * b, or false when the product does not fit in size_t.
inline bool checked_mul(size_t a, size_t b, size_t* product) { return !__builtin_mul_overflow(a, b, product); }
// The same for int64 (dims, element counts, offsets): false when the result leaves int64.
inline bool checked_add(int64_t a, int64_t b, int64_t* sum) { return !__builtin_add_overflow(a, b, sum); }
inline bool checked_sub(int64_t a, int64_t b, int64_t* difference) {
  return !__builtin_sub_overflow(a, b, difference);
}
inline bool checked_mul(int64_t a, int64_t b, int64_t* product) { return !__builtin_mul_overflow(a, b, product); }
// align_up, or false when the rounded size does not fit in size_t.
inline bool checked_align_up(size_t bytes, size_t alignment, size_t* aligned) {
  if (!checked_add(bytes, alignment - 1, aligned)) return false;
  *aligned &= ~(alignment - 1);
  return true;
}

// Saturating forms, SIZE_MAX on overflow: for totals that are only compared against a
// limit (SIZE_MAX never fits one), such as workspace queries that return a plain size_t.
inline size_t saturating_add(size_t a, size_t b) {
  size_t sum = 0;
  return checked_add(a, b, &sum) ? sum : SIZE_MAX;
}
inline size_t saturating_mul(size_t a, size_t b) {
  size_t product = 0;
  return checked_mul(a, b, &product) ? product : SIZE_MAX;
}
// INT64_MAX on overflow, for non-negative int64 counts (FLOPs) that are only reported.
inline int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t product = 0;
  return checked_mul(a, b, &product) ? product : INT64_MAX;
}

// "512 B", "1.5 KiB", "64.0 MiB", "1.2 GiB"; SIZE_MAX is "unlimited".
std::string format_bytes(size_t bytes);
// Parses "64MiB", "512MB", "1GiB", "1048576", "unlimited" (→ SIZE_MAX) into bytes;
// InvalidArgument with examples otherwise.
Expected<size_t> parse_byte_size(const std::string& text);

}  // namespace ucudnn
