// Rank discovery and the rank's GPU (see launch.h).
#include "training/distributed/launch.h"

#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace ucudnn::distributed {

namespace {

constexpr int kMaxListedGpus = 64;  // indices visible_devices_for lists when CUDA_VISIBLE_DEVICES is unset

const char* kTorchrunHelp = " (a torchrun-style launch sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)";
const char* kMpirunHelp = " (under mpirun, Open MPI sets OMPI_COMM_WORLD_RANK, _SIZE and _LOCAL_RANK)";

// The variable `name` as an integer in [low, high]; `fallback` when unset and fallback >= low.
Expected<int> get_int(const EnvLookup& env, const char* name, int low, int high, int fallback, const char* help) {
  const char* text = env(name);
  if (text == nullptr || *text == '\0') {
    if (fallback >= low) return fallback;
    return invalid_argument(std::string(name) + " is not set" + help);
  }
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < low || value > high)
    return invalid_argument(std::string(name) + "='" + text + "' is not an integer in [" + std::to_string(low) + ", " +
                            std::to_string(high) + "]" + help);
  return static_cast<int>(value);
}

Status check_rank(const char* rank_name, int rank, const char* size_name, int size, const char* help) {
  if (rank >= size)
    return invalid_argument(std::string(rank_name) + "=" + std::to_string(rank) + " is not below " + size_name + "=" +
                            std::to_string(size) + help);
  return Status::ok();
}

Expected<World> mpirun_world(const EnvLookup& env) {
  World w;
  w.launcher = Launcher::kMpirun;
  UCUDNN_ASSIGN_OR_RETURN(w.size, get_int(env, "OMPI_COMM_WORLD_SIZE", 1, 1 << 24, -1, kMpirunHelp));
  UCUDNN_ASSIGN_OR_RETURN(w.rank, get_int(env, "OMPI_COMM_WORLD_RANK", 0, 1 << 24, -1, kMpirunHelp));
  UCUDNN_ASSIGN_OR_RETURN(w.local_rank, get_int(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0, 1 << 24, -1, kMpirunHelp));
  UCUDNN_ASSIGN_OR_RETURN(w.local_size, get_int(env, "OMPI_COMM_WORLD_LOCAL_SIZE", 1, 1 << 24, w.size, kMpirunHelp));
  UCUDNN_RETURN_IF_ERROR(check_rank("OMPI_COMM_WORLD_RANK", w.rank, "OMPI_COMM_WORLD_SIZE", w.size, kMpirunHelp));
  UCUDNN_RETURN_IF_ERROR(check_rank("OMPI_COMM_WORLD_LOCAL_RANK", w.local_rank, "OMPI_COMM_WORLD_LOCAL_SIZE",
                                    w.local_size, kMpirunHelp));
  return w;
}

Expected<World> torchrun_world(const EnvLookup& env) {
  World w;
  w.launcher = Launcher::kTorchrun;
  UCUDNN_ASSIGN_OR_RETURN(w.size, get_int(env, "WORLD_SIZE", 1, 1 << 24, -1, kTorchrunHelp));
  UCUDNN_ASSIGN_OR_RETURN(w.rank, get_int(env, "RANK", 0, 1 << 24, -1, kTorchrunHelp));
  UCUDNN_ASSIGN_OR_RETURN(w.local_rank, get_int(env, "LOCAL_RANK", 0, 1 << 24, -1, kTorchrunHelp));
  UCUDNN_ASSIGN_OR_RETURN(w.local_size, get_int(env, "LOCAL_WORLD_SIZE", 1, 1 << 24, w.size, kTorchrunHelp));
  UCUDNN_RETURN_IF_ERROR(check_rank("RANK", w.rank, "WORLD_SIZE", w.size, kTorchrunHelp));
  UCUDNN_RETURN_IF_ERROR(check_rank("LOCAL_RANK", w.local_rank, "LOCAL_WORLD_SIZE", w.local_size, kTorchrunHelp));
  if (w.size > 1) {
    const char* addr = env("MASTER_ADDR");
    if (addr == nullptr || *addr == '\0')
      return invalid_argument(std::string("MASTER_ADDR is not set: the ranks meet at rank 0's host") + kTorchrunHelp);
    w.master_addr = addr;
    UCUDNN_ASSIGN_OR_RETURN(w.rendezvous_port, rendezvous_port(env));
  }
  return w;
}

}  // namespace

std::string World::describe() const {
  const char* how = launcher == Launcher::kMpirun ? "mpirun" : launcher == Launcher::kTorchrun ? "torchrun-style"
                                                                                                : "one process";
  return "rank " + std::to_string(rank) + " of " + std::to_string(size) + " (local rank " + std::to_string(local_rank) +
         ", " + how + ")";
}

EnvLookup process_environment() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

Expected<World> discover_world(const EnvLookup& env) {
  if (env("OMPI_COMM_WORLD_SIZE") != nullptr) return mpirun_world(env);
  if (env("WORLD_SIZE") != nullptr || env("RANK") != nullptr) return torchrun_world(env);
  return World{};
}

Expected<int> rendezvous_port(const EnvLookup& env) {
  if (env("UCUDNN_RENDEZVOUS_PORT") != nullptr)
    return get_int(env, "UCUDNN_RENDEZVOUS_PORT", 1, 65535, -1, " (the port rank 0 listens on for the others)");
  UCUDNN_ASSIGN_OR_RETURN(int port, get_int(env, "MASTER_PORT", 1, 65535, -1, kTorchrunHelp));
  if (env("TORCHELASTIC_RUN_ID") == nullptr) return port;
  if (port == 65535) return invalid_argument("MASTER_PORT=65535 under torchrun leaves no port above it for ucudnn's "
                                             "rendezvous: set UCUDNN_RENDEZVOUS_PORT");
  return port + 1;
}

Expected<std::string> visible_devices_for(int local_rank, const char* current) {
  if (local_rank < 0) return invalid_argument("local rank " + std::to_string(local_rank) + " is negative");
  std::vector<std::string> entries;
  if (current == nullptr) {
    for (int i = 0; i < kMaxListedGpus; ++i) entries.push_back(std::to_string(i));
  } else {
    std::string_view rest(current);
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      std::string_view entry = rest.substr(0, comma);
      if (!entry.empty()) entries.emplace_back(entry);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  if (static_cast<size_t>(local_rank) >= entries.size())
    return invalid_argument("local rank " + std::to_string(local_rank) + " has no GPU: CUDA_VISIBLE_DEVICES='" +
                            (current ? current : "") + "' lists " + std::to_string(entries.size()) +
                            " (one GPU per rank on a host)");
  std::string value = entries[static_cast<size_t>(local_rank)];
  for (size_t i = 0; i < entries.size(); ++i)
    if (i != static_cast<size_t>(local_rank)) value += "," + entries[i];
  return value;
}

Status select_local_gpu(const World& world) {
  const char* current = std::getenv("CUDA_VISIBLE_DEVICES");
  UCUDNN_ASSIGN_OR_RETURN(std::string value, visible_devices_for(world.local_rank, current));
  if (::setenv("CUDA_VISIBLE_DEVICES", value.c_str(), 1) != 0)
    return internal_error("cannot set CUDA_VISIBLE_DEVICES for " + world.describe());
  return Status::ok();
}

}  // namespace ucudnn::distributed
