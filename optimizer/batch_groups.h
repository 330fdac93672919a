// Note [batch groups]: on the CPU a batch can run as groups of samples, each group on one thread
// through the whole network, all groups at once (api/batch_group_session.cc), instead of every node
// splitting the whole batch over all threads. A thread then keeps its group's activations in its own
// caches from one node to the next, and no node waits for the slowest of its threads: ResNet-18,
// ResNet-50, MobileNetV3-L and EfficientNet-B1 at batch 16 on the 2-core dev VM took 4 to 22% less as two
// groups of 8 than as one batch of 16 on two threads (docs/history/PERFORMANCE-2026-12.md, "Batch groups"). It is the
// micro-batch of μ-cuDNN turned sideways: the division is over threads instead of over time. Whether it
// pays depends on the machine and the model, so a session under auto times both ways at load.
//
// It is right only when no node mixes samples. The graph imported at the group's batch b is
// compared, node by node, with the graph at the whole batch B (check_samples_independent): the same
// nodes with the same attributes; every graph input and output is [B, ...] in one and [b, ...] in the
// other with the rest of the shape equal, every value a node makes [k·B, ...] and [k·b, ...] (Swin's
// windows: k rows per sample, each sample's bytes where they were); no node that works along axis 0 of a
// computed value (Softmax, CumSum, Gather, Concat, TopK, LayerNorm over it ..., a Transpose that moves
// axis 0, ScatterND's implicit leading axes); constants equal in both, except a Reshape's or Expand's
// target shape and Resize's sizes. A dim of size B anywhere but first would be b in the group's graph
// and differ, so a node that moves samples into another axis, or reduces over them, is caught by the
// shapes; the axis rule catches those that keep the shape. Each sample's bytes stay one block from
// input to output (Reshape keeps the order of elements; the other nodes work row by row).
#pragma once

#include <cstdint>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace ucudnn::optimizer {

// Ok when running `group` (the model imported at batch `group_batch`) on consecutive groups of
// `whole`'s samples (imported at `batch`) computes what `whole` computes; else Unsupported
// naming the first node or value that mixes samples (or differs between the two imports).
Status check_samples_independent(const ir::Graph& whole, const ir::Graph& group, int64_t batch,
                                 int64_t group_batch);

// The groups a batch is cut into by default: the largest divisor of `batch` that is at most
// `threads`, when that is 2 or more; else 1 (no groups).
int default_batch_groups(int64_t batch, int threads);

}  // namespace ucudnn::optimizer
