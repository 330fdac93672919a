// Parameter rules shared by the data-movement descriptors and their kernels:
// Slice's start/step per axis (ONNX clamping rules) and Pad's begin/end per axis.
// Both the shape rule (at import) and the kernels (at run time) call these, so
// the two can never disagree. Errors are InvalidModel without a node prefix;
// callers add it.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/shape.h"
#include "runtime/core/status.h"

namespace ucudnn {

// A slice of every axis of the input: output dim d reads input index
// start[d] + i * step[d] for i in [0, out_shape[d]).
struct SliceParams {
  Shape out_shape;
  std::vector<int64_t> start, step;
};

// Slice (opset 13) semantics: `axes` empty means 0..starts.size()-1, `steps`
// empty means all 1. Negative starts/ends count from the end; then starts and
// ends are clamped to [0, dim] (step > 0) or [-1, dim-1] (step < 0, start to
// [0, dim-1]). Fails on length mismatches, step 0, bad or repeated axes.
Expected<SliceParams> resolve_slice(const Shape& in, const std::vector<int64_t>& starts,
                                    const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                                    const std::vector<int64_t>& steps);

// Pad (opset 18) semantics: `pads` holds begins then ends for `axes` (empty:
// every axis). Pads may be negative (crop); a resulting dim below 0 fails.
// Returns begin and end pad for every axis of `in`.
struct PadParams {
  Shape out_shape;
  std::vector<int64_t> begin, end;
};
Expected<PadParams> resolve_pads(const Shape& in, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes);

}  // namespace ucudnn
