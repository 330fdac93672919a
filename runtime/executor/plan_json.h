// The JSON form of a runtime::Plan: what `ucudnn plan -o` writes and
// `ucudnn run --plan` reads. Human-readable, stable key names, versioned.
#pragma once

#include <string>

#include "runtime/core/status.h"
#include "runtime/executor/plan.h"

namespace ucudnn::runtime {

inline constexpr int kPlanFormatVersion = 1;

// The plan as a JSON document; `graph` supplies node names for readers.
std::string plan_to_json(const Plan& plan, const ir::Graph& graph);
// Parses a plan; a malformed document or another format version is InvalidArgument.
Expected<Plan> plan_from_json(const std::string& text);

// Writes the plan atomically (temporary file + rename), so an existing file is never half-written.
Status save_plan(const std::string& path, const Plan& plan, const ir::Graph& graph);
Expected<Plan> load_plan(const std::string& path);

// Refuses a plan made for another graph or device: InvalidArgument saying which.
Status check_plan_matches(const Plan& plan, const ir::Graph& graph, const std::string& device,
                          const std::string& device_name);

}  // namespace ucudnn::runtime
