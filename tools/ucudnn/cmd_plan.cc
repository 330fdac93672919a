// `ucudnn plan MODEL -o plan.json`: benchmark (or reuse stored timings), choose
// every convolution's algorithm and micro-batches under the workspace policy,
// and save the Plan as JSON for `ucudnn run --plan`.
#include <cstdio>

#include "api/planning.h"
#include "runtime/cpu/cpu_kernel.h"
#include "runtime/executor/plan_json.h"
#include "tools/ucudnn/commands.h"
#include "tools/ucudnn/session_flags.h"

namespace ucudnn::cli {

namespace {
constexpr const char* kPlanUsage =
    "usage: ucudnn plan MODEL -o PLAN.json [session flags]\n"
    "  -o, --output FILE        where to write the plan (JSON)\n";
}  // namespace

int cmd_plan(int argc, char** argv) {
  // Accept -o as --output.
  std::vector<char*> rewritten(argv, argv + argc);
  static char output_flag[] = "--output";
  for (char*& a : rewritten)
    if (std::string(a) == "-o") a = output_flag;
  auto parsed = Args::parse(static_cast<int>(rewritten.size()), rewritten.data(),
                            flag_union({"output"}, kSessionValueFlags), flag_union({"help"}, kSessionBoolFlags));
  if (!parsed) return report_error(parsed.status(), true);
  const Args& args = *parsed;
  if (args.has("help")) {
    std::printf("%s%s", kPlanUsage, kSessionFlagsHelp);
    return 0;
  }
  if (args.positional().size() != 1 || !args.has("output"))
    return report_error(invalid_argument(std::string("expected MODEL and -o FILE\n") + kPlanUsage), true);
  SessionOptions options;
  if (Status s = session_options_from_flags(args, &options); !s.is_ok()) return report_error(s, true);
  if (!options.plan_path.empty()) return report_error(invalid_argument("`ucudnn plan` makes a plan; --plan is for run"), true);
  auto planner = planner_options(options);
  if (!planner) return report_error(planner.status(), true);

  cpu::set_num_threads(options.threads);  // the CPU benchmarker measures with these threads
  auto planned = plan_model(args.positional()[0], device_name(options.device), options);
  if (!planned) return report_error(planned.status());
  const optimizer::PlanResult* result = &planned->result;
  if (Status s = runtime::save_plan(args.get("output"), result->plan, planned->graph); !s.is_ok())
    return report_error(s);

  int divided = 0;
  for (const runtime::PlanStep& step : result->plan.steps) divided += step.micro_batches.size() > 1;
  std::printf("plan:     %s (%s, %s, policy %s, layout %s)\n", args.get("output").c_str(),
              result->plan.device.c_str(), result->plan.device_name.c_str(), result->plan.policy.c_str(),
              result->plan.layout.c_str());
  if (!planned->layout_note.empty()) std::printf("layout:   %s\n", planned->layout_note.c_str());
  std::printf("kernels:  %zu distinct convolutions (%d benchmarked, %d from the database), %d steps divided\n",
              result->kernels.size(), result->kernels_benchmarked, result->kernels_reused, divided);
  std::printf("time:     %.3f ms predicted for all convolutions; optimized in %.2f s\n",
              result->policy.total_time_ms, result->optimize_seconds);
  std::printf("memory:   workspace pool %s, activations %s\n", format_bytes(result->plan.workspace_pool_bytes).c_str(),
              format_bytes(result->plan.arena_bytes).c_str());
  if (options.streams == 2)
    std::printf("streams:  %zu convolutions on the side stream (see `ucudnn report` for which)\n",
                result->side_steps.size());
  return 0;
}

}  // namespace ucudnn::cli
