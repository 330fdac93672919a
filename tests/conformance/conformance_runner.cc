// conformance_runner: runs ONNX backend test cases through ucudnn's Session API.
//
//   conformance_runner [options] [ROOT...]
//
// ROOTs (default: /usr/share/libonnx-testdata/data/{node,pytorch-converted,simple})
// are folders of cases, or a case folder itself (holding model.onnx). Every case
// runs in a forked child with a time limit, so a crash or a hang fails that case
// only. Outcome per case:
//   passed                     outputs match (reported if the case is in the skip list)
//   skipped                    kUnsupported AND listed in the skip list
//   failed                     anything else, including kUnsupported not listed
// Prints failures with their first error line and "N passed, M failed, K skipped";
// exits 1 on any failure. The skip list (tests/conformance/skipped.txt) has lines
// `test_name  # reason`; update_skipped.sh regenerates it from --dump-unsupported.
//
// With --device cuda the sessions run on the GPU and the skip list is the union
// of skipped.txt (what ucudnn does not support anywhere) and skipped_cuda.txt
// (what only the CUDA backend rejects; `update_skipped.sh RUNNER --device cuda`
// regenerates it on the device machine). Without a usable GPU the runner says so
// and exits 77 (CTest's skip code). Note [CUDA and fork]: the parent process never
// touches CUDA (a CUDA context does not survive fork()); the GPU check runs in a
// child of its own, and each case's child makes its own context.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "tests/conformance/conformance_case.h"

namespace fs = std::filesystem;
using ucudnn::conformance::CaseResult;

namespace {

const char* kUsage =
    "usage: conformance_runner [options] [ROOT...]\n"
    "  --filter SUBSTR      only cases whose name contains SUBSTR (repeatable: any matches)\n"
    "  --skip-file PATH     skip list (repeatable: the union is used; default: under\n"
    "                       $UCUDNN_SOURCE_DIR or the source tree, tests/conformance/skipped.txt,\n"
    "                       plus tests/conformance/skipped_cuda.txt with --device cuda)\n"
    "  --no-skip-file       no skip list: every unsupported case fails\n"
    "  --device cpu|cuda    where the sessions run (default cpu); cuda without a usable GPU\n"
    "                       prints why and exits 77\n"
    "  --math tf32|fp32     GPU math (default tf32, cuDNN/cuBLAS may use TF32 tensor cores);\n"
    "                       fp32 is strict FP32. The CPU is always strict FP32\n"
    "  --list-unexpected    print only 'name  # reason' for unsupported cases missing from\n"
    "                       the skip list (ready to paste into it)\n"
    "  --dump-unsupported   print 'name<TAB>message' (all on one line) for every unsupported\n"
    "                       case, listed or not (input of update_skipped.sh)\n"
    "  --strict             also fail when a listed case passes, or (full runs) does not exist\n"
    "  --threads N          CPU threads per session (default 1)\n"
    "  --timeout S          seconds per case before it counts as hung (default 120)\n"
    "  --no-fork            run cases in this process (for debuggers; a crash ends the run)\n"
    "  --verbose            print every case's outcome as it finishes\n"
    "  --rtol X --atol X    tolerances (default 1e-3, 1e-7; with --device cuda and tf32 math\n"
    "                       1e-2, 1e-3, since TF32 keeps 10 mantissa bits)\n";

struct Options {
  std::vector<std::string> roots;
  bool default_roots = false;  // no ROOT given: the whole libonnx-testdata set
  std::vector<std::string> filters;
  std::vector<std::string> skip_files;  // empty after parsing only with --no-skip-file
  bool use_skip_file = true;
  ucudnn::Device device = ucudnn::Device::kCpu;
  bool strict_fp32 = false;
  bool tolerance_given = false;  // --rtol or --atol: no device-dependent default
  bool list_unexpected = false;
  bool dump_unsupported = false;
  bool strict = false;
  bool fork_cases = true;
  bool verbose = false;
  int threads = 1;
  int timeout_s = 120;
  ucudnn::conformance::Tolerance tolerance;
};

struct Case {
  std::string name;
  fs::path dir;
};

// `name` (skipped.txt, skipped_cuda.txt) in the source tree's tests/conformance.
std::string default_skip_file(const std::string& name) {
  if (const char* source = std::getenv("UCUDNN_SOURCE_DIR"))
    return std::string(source) + "/tests/conformance/" + name;
#ifdef UCUDNN_SOURCE_DIR
  return std::string(UCUDNN_SOURCE_DIR) + "/tests/conformance/" + name;
#else
  return "tests/conformance/" + name;
#endif
}

// Default tolerances on the GPU with TF32 allowed: TF32 rounds the inputs of
// each product to 10 mantissa bits (relative error up to ~5e-4 per operand), and
// long reductions (convolutions, Gemm) add such errors up, so the FP32 defaults
// would fail on rounding alone; --math fp32 keeps the FP32 defaults.
constexpr double kTf32Rtol = 1e-2;
constexpr double kTf32Atol = 1e-3;

bool parse_args(int argc, char** argv, Options* options) {
  auto need_value = [&](int& i) -> const char* {
    if (i + 1 >= argc) {
      std::cerr << "conformance_runner: " << argv[i] << " needs a value\n";
      return nullptr;
    }
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = nullptr;
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--filter") {
      if (!(value = need_value(i))) return false;
      options->filters.push_back(value);
    } else if (arg == "--skip-file") {
      if (!(value = need_value(i))) return false;
      options->skip_files.push_back(value);
    } else if (arg == "--device") {
      if (!(value = need_value(i))) return false;
      const std::string device = value;
      if (device != "cpu" && device != "cuda") {
        std::cerr << "conformance_runner: --device must be cpu or cuda, got '" << device << "'\n";
        return false;
      }
      options->device = device == "cuda" ? ucudnn::Device::kCuda : ucudnn::Device::kCpu;
    } else if (arg == "--math") {
      if (!(value = need_value(i))) return false;
      const std::string math = value;
      if (math != "tf32" && math != "fp32") {
        std::cerr << "conformance_runner: --math must be tf32 or fp32, got '" << math << "'\n";
        return false;
      }
      options->strict_fp32 = math == "fp32";
    } else if (arg == "--no-skip-file") {
      options->use_skip_file = false;
    } else if (arg == "--list-unexpected") {
      options->list_unexpected = true;
    } else if (arg == "--dump-unsupported") {
      options->dump_unsupported = true;
    } else if (arg == "--strict") {
      options->strict = true;
    } else if (arg == "--no-fork") {
      options->fork_cases = false;
    } else if (arg == "--verbose") {
      options->verbose = true;
    } else if (arg == "--threads" || arg == "--timeout" || arg == "--rtol" || arg == "--atol") {
      if (!(value = need_value(i))) return false;
      char* end = nullptr;
      const double number = std::strtod(value, &end);
      if (end == value || *end != '\0' || number < 0) {
        std::cerr << "conformance_runner: bad value '" << value << "' for " << arg << "\n";
        return false;
      }
      if (arg == "--threads") options->threads = static_cast<int>(number);
      else if (arg == "--timeout") options->timeout_s = std::max(1, static_cast<int>(number));
      else if (arg == "--rtol") options->tolerance.rtol = number;
      else options->tolerance.atol = number;
      if (arg == "--rtol" || arg == "--atol") options->tolerance_given = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "conformance_runner: unknown option " << arg << "\n" << kUsage;
      return false;
    } else {
      options->roots.push_back(arg);
    }
  }
  options->default_roots = options->roots.empty();
  if (options->default_roots)
    for (const char* sub : {"node", "pytorch-converted", "simple"})
      options->roots.push_back(std::string("/usr/share/libonnx-testdata/data/") + sub);
  if (!options->use_skip_file) {
    options->skip_files.clear();
  } else if (options->skip_files.empty()) {
    options->skip_files.push_back(default_skip_file("skipped.txt"));
    if (options->device == ucudnn::Device::kCuda) options->skip_files.push_back(default_skip_file("skipped_cuda.txt"));
  }
  if (options->device == ucudnn::Device::kCuda && !options->strict_fp32 && !options->tolerance_given)
    options->tolerance = {kTf32Rtol, kTf32Atol};
  return true;
}

// name -> reason, from lines "name  # reason" (blank lines and '#'-only lines ignored).
bool read_skip_list(const std::string& path, std::map<std::string, std::string>* skips) {
  std::ifstream file(path);
  if (!file) return false;
  std::string line;
  while (std::getline(file, line)) {
    std::string reason;
    if (auto hash = line.find('#'); hash != std::string::npos) {
      reason = line.substr(hash + 1);
      line.resize(hash);
    }
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(" \t\r"));
      s.erase(s.find_last_not_of(" \t\r") + 1);
      return s;
    };
    line = trim(line);
    if (!line.empty()) (*skips)[line] = trim(reason);
  }
  return true;
}

ucudnn::SessionOptions session_options(const Options& options) {
  ucudnn::SessionOptions session;
  session.device = options.device;
  session.math = options.strict_fp32 ? ucudnn::Math::kFp32 : ucudnn::Math::kTf32;
  session.threads = options.threads;
  session.progress = false;  // one bar per case would bury the results
  return session;
}

// Whether a usable GPU is present, asked in a child process (Note [CUDA and fork]).
bool gpu_present_in_child() {
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) _exit(ucudnn::cuda_available() ? 0 : 1);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

bool collect_cases(const Options& options, std::vector<Case>* cases) {
  for (const std::string& root : options.roots) {
    std::error_code error;
    if (!fs::is_directory(root, error)) {
      std::cerr << "conformance_runner: '" << root << "' is not a folder\n";
      return false;
    }
    if (fs::exists(fs::path(root) / "model.onnx")) {
      cases->push_back({fs::path(root).filename().string(), root});
      continue;
    }
    for (const auto& entry : fs::directory_iterator(root))
      if (entry.is_directory() && fs::exists(entry.path() / "model.onnx"))
        cases->push_back({entry.path().filename().string(), entry.path()});
  }
  std::sort(cases->begin(), cases->end(), [](const Case& a, const Case& b) { return a.name < b.name; });
  auto filtered_out = [&](const Case& c) {
    if (options.filters.empty()) return false;
    return std::none_of(options.filters.begin(), options.filters.end(),
                        [&](const std::string& f) { return c.name.find(f) != std::string::npos; });
  };
  cases->erase(std::remove_if(cases->begin(), cases->end(), filtered_out), cases->end());
  return true;
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Runs the case in a child process: the child writes the kind as one digit then
// the message to a pipe; a signal or a missing digit is a failure.
CaseResult run_forked(const Case& c, const Options& options) {
  int fds[2];
  if (pipe(fds) != 0) return {CaseResult::Kind::kFailed, std::string("pipe: ") + std::strerror(errno)};
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = fork();
  if (pid < 0) return {CaseResult::Kind::kFailed, std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    close(fds[0]);
    alarm(static_cast<unsigned>(options.timeout_s));
    CaseResult result = ucudnn::conformance::run_case(c.dir, session_options(options), options.tolerance);
    write_all(fds[1], std::to_string(static_cast<int>(result.kind)) + result.message);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string data;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    data.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    if (sig == SIGALRM)
      return {CaseResult::Kind::kFailed, "timed out after " + std::to_string(options.timeout_s) + " s"};
    return {CaseResult::Kind::kFailed, std::string("crashed with signal ") + std::to_string(sig) + " (" +
                                           strsignal(sig) + ")"};
  }
  if (data.empty() || data[0] < '0' || data[0] > '2')
    return {CaseResult::Kind::kFailed, "child exited without a result (status " + std::to_string(wait_status) + ")"};
  return {static_cast<CaseResult::Kind>(data[0] - '0'), data.substr(1)};
}

// The first line of a message; when it only introduces a list ("...: "), the first item too.
std::string first_line(const std::string& text) {
  const size_t end = text.find('\n');
  std::string line = text.substr(0, end);
  if (end != std::string::npos && !line.empty() && line.back() == ':') {
    std::string next = text.substr(end + 1, text.find('\n', end + 1) - end - 1);
    next.erase(0, next.find_first_not_of(" \t"));
    line += " " + next;
  }
  return line;
}

// The whole message on one line (" | " between lines), tabs turned into spaces.
std::string one_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string out;
  for (char ch : text) {
    if (ch == '\n') out += " | ";
    else out += ch == '\t' ? ' ' : ch;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse_args(argc, argv, &options)) return 2;
  std::map<std::string, std::string> skips;
  for (const std::string& skip_file : options.skip_files) {
    if (!read_skip_list(skip_file, &skips)) {
      std::cerr << "conformance_runner: cannot read skip list '" << skip_file
                << "' (use --skip-file PATH or --no-skip-file)\n";
      return 2;
    }
  }
  if (options.device == ucudnn::Device::kCuda) {
    const bool gpu = options.fork_cases ? gpu_present_in_child() : ucudnn::cuda_available();
    if (!gpu) {
      std::cerr << "conformance_runner: --device cuda, but this build has no CUDA backend or no usable GPU "
                   "is present; skipping\n";
      return 77;
    }
    std::cerr << "conformance_runner: on the GPU, " << (options.strict_fp32 ? "strict FP32" : "TF32 allowed")
              << ", rtol " << options.tolerance.rtol << ", atol " << options.tolerance.atol << "\n";
  }
  std::vector<Case> cases;
  if (!collect_cases(options, &cases)) return 2;
  if (cases.empty()) {
    std::cerr << "conformance_runner: no cases found\n";
    return 2;
  }

  int passed = 0, skipped = 0;
  std::vector<std::string> failures, unexpected, listed_but_pass;
  for (const Case& c : cases) {
    CaseResult result = options.fork_cases ? run_forked(c, options)
                                           : ucudnn::conformance::run_case(c.dir, session_options(options),
                                                                           options.tolerance);
    const bool listed = skips.count(c.name) > 0;
    std::string outcome;
    switch (result.kind) {
      case CaseResult::Kind::kPassed:
        ++passed;
        outcome = "passed";
        if (listed) listed_but_pass.push_back(c.name);
        break;
      case CaseResult::Kind::kUnsupported:
        if (options.dump_unsupported) std::cout << c.name << "\t" << one_line(result.message) << "\n";
        if (listed) {
          ++skipped;
          outcome = "skipped (" + skips[c.name] + ")";
        } else {
          unexpected.push_back(c.name + "  # " + first_line(result.message));
          failures.push_back(c.name + ": unsupported and not in the skip list: " + first_line(result.message));
          outcome = "FAILED (unsupported, not listed)";
        }
        break;
      case CaseResult::Kind::kFailed:
        failures.push_back(c.name + ": " + first_line(result.message) + (listed ? "  [listed as skipped]" : ""));
        outcome = "FAILED";
        break;
    }
    if (options.verbose) std::cerr << c.name << ": " << outcome << "\n";
  }

  std::vector<std::string> missing;
  std::map<std::string, bool> seen;
  for (const Case& c : cases) seen[c.name] = true;
  // Only a full run can tell that a listed case does not exist.
  if (options.default_roots && options.filters.empty())
    for (const auto& [name, reason] : skips)
      if (!seen.count(name)) missing.push_back(name);

  if (options.list_unexpected) {
    for (const std::string& line : unexpected) std::cout << line << "\n";
  } else if (!options.dump_unsupported) {
    if (!failures.empty()) {
      std::cout << "Failures:\n";
      for (const std::string& f : failures) std::cout << "  " << f << "\n";
    }
    if (!listed_but_pass.empty()) {
      std::string lists;
      for (const std::string& skip_file : options.skip_files) lists += (lists.empty() ? "" : " or ") + skip_file;
      std::cout << "Listed in " << lists << " but passing now (remove them):\n";
      for (const std::string& name : listed_but_pass) std::cout << "  " << name << "\n";
    }
    if (!missing.empty()) {
      std::cout << "Listed in the skip list but not found among the cases:\n";
      for (const std::string& name : missing) std::cout << "  " << name << "\n";
    }
  }
  // The summary goes to stderr in the listing modes so their stdout stays machine-readable.
  std::ostream& summary = (options.list_unexpected || options.dump_unsupported) ? std::cerr : std::cout;
  summary << passed << " passed, " << failures.size() << " failed, " << skipped << " skipped"
          << " (of " << cases.size() << " cases";
  if (!unexpected.empty()) summary << "; " << unexpected.size() << " unsupported but not listed";
  if (!listed_but_pass.empty()) summary << "; " << listed_but_pass.size() << " listed but passing";
  summary << ")\n";

  if (!failures.empty()) return 1;
  if (options.strict && (!listed_but_pass.empty() || !missing.empty())) return 1;
  return 0;
}
