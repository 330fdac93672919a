// Plan <-> JSON with nlohmann::json, and the checks that a loaded plan fits.
#include "runtime/plan/plan_json.h"

#include "runtime/core/file_io.h"

#include <cstdint>
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
  if (!plan.nchw_convs.empty()) j["nchw_convs"] = plan.nchw_convs;
  j["predicted_conv_ms"] = plan.predicted_conv_ms;
  j["arena_bytes"] = plan.arena_bytes;
  j["unplanned_bytes"] = plan.unplanned_bytes;
  j["workspace_pool_bytes"] = plan.workspace_pool_bytes;
  if (plan.workspace_in_arena) j["workspace_in_arena"] = true;
  if (plan.zero_copy_views) j["zero_copy_views"] = true;
  if (plan.residual_in_place) j["residual_in_place"] = true;
  if (plan.io_bound) j["io_bound"] = true;
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

namespace {

// Strict reading of a plan's fields: every number must be an integer in the range its field
// allows — a negative size or a value past 2^63 would otherwise be cast into a wrapped size_t.
// Errors name the field by its JSON pointer ("/steps/3/workspace_offset").
class Fields {
 public:
  Fields(const json& object, std::string path) : object_(object), path_(std::move(path)) {}

  // The member `key`, or an error naming its path when it is absent (or this is no object).
  Expected<const json*> at(const char* key) const {
    if (!object_.is_object()) return invalid_argument(where() + " must be an object, not " + object_.type_name());
    auto it = object_.find(key);
    if (it == object_.end()) return invalid_argument("malformed plan: " + path(key) + " is missing");
    return &*it;
  }
  bool has(const char* key) const { return object_.is_object() && object_.contains(key); }
  std::string path(const std::string& key) const { return path_ + "/" + key; }
  std::string where() const { return path_.empty() ? std::string("the plan") : path_; }

  Expected<std::string> text(const char* key) const {
    UCUDNN_ASSIGN_OR_RETURN(const json* v, at(key));
    if (!v->is_string())
      return invalid_argument("malformed plan: " + path(key) + " must be a string, not " + v->type_name());
    return v->get<std::string>();
  }
  // An integer in [lo, hi] (a JSON integer: not 1.5, not 1e3, not "7").
  Expected<int64_t> integer(const char* key, int64_t lo, int64_t hi) const {
    UCUDNN_ASSIGN_OR_RETURN(const json* v, at(key));
    return read_integer(*v, path(key), lo, hi);
  }
  Expected<size_t> size(const char* key) const {
    UCUDNN_ASSIGN_OR_RETURN(const int64_t v, integer(key, 0, INT64_MAX));
    return static_cast<size_t>(v);
  }
  // An optional true/false member: false when absent.
  Expected<bool> flag(const char* key) const {
    if (!has(key)) return false;
    UCUDNN_ASSIGN_OR_RETURN(const json* v, at(key));
    if (!v->is_boolean())
      return invalid_argument("malformed plan: " + path(key) + " is " + v->dump() + "; expected true or false");
    return v->get<bool>();
  }
  Expected<const json*> array(const char* key) const {
    UCUDNN_ASSIGN_OR_RETURN(const json* v, at(key));
    if (!v->is_array())
      return invalid_argument("malformed plan: " + path(key) + " must be an array, not " + v->type_name());
    return v;
  }

  static Expected<int64_t> read_integer(const json& v, const std::string& path, int64_t lo, int64_t hi) {
    const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
    if (v.is_number_unsigned()) {  // 0 .. 2^64-1
      const uint64_t u = v.get<uint64_t>();
      if (u <= static_cast<uint64_t>(hi) && static_cast<int64_t>(u) >= lo) return static_cast<int64_t>(u);
      return invalid_argument("malformed plan: " + path + " is " + std::to_string(u) + "; expected " + range);
    }
    if (v.is_number_integer()) {  // a negative int64
      const int64_t i = v.get<int64_t>();
      if (i >= lo && i <= hi) return i;
      return invalid_argument("malformed plan: " + path + " is " + std::to_string(i) + "; expected " + range);
    }
    const std::string found = v.is_number() ? v.dump() : std::string(v.type_name());  // 1.5, string, null
    return invalid_argument("malformed plan: " + path + " is " + found + "; expected " + range);
  }

 private:
  const json& object_;
  std::string path_;
};

Expected<PlanStep> read_step(const json& object, const std::string& path) {
  const Fields f(object, path);
  PlanStep step;
  UCUDNN_ASSIGN_OR_RETURN(const int64_t node, f.integer("node", 0, INT32_MAX));
  step.node = static_cast<ir::NodeId>(node);
  UCUDNN_ASSIGN_OR_RETURN(const json* parts, f.array("micro_batches"));
  for (size_t i = 0; i < parts->size(); ++i) {
    const Fields m((*parts)[i], f.path("micro_batches/" + std::to_string(i)));
    UCUDNN_ASSIGN_OR_RETURN(const int64_t size, m.integer("size", 1, INT64_MAX));
    UCUDNN_ASSIGN_OR_RETURN(const int64_t algorithm, m.integer("algorithm", -1, INT32_MAX));
    step.micro_batches.push_back({size, static_cast<int>(algorithm)});
  }
  UCUDNN_ASSIGN_OR_RETURN(step.workspace_offset, f.size("workspace_offset"));
  UCUDNN_ASSIGN_OR_RETURN(step.workspace_bytes, f.size("workspace_bytes"));
  if (f.has("stream")) {
    UCUDNN_ASSIGN_OR_RETURN(const int64_t stream, f.integer("stream", 0, 1));
    step.stream = static_cast<int>(stream);
  }
  return step;
}

Expected<Plan> read_plan(const json& j) {
  const Fields f(j, "");
  if (!j.is_object() || j.value("format", "") != "ucudnn-plan")
    return invalid_argument("not a ucudnn plan (no \"format\": \"ucudnn-plan\")");
  UCUDNN_ASSIGN_OR_RETURN(const int64_t version, f.integer("version", INT32_MIN, INT32_MAX));
  if (version != kPlanFormatVersion)
    return invalid_argument("plan format version " + std::to_string(version) +
                            " is not supported (this ucudnn reads version " + std::to_string(kPlanFormatVersion) +
                            "); make the plan again with `ucudnn plan`");
  Plan plan;
  UCUDNN_ASSIGN_OR_RETURN(plan.device, f.text("device"));
  UCUDNN_ASSIGN_OR_RETURN(plan.device_name, f.text("device_name"));
  UCUDNN_ASSIGN_OR_RETURN(plan.model_fingerprint, f.text("model_fingerprint"));
  UCUDNN_ASSIGN_OR_RETURN(plan.policy, f.text("policy"));
  if (f.has("layout")) {
    UCUDNN_ASSIGN_OR_RETURN(plan.layout, f.text("layout"));
  }
  if (plan.layout != "nchw" && plan.layout != "nhwc")
    return invalid_argument("plan layout '" + plan.layout + "' is neither nchw nor nhwc");
  if (f.has("nchw_convs")) {
    UCUDNN_ASSIGN_OR_RETURN(const json* names, f.array("nchw_convs"));
    for (size_t i = 0; i < names->size(); ++i) {
      const json& name = (*names)[i];
      if (!name.is_string() || name.get<std::string>().empty())
        return invalid_argument("malformed plan: /nchw_convs/" + std::to_string(i) + " is " + name.dump() +
                                "; expected a Conv node's name");
      plan.nchw_convs.push_back(name.get<std::string>());
    }
    if (!plan.nchw_convs.empty() && plan.layout != "nhwc")
      return invalid_argument("malformed plan: /nchw_convs lists Convs to keep in NCHW, but the layout is " +
                              plan.layout + ", not nhwc");
  }
  if (f.has("predicted_conv_ms")) {
    UCUDNN_ASSIGN_OR_RETURN(const json* ms, f.at("predicted_conv_ms"));
    if (!ms->is_number() || !(ms->get<double>() >= 0))
      return invalid_argument("malformed plan: /predicted_conv_ms is " + ms->dump() + "; expected a number >= 0");
    plan.predicted_conv_ms = ms->get<double>();
  }
  UCUDNN_ASSIGN_OR_RETURN(plan.arena_bytes, f.size("arena_bytes"));
  UCUDNN_ASSIGN_OR_RETURN(plan.unplanned_bytes, f.size("unplanned_bytes"));
  UCUDNN_ASSIGN_OR_RETURN(plan.workspace_pool_bytes, f.size("workspace_pool_bytes"));
  UCUDNN_ASSIGN_OR_RETURN(plan.workspace_in_arena, f.flag("workspace_in_arena"));
  if (plan.workspace_in_arena && plan.workspace_pool_bytes != 0)
    return invalid_argument("malformed plan: /workspace_pool_bytes is " + std::to_string(plan.workspace_pool_bytes) +
                            ", but the workspaces are in the arena (/workspace_in_arena): expected 0");
  UCUDNN_ASSIGN_OR_RETURN(plan.zero_copy_views, f.flag("zero_copy_views"));
  UCUDNN_ASSIGN_OR_RETURN(plan.residual_in_place, f.flag("residual_in_place"));
  UCUDNN_ASSIGN_OR_RETURN(plan.io_bound, f.flag("io_bound"));
  UCUDNN_ASSIGN_OR_RETURN(const json* offsets, f.array("value_offsets"));
  for (size_t i = 0; i < offsets->size(); ++i) {
    // -1: not in the arena; any other offset is a byte position in it.
    UCUDNN_ASSIGN_OR_RETURN(const int64_t offset,
                            Fields::read_integer((*offsets)[i], "/value_offsets/" + std::to_string(i), -1, INT64_MAX));
    plan.value_offsets.push_back(offset);
  }
  UCUDNN_ASSIGN_OR_RETURN(const json* steps, f.array("steps"));
  for (size_t i = 0; i < steps->size(); ++i) {
    UCUDNN_ASSIGN_OR_RETURN(PlanStep step, read_step((*steps)[i], "/steps/" + std::to_string(i)));
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

}  // namespace

Expected<Plan> plan_from_json(const std::string& text) {
  try {
    return read_plan(json::parse(text));
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
  // The CPU has no device name: "cpu", not "cpu ''".
  auto where = [](const std::string& dev, const std::string& name) {
    return name.empty() ? dev : dev + " '" + name + "'";
  };
  if (plan.device != device || (device == "cuda" && plan.device_name != device_name))
    return invalid_argument("the plan was made for " + where(plan.device, plan.device_name) + ", not for " +
                            where(device, device_name) + "; make it again with `ucudnn plan --device " + device +
                            "` on this machine");
  if (plan.residual_in_place && device != "cpu")  // Note [residual in place]: the CPU's convolutions only
    return invalid_argument("the plan writes convolutions' outputs over their residual inputs "
                            "(/residual_in_place), which only the CPU's convolutions do; this runs on " + device);
  return Status::ok();
}

}  // namespace ucudnn::runtime
