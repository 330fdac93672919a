// MpiCommunicator (see mpi_communicator.h). Counts above INT_MAX go in pieces (MPI takes int).
#include "training/distributed/mpi_communicator.h"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <string>
#include <thread>

namespace ucudnn::distributed {

namespace {

Status check_mpi(int code, const std::string& what) {
  if (code == MPI_SUCCESS) return Status::ok();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return device_error("MPI " + what + " failed: " + std::string(text, static_cast<size_t>(length)));
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kMin: return MPI_MIN;
    case ReduceOp::kSum:
    case ReduceOp::kAverage: break;
  }
  return MPI_SUM;
}

constexpr size_t kPiece = INT_MAX / 8;  // elements per call, for any element size

}  // namespace

Expected<std::unique_ptr<MpiCommunicator>> MpiCommunicator::create() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  bool finalize = false;
  if (!initialized) {
    int provided = 0;
    UCUDNN_RETURN_IF_ERROR(check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init"));
    finalize = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  UCUDNN_RETURN_IF_ERROR(check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank"));
  UCUDNN_RETURN_IF_ERROR(check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size"));
  return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(rank, size, finalize));
}

MpiCommunicator::~MpiCommunicator() {
  if (finalize_) MPI_Finalize();
}

Status MpiCommunicator::all_reduce(float* data, size_t count, ReduceOp op) {
  for (size_t done = 0; done < count; done += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, count - done));
    UCUDNN_RETURN_IF_ERROR(check_mpi(MPI_Allreduce(MPI_IN_PLACE, data + done, n, MPI_FLOAT, mpi_op(op), MPI_COMM_WORLD),
                                     "MPI_Allreduce of " + std::to_string(count) + " floats"));
  }
  if (op == ReduceOp::kAverage) {
    const float scale = 1.0f / static_cast<float>(size_);
    for (size_t i = 0; i < count; ++i) data[i] *= scale;
  }
  return Status::ok();
}

Status MpiCommunicator::all_reduce_host(double* values, size_t count, ReduceOp op) {
  if (count > kMaxHostValues)
    return invalid_argument("all_reduce_host takes at most " + std::to_string(kMaxHostValues) + " values");
  UCUDNN_RETURN_IF_ERROR(check_mpi(
      MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE, mpi_op(op), MPI_COMM_WORLD),
      "MPI_Allreduce"));
  if (op == ReduceOp::kAverage)
    for (size_t i = 0; i < count; ++i) values[i] /= size_;
  return Status::ok();
}

Status MpiCommunicator::broadcast(void* data, size_t bytes, int root) {
  UCUDNN_RETURN_IF_ERROR(check_root(*this, root));
  auto* p = static_cast<char*>(data);
  for (size_t done = 0; done < bytes; done += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, bytes - done));
    UCUDNN_RETURN_IF_ERROR(check_mpi(MPI_Bcast(p + done, n, MPI_BYTE, root, MPI_COMM_WORLD),
                                     "MPI_Bcast of " + std::to_string(bytes) + " bytes"));
  }
  return Status::ok();
}

Status MpiCommunicator::barrier() {
  MPI_Request request;
  UCUDNN_RETURN_IF_ERROR(check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier"));
  for (;;) {
    int done = 0;
    UCUDNN_RETURN_IF_ERROR(check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test"));
    if (done) return Status::ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace ucudnn::distributed
