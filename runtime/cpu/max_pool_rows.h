// Vectorised rows of the NCHW max pool, forward (runtime/cpu/pooling.cc) and backward
// (runtime/cpu/pooling_grad.cc): one output row's windows that lie inside the input's columns, run
// as a loop over the output columns for each tap, so the compiler vectorises it and no comparison
// branches (random data made the scalar window loop mispredict about every third tap: ResNet-18's
// stem MaxPool took 160 ms at batch 32 on 2 threads). The edge windows stay with the callers' scalar
// loops.
//
// Note [max pool rows keep the window order]: each output's taps are still visited in row-major
// window order with the same predicate (take v when v > best or v is NaN, starting from the first tap
// inside the input, or from -inf in the forward), so the forward's value and the backward's chosen tap
// are exactly the scalar loop's: the first maximum in window order, the last NaN of a window holding one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace ucudnn::cpu {

// The taps of one window axis inside the input: tap k (position start + k·dilation) for
// first <= k < first + count.
struct TapsInside {
  int64_t first = 0, count = 0;
};

inline TapsInside taps_inside(int64_t start, int64_t kernel, int64_t dilation, int64_t in) {
  const int64_t first = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  if (start + (kernel - 1) * dilation < 0 || start >= in) return {first, 0};
  const int64_t last = std::min(kernel - 1, (in - 1 - start) / dilation);  // start <= in - 1 here
  return {first, last >= first ? last - first + 1 : 0};
}

// The output columns [first, last) whose windows lie wholly inside the input's columns (a window's
// first position is o·stride − pad_begin).
struct InteriorColumns {
  int64_t first = 0, last = 0;
};

inline InteriorColumns interior_columns(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                                        int64_t pad_begin) {
  const int64_t first = std::min(out, (pad_begin + stride - 1) / stride);
  const int64_t limit = in - 1 - (kernel - 1) * dilation + pad_begin;  // o·stride <= limit
  const int64_t last = limit < 0 ? 0 : std::min(out, limit / stride + 1);
  return {first, std::max(first, last)};
}

// One output row's interior windows: the input rows inside X that the row's windows read
// (plane + (first_row + r·row_step)·in_w, r < rows) and the columns (tap kw of output column o at
// o·stride_w + kw·dilation_w − pad_left, for o in [first, last)).
struct MaxPoolRow {
  const float* plane;
  int64_t in_w, first_row, rows, row_step;
  int64_t kernel_w, stride_w, dilation_w, pad_left;
  int64_t first, last;
};

namespace max_pool_rows_detail {

template <int kStride>
void max_row(const MaxPoolRow& r, float* dst) {
  const int64_t stride = kStride > 0 ? kStride : r.stride_w;
  for (int64_t o = r.first; o < r.last; ++o) dst[o] = -std::numeric_limits<float>::infinity();
  for (int64_t k = 0; k < r.rows; ++k) {
    const int64_t row = (r.first_row + k * r.row_step) * r.in_w - r.pad_left;
    for (int64_t kw = 0; kw < r.kernel_w; ++kw) {
      const int64_t offset = row + kw * r.dilation_w;  // may be negative: o·stride makes up for it
#pragma omp simd
      for (int64_t o = r.first; o < r.last; ++o) {
        const float v = r.plane[offset + o * stride], best = dst[o];
        dst[o] = v > best || v != v ? v : best;
      }
    }
  }
}

template <int kStride>
void argmax_row(const MaxPoolRow& r, int64_t first, int64_t last, float* best, int32_t* at) {
  const int64_t stride = kStride > 0 ? kStride : r.stride_w;
  for (int64_t k = 0; k < r.rows; ++k) {
    const int64_t row = (r.first_row + k * r.row_step) * r.in_w - r.pad_left;
    for (int64_t kw = 0; kw < r.kernel_w; ++kw) {
      const int64_t offset = row + kw * r.dilation_w;  // may be negative: o·stride makes up for it
      if (k == 0 && kw == 0) {
#pragma omp simd
        for (int64_t o = first; o < last; ++o) {
          best[o - first] = r.plane[offset + o * stride];
          at[o - first] = static_cast<int32_t>(offset + o * stride);
        }
        continue;
      }
#pragma omp simd
      for (int64_t o = first; o < last; ++o) {
        const float v = r.plane[offset + o * stride], b = best[o - first];
        const bool take = v > b || v != v;
        best[o - first] = take ? v : b;
        at[o - first] = take ? static_cast<int32_t>(offset + o * stride) : at[o - first];
      }
    }
  }
}

}  // namespace max_pool_rows_detail

// dst[o] for o in [r.first, r.last): the max of output column o's window (see the Note). Taps inside
// the input only; no rows (r.rows = 0) gives -inf.
inline void max_pool_row(const MaxPoolRow& r, float* dst) {
  if (r.stride_w == 1) max_pool_rows_detail::max_row<1>(r, dst);
  else if (r.stride_w == 2) max_pool_rows_detail::max_row<2>(r, dst);
  else max_pool_rows_detail::max_row<0>(r, dst);
}

// For o in [first, last) (inside [r.first, r.last), r.rows > 0): at[o − first] = the chosen tap's
// offset in the plane (ih·in_w + iw) and best[o − first] its value. The plane holds fewer than 2^31
// values (the caller checks).
inline void max_pool_row_argmax(const MaxPoolRow& r, int64_t first, int64_t last, float* best, int32_t* at) {
  if (r.stride_w == 1) max_pool_rows_detail::argmax_row<1>(r, first, last, best, at);
  else if (r.stride_w == 2) max_pool_rows_detail::argmax_row<2>(r, first, last, best, at);
  else max_pool_rows_detail::argmax_row<0>(r, first, last, best, at);
}

}  // namespace ucudnn::cpu
