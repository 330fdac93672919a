// StepTiming: what a profiled run of an executor measured, as plain data.
//
// One entry per plan step, in run order, plus two entries that are not graph
// nodes: "copy inputs in" first and "copy outputs out" last (node -1, op
// OpKind::kCount, which step_op_name() renders as "copy"). The CPU executor
// times with std::chrono::steady_clock around the step's calls; the CUDA
// executor with CUDA events on its stream, so its times are device times.
#pragma once

#include <string>

#include "runtime/ir/graph.h"
#include "runtime/ir/op_list.h"
#include "runtime/ir/pointwise_program.h"

namespace ucudnn::runtime {

struct StepTiming {
  ir::NodeId node = -1;        // -1: a copy between the caller's tensors and the executor's memory
  std::string name;            // the node's name, or "copy inputs in" / "copy outputs out"
  OpKind op = OpKind::kCount;  // kCount for the copies
  int calls = 0;               // kernel calls (micro-batches) of the step; copies count their tensors
  double ms = 0;
};

inline constexpr const char* kCopyInputsName = "copy inputs in";
inline constexpr const char* kCopyOutputsName = "copy outputs out";

// The op's ONNX name, or "copy" for the copy entries.
inline const char* step_op_name(const StepTiming& timing) {
  return timing.node < 0 ? "copy" : op_name(timing.op);
}

// step_op_name, with a fused node's pattern: "FusedPointwise(SiLU)" (Note [pointwise programs]),
// so a profile says which fusions the time went to.
inline std::string step_op_label(const StepTiming& timing, const ir::Graph& graph) {
  if (timing.node < 0 || timing.op != OpKind::kFusedPointwise) return step_op_name(timing);
  const ir::Node& node = graph.nodes[static_cast<size_t>(timing.node)];
  if (!node.attrs.has(ir::kPointwisePatternAttr)) return step_op_name(timing);
  return std::string(step_op_name(timing)) + "(" + node.attrs.get_string(ir::kPointwisePatternAttr) + ")";
}

}  // namespace ucudnn::runtime
