// The communicator of this process's rank (communicator.h) for the world its launcher described
// (launch.h), and what this build and host offer: the one place that knows which transports exist.
//
//   GPU ranks: NCCL. Rank 0 makes the id; under mpirun MPI_Bcast carries it, in a torchrun-style
//              launch the TCP rendezvous (rendezvous.h), in a world of one nothing.
//   CPU ranks: Open MPI under mpirun; one process: SingleRankCommunicator.
#pragma once

#include <memory>

#include "training/distributed/communicator.h"
#include "training/distributed/launch.h"

namespace ucudnn::distributed {

// Whether this build has NCCL (with the CUDA backend) and Open MPI (UCUDNN_MPI).
bool have_nccl();
bool have_mpi();
// CUDA devices the process sees (0 without the CUDA backend, a driver or a GPU). Starts CUDA:
// call it in a process that launches ranks, not in a rank before select_local_gpu.
int gpu_count();

// Joins `world` for ranks on the GPU (`gpu`: NCCL on device 0) or the CPU (host memory).
// Unsupported, saying what to install or how to launch instead, when this build or launch
// cannot: GPU ranks without NCCL, CPU ranks of more than one process without mpirun and MPI.
// `rendezvous_timeout_seconds`: how long the ranks of a torchrun-style launch wait for each other.
Expected<std::shared_ptr<Communicator>> connect_world(const World& world, bool gpu,
                                                      double rendezvous_timeout_seconds = 300);

}  // namespace ucudnn::distributed
