// Arena planning: give every activation buffer an offset in one arena so that
// buffers alive at the same time never overlap, keeping the arena small.
//
// Greedy by size (the TFLite / ONNX Runtime approach): place buffers largest
// first, each at the lowest offset where it does not overlap any already-placed
// buffer whose lifetime intersects its own. Lifetimes are inclusive step ranges.
// Pure function over plain data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ucudnn::optimizer {

struct BufferRequest {
  size_t bytes = 0;
  int32_t first_step = 0;  // step that writes it (or 0 for graph inputs)
  int32_t last_step = 0;   // last step that reads it (inclusive)
};

struct ArenaLayout {
  std::vector<size_t> offsets;  // one per request
  size_t arena_bytes = 0;       // size of the arena needed
  size_t unplanned_bytes = 0;   // Σ bytes: what one buffer per tensor would need
};

// Offsets are multiples of `alignment` (a power of two). Sums saturate: a layout that does not fit
// in size_t has arena_bytes (and unplanned_bytes) SIZE_MAX, which no memory holds and the
// executor refuses, never a wrapped-around size with overlapping offsets.
ArenaLayout plan_arena(const std::vector<BufferRequest>& requests, size_t alignment = 64);

}  // namespace ucudnn::optimizer
