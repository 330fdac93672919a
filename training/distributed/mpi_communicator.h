// MpiCommunicator: the ranks of an `mpirun` launch over Open MPI, on host memory — CPU training
// ranks, and under mpirun the carrier of NCCL's id to the GPU ranks (connect.cc). Built when
// Open MPI is found (libopenmpi-dev; UCUDNN_MPI), like oneDNN an optional dependency.
#pragma once

#include <memory>

#include "training/distributed/communicator.h"

namespace ucudnn::distributed {

class MpiCommunicator final : public Communicator {
 public:
  // MPI_Init_thread (MPI_THREAD_FUNNELED: only the thread that trains calls MPI) unless MPI is
  // initialised already; errors are returned, not fatal. The destructor calls MPI_Finalize when
  // create initialised MPI (one communicator per process).
  static Expected<std::unique_ptr<MpiCommunicator>> create();
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* name() const override { return "mpi"; }
  bool device_memory() const override { return false; }
  Status all_reduce(float* data, size_t count, ReduceOp op) override;
  Status all_reduce_host(double* values, size_t count, ReduceOp op) override;
  Status broadcast(void* data, size_t bytes, int root) override;
  // Waits without spinning (MPI_Ibarrier, then a test every millisecond): a rank that waits for
  // rank 0's benchmarks leaves the cores to them.
  Status barrier() override;

 private:
  MpiCommunicator(int rank, int size, bool finalize) : rank_(rank), size_(size), finalize_(finalize) {}
  int rank_, size_;
  bool finalize_;
};

}  // namespace ucudnn::distributed
