// `ucudnn plan MODEL -o plan.json`: benchmark (or reuse stored timings), choose
// every convolution's algorithm and micro-batches under the workspace policy,
// and save the plan as JSON for `ucudnn run --plan` (ucudnn::plan, save_plan).
#include <cstdio>

#include "runtime/core/bytes.h"
#include "tools/ucudnn/commands.h"
#include "tools/ucudnn/session_flags.h"
#include "ucudnn/ucudnn.h"

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
  if (args.has("plan")) return report_error(invalid_argument("`ucudnn plan` makes a plan; --plan is for run"), true);
  SessionOptions options;
  if (Status s = session_options_from_flags(args, &options); !s.is_ok()) return report_error(s, true);

  auto planned = plan(args.positional()[0], options);
  if (!planned) return report_error(planned.status());
  if (Status s = save_plan(*planned, args.get("output")); !s.is_ok()) return report_error(s);

  const PlanSummary& s = planned->summary();
  std::printf("plan:     %s (%s, %s, policy %s, layout %s)\n", args.get("output").c_str(), s.device.c_str(),
              s.device_name.c_str(), policy_name(s.policy), layout_name(s.layout));
  if (!s.layout_note.empty()) std::printf("layout:   %s\n", s.layout_note.c_str());
  std::printf("kernels:  %d distinct convolutions (%d benchmarked, %d from the database), %d steps divided\n",
              s.convolution_kernels, s.kernels_benchmarked, s.kernels_reused, s.divided_steps);
  std::printf("time:     %.3f ms predicted for all convolutions; optimized in %.2f s\n", s.predicted_conv_ms,
              s.optimize_seconds);
  const MemoryStats memory{s.arena_bytes, 0, 0, s.workspace_pool_bytes, s.largest_workspace_bytes};
  std::printf("memory:   workspace %s, activations %s\n", memory.workspace_text().c_str(),
              format_bytes(s.arena_bytes).c_str());
  if (options.streams == 2)
    std::printf("streams:  %d convolutions on the side stream (see `ucudnn report` for which)\n",
                s.side_stream_convolutions);
  return 0;
}

}  // namespace ucudnn::cli
