// Rank discovery: which rank of how many this process is, from the environment its launcher set
// (docs/TRAINING.md, "Several GPUs"), and which GPU it trains on.
//
//   mpirun (Open MPI)   OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
//                       [, OMPI_COMM_WORLD_LOCAL_SIZE]; NCCL's id travels by MPI_Bcast.
//   torchrun-style      RANK, WORLD_SIZE, LOCAL_RANK [, LOCAL_WORLD_SIZE], MASTER_ADDR, MASTER_PORT
//                       (`ucudnn train --gpus N` sets these for its N processes); NCCL's id travels
//                       by a TCP rendezvous at MASTER_ADDR (rendezvous.h).
//   neither             one process.
//
// One GPU per rank, LOCAL_RANK's: select_local_gpu puts it first in CUDA_VISIBLE_DEVICES, before
// CUDA starts, so that everything in the process that uses "device 0" (the backend, the
// benchmarker) uses the rank's GPU, while the other GPUs stay visible for NCCL's peer-to-peer
// transport (hiding them would keep NCCL from CUDA IPC, NVIDIA/nccl#129).
#pragma once

#include <functional>
#include <string>

#include "runtime/core/status.h"

namespace ucudnn::distributed {

enum class Launcher { kNone, kMpirun, kTorchrun };

struct World {
  Launcher launcher = Launcher::kNone;
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  std::string master_addr;  // torchrun-style launches with more than one rank
  int rendezvous_port = 0;  // where rank 0 hands out NCCL's id (rendezvous_port() below)
  bool distributed() const { return launcher != Launcher::kNone; }
  // "rank 1 of 4 (local rank 1, torchrun-style)"
  std::string describe() const;
};

// The environment, as std::getenv reads it (nullptr: unset); tests pass their own.
using EnvLookup = std::function<const char*(const char* name)>;
EnvLookup process_environment();

// The world the environment describes; InvalidArgument naming the variable and its value for
// anything malformed or inconsistent (a rank outside the world, a missing LOCAL_RANK or
// MASTER_ADDR, a port outside 1..65535).
Expected<World> discover_world(const EnvLookup& env);

// The port of the TCP rendezvous of a torchrun-style launch: UCUDNN_RENDEZVOUS_PORT when set; else
// MASTER_PORT, or MASTER_PORT + 1 under torchrun itself (TORCHELASTIC_RUN_ID set: its agent's
// store holds MASTER_PORT).
Expected<int> rendezvous_port(const EnvLookup& env);

// CUDA_VISIBLE_DEVICES for the rank with `local_rank`, from the current value (`current`, nullptr
// when unset): its entry moved to the front. Unset: "k,0,1,…" with every other index up to 63
// (CUDA ends the list at the first index that names no GPU). InvalidArgument when `current`
// lists no more than local_rank GPUs.
Expected<std::string> visible_devices_for(int local_rank, const char* current);

// Sets CUDA_VISIBLE_DEVICES for world.local_rank (visible_devices_for) in this process's
// environment. Must run before anything in the process uses CUDA.
Status select_local_gpu(const World& world);

}  // namespace ucudnn::distributed
