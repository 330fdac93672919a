// run_local_ranks (see local_ranks.h): fork + exec, then waitpid until every rank is done.
#include "training/distributed/local_ranks.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "training/distributed/rendezvous.h"

namespace ucudnn::distributed {

namespace {

constexpr int kInterrupted = 130;  // `ucudnn train` after Ctrl-C (checkpoint saved)

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

// Stops the ranks still running: SIGTERM now, SIGKILL to those alive after 10 s.
void stop_all(std::vector<pid_t>& pids) {
  for (pid_t pid : pids)
    if (pid > 0) ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    bool alive = false;
    for (pid_t& pid : pids) {
      if (pid <= 0) continue;
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) pid = -1;
      else alive = true;
    }
    if (!alive) return;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (pid_t& pid : pids)
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      pid = -1;
    }
}

// In the child: the rank's environment, then exec; never returns.
[[noreturn]] void exec_rank(const std::vector<std::string>& argv, int rank, int count, int port) {
  const std::string r = std::to_string(rank), n = std::to_string(count), p = std::to_string(port);
  ::setenv("RANK", r.c_str(), 1);
  ::setenv("LOCAL_RANK", r.c_str(), 1);
  ::setenv("WORLD_SIZE", n.c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", n.c_str(), 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", p.c_str(), 1);
  ::unsetenv("UCUDNN_RENDEZVOUS_PORT");
  ::unsetenv("TORCHELASTIC_RUN_ID");
  ::signal(SIGINT, SIG_DFL);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  std::fprintf(stderr, "ucudnn: error: rank %d: cannot run %s: %s\n", rank, args[0], std::strerror(errno));
  std::_Exit(127);
}

}  // namespace

Expected<int> run_local_ranks(const std::vector<std::string>& argv, int count) {
  if (argv.empty()) return invalid_argument("run_local_ranks: no program to run");
  if (count < 1) return invalid_argument("run_local_ranks: " + std::to_string(count) + " ranks");
  UCUDNN_ASSIGN_OR_RETURN(int port, free_local_port());
  std::fflush(nullptr);  // nothing buffered is written twice by the children
  struct sigaction ignore{}, previous{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &previous);
  std::vector<pid_t> pids;
  for (int rank = 0; rank < count; ++rank) {
    const pid_t pid = ::fork();
    if (pid == 0) exec_rank(argv, rank, count, port);
    if (pid < 0) {
      const std::string why = std::strerror(errno);
      stop_all(pids);
      ::sigaction(SIGINT, &previous, nullptr);
      return io_error("cannot start rank " + std::to_string(rank) + ": fork failed: " + why);
    }
    pids.push_back(pid);
  }
  int result = 0;
  for (size_t running = pids.size(); running > 0;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    size_t rank = 0;
    while (rank < pids.size() && pids[rank] != pid) ++rank;
    if (rank == pids.size()) continue;  // not one of ours
    pids[rank] = -1;
    --running;
    if (exit_code(status) == kInterrupted) {
      if (result == 0) result = kInterrupted;  // Ctrl-C: every rank saves and stops by itself
    } else if (exit_code(status) != 0 && (result == 0 || result == kInterrupted)) {
      result = exit_code(status);
      std::fprintf(stderr, "ucudnn: rank %zu of %d %s %d; stopping the other ranks\n", rank, count,
                   WIFEXITED(status) ? "exited with status" : "was killed by signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      stop_all(pids);
      running = 0;
    }
  }
  ::sigaction(SIGINT, &previous, nullptr);
  return result;
}

}  // namespace ucudnn::distributed
