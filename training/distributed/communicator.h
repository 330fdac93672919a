// Communicator: how the ranks of a data-parallel training run (docs/TRAINING.md, "Several GPUs")
// sum their gradients, share rank 0's weights and wait for each other.
//
// One process per rank. A communicator works on one kind of memory: the CUDA device the process
// selected (NcclCommunicator, nccl_communicator.h) or host memory (MpiCommunicator for CPU ranks,
// mpi_communicator.h; SingleRankCommunicator below). Every call is collective — all ranks make
// the same calls in the same order with the same counts — and blocking: it returns once the result
// is in this rank's buffer, so the caller's own streams need only be idle before the call (a GPU
// communicator queues on its own stream and waits for it).
#pragma once

#include <cstddef>
#include <memory>

#include "runtime/core/status.h"

namespace ucudnn::distributed {

enum class ReduceOp { kSum, kAverage, kMax, kMin };

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "nccl", "mpi", "single": what reports and errors name.
  virtual const char* name() const = 0;
  // True: the buffers below are device memory of the CUDA device that was current at creation
  // (device 0 of the process, launch.h); false: host memory.
  virtual bool device_memory() const = 0;

  // Reduces `count` floats in place across ranks (kAverage: the sum divided by size()).
  virtual Status all_reduce(float* data, size_t count, ReduceOp op) = 0;
  // The same on a few host doubles, whatever the communicator's memory (checks, losses,
  // checksums): at most kMaxHostValues.
  static constexpr size_t kMaxHostValues = 64;
  virtual Status all_reduce_host(double* values, size_t count, ReduceOp op) = 0;
  // Overlapping the reduction with other work (the backward pass): reduces like all_reduce, once
  // the work queued so far on `after` — a stream's native handle (runtime::Backend::native_stream)
  // of this communicator's device; nullptr when that work is done already — is done, and may return
  // before the result is in place: wait_reductions() returns once every reduction started so far
  // is. Buffers must not be touched in between. The defaults reduce at once.
  virtual Status start_all_reduce(float* data, size_t count, ReduceOp op, void* after) {
    (void)after;
    return all_reduce(data, count, op);
  }
  virtual Status wait_reductions() { return Status::ok(); }
  // Copies `bytes` of rank `root`'s buffer into every other rank's.
  virtual Status broadcast(void* data, size_t bytes, int root) = 0;
  // Returns once every rank has called it.
  virtual Status barrier() = 0;
};

// The world of one process: every call leaves the data as it is (kAverage of one rank is the value).
class SingleRankCommunicator final : public Communicator {
 public:
  explicit SingleRankCommunicator(bool device_memory = false) : device_memory_(device_memory) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* name() const override { return "single"; }
  bool device_memory() const override { return device_memory_; }
  Status all_reduce(float*, size_t, ReduceOp) override { return Status::ok(); }
  Status all_reduce_host(double*, size_t count, ReduceOp) override;
  Status broadcast(void*, size_t, int root) override;
  Status barrier() override { return Status::ok(); }

 private:
  bool device_memory_;
};

// InvalidArgument unless 0 <= root < size.
Status check_root(const Communicator& communicator, int root);

}  // namespace ucudnn::distributed
