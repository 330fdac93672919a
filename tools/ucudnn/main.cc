// `ucudnn`: the command-line tool. Dispatches to one subcommand per file
// (cmd_<name>.cc). Errors print one line on stderr and exit non-zero:
// 1 for a failed command, 2 for a usage error.
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/ucudnn/commands.h"

namespace {

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: ucudnn <command> [options]\n"
               "\n"
               "commands:\n"
               "  info MODEL     inputs, outputs, op counts, what is unsupported\n"
               "  run MODEL      run a model and time it (see `ucudnn run --help`)\n"
               "  plan MODEL     choose algorithms and micro-batches under a workspace budget, save the plan\n"
               "  report MODEL   what the optimizer chose per convolution and what it buys (text, --json, --html)\n"
               "\n"
               "ucudnn runs ONNX convolutional networks on the CPU (Eigen) or an NVIDIA GPU (cuDNN).\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (command == "info") return ucudnn::cli::cmd_info(argc - 2, argv + 2);
  if (command == "run") return ucudnn::cli::cmd_run(argc - 2, argv + 2);
  if (command == "plan") return ucudnn::cli::cmd_plan(argc - 2, argv + 2);
  if (command == "report") return ucudnn::cli::cmd_report(argc - 2, argv + 2);
  std::fprintf(stderr, "ucudnn: unknown command '%s'\n", command.c_str());
  print_usage(stderr);
  return 2;
}
