// Which ReduceKind (runtime/ops/reduce_kind.h) each Reduce* op computes.
#pragma once

#include <optional>

#include "runtime/ir/op_list.h"
#include "runtime/ops/reduce_kind.h"

// Every Reduce* op with its kind: X(op name, ReduceKind value). Each backend's kernel table of them.
#define UCUDNN_FOR_EACH_REDUCTION(X)                                                       \
  X(ReduceSum, kSum) X(ReduceMean, kMean) X(ReduceMax, kMax) X(ReduceMin, kMin)             \
  X(ReduceProd, kProd) X(ReduceL1, kL1) X(ReduceL2, kL2) X(ReduceSumSquare, kSumSquare)     \
  X(ReduceLogSum, kLogSum) X(ReduceLogSumExp, kLogSumExp)

namespace ucudnn {

// The kind of a Reduce* op; nullopt for any other op.
inline std::optional<ReduceKind> reduce_kind(OpKind op) {
  switch (op) {
#define UCUDNN_REDUCE_KIND_CASE(name, kind) \
  case OpKind::k##name: return ReduceKind::kind;
    UCUDNN_FOR_EACH_REDUCTION(UCUDNN_REDUCE_KIND_CASE)
#undef UCUDNN_REDUCE_KIND_CASE
    default: return std::nullopt;
  }
}

}  // namespace ucudnn
