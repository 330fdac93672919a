// connect_world and the build's transports (see connect.h).
#include "training/distributed/connect.h"

#include "training/distributed/rendezvous.h"
#ifdef UCUDNN_HAVE_NCCL
#include <cuda_runtime_api.h>

#include "training/distributed/nccl_communicator.h"
#endif
#ifdef UCUDNN_HAVE_MPI
#include "training/distributed/mpi_communicator.h"
#endif

namespace ucudnn::distributed {

namespace {

Expected<std::shared_ptr<Communicator>> connect_mpi() {
#ifdef UCUDNN_HAVE_MPI
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<MpiCommunicator> mpi, MpiCommunicator::create());
  return std::shared_ptr<Communicator>(std::move(mpi));
#else
  return unsupported("this build of ucudnn has no MPI (install Open MPI: apt-get install libopenmpi-dev openmpi-bin, "
                     "then configure again); without it, launch GPU ranks torchrun-style (RANK, WORLD_SIZE, "
                     "LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or with `ucudnn train --gpus N`");
#endif
}

Status check_mpi_world(const Communicator& mpi, const World& world) {
  if (mpi.rank() != world.rank || mpi.size() != world.size)
    return invalid_argument("MPI says rank " + std::to_string(mpi.rank()) + " of " + std::to_string(mpi.size()) +
                            ", the environment " + world.describe());
  return Status::ok();
}

#ifdef UCUDNN_HAVE_NCCL
Expected<std::shared_ptr<Communicator>> connect_nccl(const World& world, double timeout) {
  std::string id;
  if (world.rank == 0) {
    UCUDNN_ASSIGN_OR_RETURN(id, nccl_unique_id());
  }
  std::shared_ptr<Communicator> mpi;
  if (world.launcher == Launcher::kMpirun && world.size > 1) {
    UCUDNN_ASSIGN_OR_RETURN(mpi, connect_mpi());
    UCUDNN_RETURN_IF_ERROR(check_mpi_world(*mpi, world));
    id.resize(kNcclIdBytes);
    UCUDNN_RETURN_IF_ERROR(mpi->broadcast(id.data(), id.size(), 0));
  } else if (world.size > 1) {
    RendezvousOptions r{world.master_addr, world.rendezvous_port, world.rank, world.size, timeout};
    UCUDNN_ASSIGN_OR_RETURN(id, rendezvous_broadcast(r, id));
  }
  UCUDNN_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> nccl,
                          make_nccl_communicator(world.rank, world.size, id, std::move(mpi)));
  return std::shared_ptr<Communicator>(std::move(nccl));
}
#endif

}  // namespace

bool have_nccl() {
#ifdef UCUDNN_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

bool have_mpi() {
#ifdef UCUDNN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

int gpu_count() {
#ifdef UCUDNN_HAVE_NCCL
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
#else
  return 0;
#endif
}

Expected<std::shared_ptr<Communicator>> connect_world(const World& world, bool gpu, double rendezvous_timeout_seconds) {
  if (gpu) {
#ifdef UCUDNN_HAVE_NCCL
    return connect_nccl(world, rendezvous_timeout_seconds);
#else
    (void)rendezvous_timeout_seconds;
    return unsupported("GPU ranks need NCCL, and this build of ucudnn has none (it comes with the CUDA toolkit: "
                       "nccl.h and libnccl.so; configure with the CUDA backend)");
#endif
  }
  if (world.size == 1) return std::shared_ptr<Communicator>(std::make_shared<SingleRankCommunicator>());
  if (world.launcher != Launcher::kMpirun)
    return unsupported("a torchrun-style launch of " + std::to_string(world.size) + " ranks on the CPU: CPU ranks "
                       "talk through MPI, so launch them with mpirun (mpirun -np N ucudnn train ... --device cpu)");
  UCUDNN_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> mpi, connect_mpi());
  UCUDNN_RETURN_IF_ERROR(check_mpi_world(*mpi, world));
  return mpi;
}

}  // namespace ucudnn::distributed
