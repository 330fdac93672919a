// Training checkpoints: everything a run needs to continue where it stopped — named tensors
// (parameters, optimizer state, BatchNorm running statistics), the step and epoch counters, the
// random generators' state, a fingerprint of the training graph and the optimizer's configuration.
//
// File format, version 1 (all integers little-endian; no padding):
//   char[8]  magic "UCDNCKPT"
//   u32      format version (1)
//   u64      file size in bytes, this header and the checksum included
//   i64      step (updates done), i64 epoch
//   u32      R, then R × u64: RNG state
//   u32 n + n bytes: graph fingerprint;  u32 n + n bytes: optimizer configuration
//   u32      T, then T tensor records, each:
//              u32 n + n bytes: name (non-empty, unique)
//              u32 dtype as ONNX's TensorProto code (1 float32, 7 int64), u32 rank (<= 8), i64 × rank dims
//              numel × dtype bytes: the data, row-major
//   u64      FNV-1a 64 of every byte before it
// Reading checks every size against the bytes the file really has before allocating anything, so a
// truncated, corrupt or lying file is an InvalidArgument naming the file and what is wrong (never a
// crash or an allocation beyond the file's size); reading never writes. Saving writes a temporary file
// beside the destination, fsyncs it and renames it over the destination (then fsyncs the folder): an
// interrupted save leaves the previous checkpoint whole.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace ucudnn::training {

inline constexpr uint32_t kCheckpointVersion = 1;

struct Checkpoint {
  std::map<std::string, Tensor> tensors;  // float32 or int64, by name ("conv1.weight", "conv1.weight.exp_avg")
  int64_t step = 0;                       // updates done
  int64_t epoch = 0;                      // epochs done
  std::vector<uint64_t> rng_state;        // the trainer's random generators (data order, dropout seeds)
  std::string graph_fingerprint;          // identifies the training graph the tensors belong to
  std::string optimizer_config;           // the optimizer and its hyper-parameters, as the trainer writes them
};

// Writes `checkpoint` to `path` atomically and durably (see above). InvalidArgument for a tensor that is
// not float32/int64, has no data or an empty name; IoError naming the file when writing fails (the
// destination is then untouched and the temporary file removed).
Status save_checkpoint(const std::string& path, const Checkpoint& checkpoint);

// Reads a checkpoint written by save_checkpoint. NotFound when `path` does not exist; Unsupported for a
// newer format version; InvalidArgument naming the file and the problem for anything else wrong with it.
Expected<Checkpoint> load_checkpoint(const std::string& path);

}  // namespace ucudnn::training
