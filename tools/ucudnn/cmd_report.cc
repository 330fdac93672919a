// `ucudnn report MODEL`: plan the model's convolutions (benchmarking or reusing
// stored timings, as `ucudnn plan` does) and show what the policy chose and what
// it buys per kernel and for the network: text on stdout, or JSON with --json,
// and a self-contained HTML page with plots with --html FILE (written atomically).
#include <cstdio>

#include "runtime/core/file_io.h"
#include "tools/ucudnn/commands.h"
#include "tools/ucudnn/session_flags.h"
#include "ucudnn/ucudnn.h"

namespace ucudnn::cli {

namespace {

constexpr const char* kReportUsage =
    "usage: ucudnn report MODEL [--json] [--html FILE] [session flags]\n"
    "  --json                   print the report as one JSON object instead of text\n"
    "  --html FILE              also write a self-contained HTML page with plots\n";

}  // namespace

int cmd_report(int argc, char** argv) {
  auto parsed = Args::parse(argc, argv, flag_union({"html"}, kSessionValueFlags),
                            flag_union({"json", "help"}, kSessionBoolFlags));
  if (!parsed) return report_error(parsed.status(), true);
  const Args& args = *parsed;
  if (args.has("help")) {
    std::printf("%s%s", kReportUsage, kSessionFlagsHelp);
    return 0;
  }
  if (args.positional().size() != 1)
    return report_error(invalid_argument(std::string("expected one MODEL\n") + kReportUsage), true);
  if (args.has("html") && args.get("html").empty())
    return report_error(invalid_argument("--html needs a file name"), true);
  if (args.has("plan"))
    return report_error(invalid_argument("`ucudnn report` plans the model itself; --plan is for run"), true);
  SessionOptions options;
  if (Status s = session_options_from_flags(args, &options); !s.is_ok()) return report_error(s, true);

  auto planned = plan(args.positional()[0], options);
  if (!planned) return report_error(planned.status());
  if (args.has("html")) {
    if (Status s = write_file_atomically(args.get("html"), planned->report_html()); !s.is_ok())
      return report_error(s);
  }
  if (args.has("json")) {
    std::printf("%s\n", planned->report_json().c_str());
  } else {
    std::printf("%s", planned->report_text().c_str());  // its layout line says how the layout was chosen
    if (args.has("html")) std::printf("html:     %s\n", args.get("html").c_str());
  }
  return 0;
}

}  // namespace ucudnn::cli
