// The JSON form of a runtime::Plan: what `ucudnn plan -o` writes and
// `ucudnn run --plan` reads. Human-readable, stable key names, versioned.
#pragma once

#include <string>

#include "runtime/core/status.h"
#include "runtime/plan/plan.h"

namespace ucudnn::runtime {

inline constexpr int kPlanFormatVersion = 1;

// The plan as a JSON document; `graph` supplies node names for readers.
std::string plan_to_json(const Plan& plan, const ir::Graph& graph);
// Parses a plan; a malformed document or another format version is InvalidArgument. Every
// number must be an integer in its field's range (sizes and offsets 0 to 2^63-1, value offsets
// also -1, micro-batch sizes >= 1, algorithms >= -1, streams 0 or 1), never wrapped or
// truncated: the error names the field by its JSON pointer ("/steps/3/workspace_offset").
// Whether the numbers fit together (offsets inside the arena, ...) is check_plan's (plan_checks.h).
Expected<Plan> plan_from_json(const std::string& text);

// Writes the plan atomically (temporary file + rename), so an existing file is never half-written.
Status save_plan(const std::string& path, const Plan& plan, const ir::Graph& graph);
Expected<Plan> load_plan(const std::string& path);

// Refuses a plan made for another graph or device: InvalidArgument saying which.
Status check_plan_matches(const Plan& plan, const ir::Graph& graph, const std::string& device,
                          const std::string& device_name);

}  // namespace ucudnn::runtime
