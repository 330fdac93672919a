// Element access the naive references share (elementwise_reference.cc, reduction_reference.cc): flat
// index <-> multi-dimensional index, any dtype's element as a double or an int64, broadcasting.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/tensor.h"

namespace ucudnn::reference {

using Index = std::vector<int64_t>;

// float16 and bfloat16 written out from their definitions, apart from runtime/core/half.h: the value
// of an encoding (half_value), `v` rounded to the nearest value of the type, ties to even, overflow to
// infinity (round_to_half), and the encoding of such a value (half_bits). `dtype` is kFloat16 or kBFloat16.
double half_value(DType dtype, uint16_t bits);
double round_to_half(DType dtype, double v);
uint16_t half_bits(DType dtype, double representable);

// Row-major flat index of `index` in `shape` (unravel's inverse, elementwise_reference.h).
int64_t ravel(const Index& index, const Shape& shape);
Tensor make(DType dtype, const Shape& shape);
// Element i as a double (element_as_double) or as an int64; `put`/`put_int` store into t's dtype.
double get(const Tensor& t, int64_t i);
int64_t get_int(const Tensor& t, int64_t i);
bool is_integer(DType d);
void put_int(Tensor& t, int64_t i, int64_t v);
void put(Tensor& t, int64_t i, double v);
void copy_element(const Tensor& src, int64_t si, Tensor& dst, int64_t di);
Tensor copy_as(const Tensor& src, const Shape& shape);
// An int tensor's values; none for nullptr (an absent input).
std::vector<int64_t> ints(const Tensor* t);
// in[i], or nullptr past the end.
const Tensor* input(const std::vector<const Tensor*>& in, size_t i);
int64_t positive_axis(int64_t axis, int64_t rank);
// The shape every operand broadcasts to (numpy's rule, written out again: a dim of 1 takes the other's,
// 0 included).
Shape broadcast_shape(const std::vector<const Tensor*>& operands);
// Index of a broadcast operand of shape `shape` for an output index of higher or equal rank.
int64_t broadcast_source(const Index& out_index, const Shape& shape);

}  // namespace ucudnn::reference
