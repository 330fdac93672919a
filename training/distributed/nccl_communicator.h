// NcclCommunicator: GPU ranks over NCCL (2.28 ships with the CUDA toolkit: nccl.h, libnccl.so),
// one GPU per process — device 0 of the process, which launch.h's select_local_gpu made the
// rank's GPU. Built with the CUDA backend when NCCL is found.
//
// Collectives run on the communicator's own stream and are waited for before returning
// (communicator.h). NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0 is set before NCCL
// starts unless the environment sets it, as the device documentation requires.
#pragma once

#include <memory>
#include <string>

#include "training/distributed/communicator.h"

namespace ucudnn::distributed {

constexpr size_t kNcclIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES

// A fresh NCCL unique id (kNcclIdBytes) for rank 0 to hand to the others.
Expected<std::string> nccl_unique_id();

// Joins rank `rank` of `size` to the NCCL communicator `id` on CUDA device 0 (ncclCommInitRank:
// returns once every rank has joined). `keep_alive` outlives the communicator (the MPI that
// carried the id under mpirun; may be null).
Expected<std::unique_ptr<Communicator>> make_nccl_communicator(int rank, int size, const std::string& id,
                                                               std::shared_ptr<Communicator> keep_alive);

}  // namespace ucudnn::distributed
