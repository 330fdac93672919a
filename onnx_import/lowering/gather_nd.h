// GatherND (opsets 11–13: batch_dims from 12): slices of data picked by index tuples. Lowered at import
// (Note [lowered ops], runtime/ops/lowered_ops.h) into Gathers both backends run, so each index is
// range-checked where it is read and negative indices count from the end, as Gather's are.
#pragma once

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn {

// Rewrites every GatherND of `graph` (shapes inferred). With data [B..., D0..Dk-1, R...] (b = batch_dims
// dims B) and indices [B..., I..., k]:
//   rows   = Reshape(data, [B·D0···Dk-1, R...])
//   row    = Σj Gather(strides_j, indices[..., j]) + the batch's first row   (strides_j = Range(0, Dj)·Dj+1···Dk-1)
//   output = Gather(rows, row)                                               [B..., I..., R...]
// Gather of the stride table is what checks and wraps each index component against its own dim.
Status lower_gather_nds(ir::Graph& graph);

}  // namespace ucudnn
