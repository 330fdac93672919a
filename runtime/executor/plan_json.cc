// Plan <-> JSON with nlohmann::json, and the checks that a loaded plan fits.
#include "runtime/executor/plan_json.h"

#include "runtime/core/file_io.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace ucudnn::runtime {

using nlohmann::json;

std::string plan_to_json(const Plan& plan, const ir::Graph& graph) {
  json j;
  j["format"] = "ucudnn-plan";
  j["version"] = kPlanFormatVersion;
  j["device"] = plan.device;
  j["device_name"] = plan.device_name;
  j["model_fingerprint"] = plan.model_fingerprint;
  j["policy"] = plan.policy;
  j["layout"] = plan.layout;
  j["predicted_conv_ms"] = plan.predicted_conv_ms;
  j["arena_bytes"] = plan.arena_bytes;
  j["unplanned_bytes"] = plan.unplanned_bytes;
  j["workspace_pool_bytes"] = plan.workspace_pool_bytes;
  j["value_offsets"] = plan.value_offsets;
  json steps = json::array();
  for (const PlanStep& step : plan.steps) {
    json s;
    s["node"] = step.node;
    if (step.node >= 0 && static_cast<size_t>(step.node) < graph.nodes.size()) {
      s["name"] = graph.nodes[step.node].name;
      s["op"] = op_name(graph.nodes[step.node].op);
    }
    json parts = json::array();
    for (const MicroBatch& m : step.micro_batches) parts.push_back({{"size", m.size}, {"algorithm", m.algorithm}});
    s["micro_batches"] = parts;
    s["workspace_offset"] = step.workspace_offset;
    s["workspace_bytes"] = step.workspace_bytes;
    if (step.stream != 0) s["stream"] = step.stream;
    steps.push_back(s);
  }
  j["steps"] = steps;
  return j.dump(1);
}

Expected<Plan> plan_from_json(const std::string& text) {
  try {
    const json j = json::parse(text);
    if (j.value("format", "") != "ucudnn-plan") return invalid_argument("not a ucudnn plan (no \"format\": \"ucudnn-plan\")");
    if (j.at("version").get<int>() != kPlanFormatVersion)
      return invalid_argument("plan format version " + std::to_string(j.at("version").get<int>()) +
                              " is not supported (this ucudnn reads version " + std::to_string(kPlanFormatVersion) +
                              "); make the plan again with `ucudnn plan`");
    Plan plan;
    plan.device = j.at("device").get<std::string>();
    plan.device_name = j.at("device_name").get<std::string>();
    plan.model_fingerprint = j.at("model_fingerprint").get<std::string>();
    plan.policy = j.at("policy").get<std::string>();
    plan.layout = j.value("layout", std::string("nchw"));
    if (plan.layout != "nchw" && plan.layout != "nhwc")
      return invalid_argument("plan layout '" + plan.layout + "' is neither nchw nor nhwc");
    plan.predicted_conv_ms = j.value("predicted_conv_ms", 0.0);
    plan.arena_bytes = j.at("arena_bytes").get<size_t>();
    plan.unplanned_bytes = j.at("unplanned_bytes").get<size_t>();
    plan.workspace_pool_bytes = j.at("workspace_pool_bytes").get<size_t>();
    plan.value_offsets = j.at("value_offsets").get<std::vector<int64_t>>();
    for (const json& s : j.at("steps")) {
      PlanStep step;
      step.node = s.at("node").get<ir::NodeId>();
      for (const json& m : s.at("micro_batches"))
        step.micro_batches.push_back({m.at("size").get<int64_t>(), m.at("algorithm").get<int>()});
      step.workspace_offset = s.at("workspace_offset").get<size_t>();
      step.workspace_bytes = s.at("workspace_bytes").get<size_t>();
      step.stream = s.value("stream", 0);
      plan.steps.push_back(std::move(step));
    }
    return plan;
  } catch (const json::exception& e) {
    return invalid_argument(std::string("malformed plan: ") + e.what());
  }
}

Status save_plan(const std::string& path, const Plan& plan, const ir::Graph& graph) {
  return write_file_atomically(path, plan_to_json(plan, graph) + "\n");
}

Expected<Plan> load_plan(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("cannot open plan '" + path + "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto plan = plan_from_json(buffer.str());
  if (!plan) return plan.status().with_context(path);
  return plan;
}

Status check_plan_matches(const Plan& plan, const ir::Graph& graph, const std::string& device,
                          const std::string& device_name) {
  if (plan.model_fingerprint != graph_fingerprint(graph))
    return invalid_argument("the plan was made for another model or input shape (fingerprint " +
                            plan.model_fingerprint + ", this model " + graph_fingerprint(graph) +
                            "); make it again with `ucudnn plan` for this model and batch");
  // A CPU plan runs on any CPU (only its speed may differ); a GPU plan names
  // cuDNN algorithms that another GPU or cuDNN may not have.
  if (plan.device != device || (device == "cuda" && plan.device_name != device_name))
    return invalid_argument("the plan was made for " + plan.device + " '" + plan.device_name + "', not " + device +
                            " '" + device_name + "'");
  return Status::ok();
}

}  // namespace ucudnn::runtime
