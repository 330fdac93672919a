// GatherElements, ScatterElements and ScatterND: element-wise indexing along one axis, and the writing of
// slices at index tuples. What both backends share: the reduction a scatter applies, and the check of
// index values against the dimensions they index.
//
//   GatherElements(data, indices, axis): out has indices' shape; out[c] = data[c with c[axis] = indices[c]].
//   ScatterElements(data, indices, updates, axis, reduction): out = data, then for every c of indices (in
//     row-major order) out[c with c[axis] = indices[c]] = or op= updates[c].
//   ScatterND(data, indices, updates, reduction): indices [..., k] are k-tuples into data's first k dims;
//     out = data, then for every tuple t (in order) the slice out[t] = or op= updates[t].
// A negative index counts from the end of its dim. Tuples or elements that write one place more than once
// apply their updates in order (ONNX leaves the order of a plain write undefined; ucudnn's is the order of
// the indices on both backends).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/scatter_reduction.h"

namespace ucudnn {

// "none", "add", "mul", "max", "min"; an InvalidArgument naming the others.
Expected<ScatterReduction> scatter_reduction(const std::string& name);

// Fails, naming `where`, unless every value of `indices` lies in [-dim, dim) of the dim it indexes: `dims`
// cycles (dims[i % dims.size()] for value i: one dim for the Elements ops, the k tuple dims for ScatterND).
Status check_indices(const std::vector<int64_t>& indices, const std::vector<int64_t>& dims, const std::string& where);

}  // namespace ucudnn
