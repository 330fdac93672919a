// Subcommands of the `ucudnn` tool; each takes the arguments after its name
// and returns the process exit code.
#pragma once

#include "runtime/core/status.h"

namespace ucudnn::cli {

int cmd_info(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_plan(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_train(int argc, char** argv);
int cmd_eval(int argc, char** argv);

// Prints "ucudnn: error: <status>" on stderr and returns 1 (2 for usage errors).
int report_error(const Status& status, bool usage_error = false);

}  // namespace ucudnn::cli
