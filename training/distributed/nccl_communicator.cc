// NcclCommunicator (see nccl_communicator.h).
#include "training/distributed/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>

namespace ucudnn::distributed {

static_assert(kNcclIdBytes == NCCL_UNIQUE_ID_BYTES);

namespace {

Status check_cuda(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return Status::ok();
  return device_error("CUDA error in " + what + ": " + cudaGetErrorString(e));
}

Status check_nccl(ncclResult_t r, ncclComm_t comm, const std::string& what) {
  if (r == ncclSuccess) return Status::ok();
  std::string message = "NCCL " + what + " failed: " + ncclGetErrorString(r);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') message += std::string(" (") + last + ")";
  return device_error(message + "; NCCL_DEBUG=INFO says more");
}

// Before NCCL reads its environment (nccl_communicator.h).
void keep_nvls_off() { ::setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0); }

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kAverage: return ncclAvg;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
  }
  return ncclSum;
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(int rank, int size, std::shared_ptr<Communicator> keep_alive)
      : rank_(rank), size_(size), keep_alive_(std::move(keep_alive)) {}
  ~NcclCommunicator() override {
    if (comm_ != nullptr) ncclCommDestroy(comm_);
    if (ready_ != nullptr) cudaEventDestroy(ready_);
    if (staging_ != nullptr) cudaFree(staging_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  Status init(const std::string& id) {
    UCUDNN_RETURN_IF_ERROR(check_cuda(cudaSetDevice(0), "selecting the rank's GPU (device 0)"));
    UCUDNN_RETURN_IF_ERROR(check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating a stream"));
    UCUDNN_RETURN_IF_ERROR(check_cuda(cudaMalloc(&staging_, kMaxHostValues * sizeof(double)), "allocating 512 bytes"));
    UCUDNN_RETURN_IF_ERROR(check_cuda(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "creating an event"));
    ncclUniqueId unique;
    std::memcpy(unique.internal, id.data(), sizeof unique.internal);
    return check_nccl(ncclCommInitRank(&comm_, size_, unique, rank_), nullptr,
                      "ncclCommInitRank (rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ")");
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* name() const override { return "nccl"; }
  bool device_memory() const override { return true; }

  Status all_reduce(float* data, size_t count, ReduceOp op) override {
    UCUDNN_RETURN_IF_ERROR(check_nccl(ncclAllReduce(data, data, count, ncclFloat, nccl_op(op), comm_, stream_), comm_,
                                      "ncclAllReduce of " + std::to_string(count) + " floats"));
    return wait("ncclAllReduce");
  }

  Status start_all_reduce(float* data, size_t count, ReduceOp op, void* after) override {
    if (after != nullptr) {  // the communicator's stream waits for the work queued on `after` so far
      UCUDNN_RETURN_IF_ERROR(
          check_cuda(cudaEventRecord(ready_, static_cast<cudaStream_t>(after)), "recording an event"));
      UCUDNN_RETURN_IF_ERROR(check_cuda(cudaStreamWaitEvent(stream_, ready_, 0), "waiting for an event"));
    }
    return check_nccl(ncclAllReduce(data, data, count, ncclFloat, nccl_op(op), comm_, stream_), comm_,
                      "ncclAllReduce of " + std::to_string(count) + " floats");
  }

  Status wait_reductions() override { return wait("ncclAllReduce"); }

  Status all_reduce_host(double* values, size_t count, ReduceOp op) override {
    if (count > kMaxHostValues)
      return invalid_argument("all_reduce_host takes at most " + std::to_string(kMaxHostValues) + " values");
    const size_t bytes = count * sizeof(double);
    UCUDNN_RETURN_IF_ERROR(check_cuda(cudaMemcpyAsync(staging_, values, bytes, cudaMemcpyHostToDevice, stream_),
                                      "copying values to reduce to the GPU"));
    UCUDNN_RETURN_IF_ERROR(check_nccl(ncclAllReduce(staging_, staging_, count, ncclDouble, nccl_op(op), comm_, stream_),
                                      comm_, "ncclAllReduce of " + std::to_string(count) + " doubles"));
    UCUDNN_RETURN_IF_ERROR(check_cuda(cudaMemcpyAsync(values, staging_, bytes, cudaMemcpyDeviceToHost, stream_),
                                      "copying reduced values to the host"));
    return wait("ncclAllReduce");
  }

  Status broadcast(void* data, size_t bytes, int root) override {
    UCUDNN_RETURN_IF_ERROR(check_root(*this, root));
    UCUDNN_RETURN_IF_ERROR(check_nccl(ncclBroadcast(data, data, bytes, ncclUint8, root, comm_, stream_), comm_,
                                      "ncclBroadcast of " + std::to_string(bytes) + " bytes"));
    return wait("ncclBroadcast");
  }

  Status barrier() override {
    double zero = 0;
    return all_reduce_host(&zero, 1, ReduceOp::kSum);
  }

 private:
  Status wait(const std::string& what) { return check_cuda(cudaStreamSynchronize(stream_), what); }

  int rank_, size_;
  std::shared_ptr<Communicator> keep_alive_;
  cudaStream_t stream_ = nullptr;
  double* staging_ = nullptr;  // all_reduce_host's values on the GPU
  cudaEvent_t ready_ = nullptr;  // start_all_reduce's point on the caller's stream
  ncclComm_t comm_ = nullptr;
};

}  // namespace

Expected<std::string> nccl_unique_id() {
  keep_nvls_off();
  ncclUniqueId id;
  UCUDNN_RETURN_IF_ERROR(check_nccl(ncclGetUniqueId(&id), nullptr, "ncclGetUniqueId"));
  return std::string(id.internal, sizeof id.internal);
}

Expected<std::unique_ptr<Communicator>> make_nccl_communicator(int rank, int size, const std::string& id,
                                                               std::shared_ptr<Communicator> keep_alive) {
  if (id.size() != NCCL_UNIQUE_ID_BYTES)
    return invalid_argument("an NCCL unique id is " + std::to_string(NCCL_UNIQUE_ID_BYTES) + " bytes, got " +
                            std::to_string(id.size()));
  keep_nvls_off();
  auto communicator = std::make_unique<NcclCommunicator>(rank, size, std::move(keep_alive));
  UCUDNN_RETURN_IF_ERROR(communicator->init(id));
  return std::unique_ptr<Communicator>(std::move(communicator));
}

}  // namespace ucudnn::distributed
