// `ucudnn`: the command-line tool. Dispatches to one subcommand per file
// (cmd_<name>.cc). Errors print one line on stderr and exit non-zero:
// 1 for a failed command, 2 for a usage error.
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/ucudnn/cli_args.h"
#include "tools/ucudnn/commands.h"

namespace ucudnn::cli {

int report_error(const Status& status, bool usage_error) {
  // One line, as scripts expect: a multi-line message (e.g. every unsupported
  // node of a model, one per line) is joined with "; ".
  std::string text = status.to_string();
  for (size_t pos; (pos = text.find('\n')) != std::string::npos;) {
    size_t end = pos + 1;
    while (end < text.size() && text[end] == ' ') ++end;
    const bool after_colon = pos > 0 && text[pos - 1] == ':';
    text.replace(pos, end - pos, after_colon ? " " : "; ");
  }
  std::fprintf(stderr, "ucudnn: error: %s\n", text.c_str());
  return usage_error ? 2 : 1;
}

}  // namespace ucudnn::cli

namespace {

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: ucudnn <command> [options]\n"
               "\n"
               "commands:\n"
               "  info MODEL     inputs, outputs, op counts, what is unsupported (--trainable: what training updates)\n"
               "  run MODEL      run a model and time it (see `ucudnn run --help`)\n"
               "  plan MODEL     choose algorithms and micro-batches under a workspace budget, save the plan\n"
               "  report MODEL   what the optimizer chose per convolution and what it buys (text, --json, --html)\n"
               "  train MODEL    train a model on a data set (or synthetic data): SGD/AdamW, schedules, checkpoints\n"
               "  eval MODEL     top-1 / top-5 accuracy of a model on a data set\n"
               "\n"
               "ucudnn runs ONNX convolutional networks on the CPU (Eigen) or an NVIDIA GPU (cuDNN).\n");
}

int dispatch(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (command == "info") return ucudnn::cli::cmd_info(argc - 2, argv + 2);
  if (command == "run") return ucudnn::cli::cmd_run(argc - 2, argv + 2);
  if (command == "plan") return ucudnn::cli::cmd_plan(argc - 2, argv + 2);
  if (command == "report") return ucudnn::cli::cmd_report(argc - 2, argv + 2);
  if (command == "train") return ucudnn::cli::cmd_train(argc - 2, argv + 2);
  if (command == "eval") return ucudnn::cli::cmd_eval(argc - 2, argv + 2);
  std::fprintf(stderr, "ucudnn: unknown command '%s'\n", command.c_str());
  print_usage(stderr);
  return 2;
}

}  // namespace

// The library reports errors as Status; an exception reaching here (an allocation
// the checks did not foresee, a bug) still ends as one line and exit 1, not an abort.
int main(int argc, char** argv) {
  return ucudnn::cli::run_catching([&] { return dispatch(argc, argv); },
                                   [](const ucudnn::Status& status) { return ucudnn::cli::report_error(status); });
}
