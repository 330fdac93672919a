// Which ReduceKind (runtime/ops/reduce_kind.h) each Reduce* op computes.
#pragma once

#include <optional>

#include "runtime/ir/op_list.h"
#include "runtime/ops/reduce_kind.h"

namespace ucudnn {

// The kind of a Reduce* op; nullopt for any other op.
inline std::optional<ReduceKind> reduce_kind(OpKind op) {
  switch (op) {
    case OpKind::kReduceSum: return ReduceKind::kSum;
    case OpKind::kReduceMean: return ReduceKind::kMean;
    case OpKind::kReduceMax: return ReduceKind::kMax;
    case OpKind::kReduceMin: return ReduceKind::kMin;
    case OpKind::kReduceProd: return ReduceKind::kProd;
    case OpKind::kReduceL1: return ReduceKind::kL1;
    case OpKind::kReduceL2: return ReduceKind::kL2;
    case OpKind::kReduceSumSquare: return ReduceKind::kSumSquare;
    case OpKind::kReduceLogSum: return ReduceKind::kLogSum;
    case OpKind::kReduceLogSumExp: return ReduceKind::kLogSumExp;
    default: return std::nullopt;
  }
}

}  // namespace ucudnn
