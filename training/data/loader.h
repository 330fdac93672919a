// DataLoader: batches of a Dataset for one epoch after another — images float32 [B, C, H, W] and
// labels int64 [B] in host memory — read by a pool of threads that work up to `prefetch` batches
// ahead of the batch the caller holds, so decoding overlaps the training step.
//
// Epoch e visits the samples in epoch_order(size, shuffle, seed, e) (random.h: std::mt19937_64
// seeded with seed + e, Fisher–Yates); batch b holds positions [b·B, (b+1)·B) of that order; the
// last, shorter batch is dropped when drop_last is set. Sample i of epoch e is loaded with seed
// sample_seed(seed, e, i). In data-parallel training (world_size > 1) each rank's loader visits
// only its share of the order (shard_order, random.h): rank r's batch b is the r-th slice of
// global batch b. Each sample is written to its own place in the batch, so the batches
// are the same bytes whatever the number of threads and however they are scheduled.
//
// Memory: prefetch + 1 batch buffers, allocated once when the loader is created; the batch
// next() returns points into one and stays valid until the following next()/start_epoch().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "training/data/dataset.h"

namespace ucudnn::data {

struct LoaderOptions {
  int64_t batch_size = 32;
  bool shuffle = true;     // false: the data set's own order
  bool drop_last = false;  // drop the last batch when it is shorter than batch_size
  uint64_t seed = 0;
  int num_threads = 4;     // 0: load in the calling thread, inside next()
  int prefetch = 2;        // batches read ahead of the one the caller holds (>= 1)
  int rank = 0, world_size = 1;  // data-parallel training: this rank's share (needs drop_last)
};

struct Batch {
  Tensor images;      // float32 [B, C, H, W], a view of the loader's buffer
  Tensor labels;      // int64 [B], likewise
  int64_t index = 0;  // position in the epoch
  int64_t epoch = 0;
};

class DataLoader {
 public:
  // InvalidArgument for batch_size < 1, prefetch < 1, num_threads < 0, drop_last with fewer
  // samples than one batch, a rank outside [0, world_size), and several ranks without drop_last
  // or with fewer samples than one global batch; OutOfMemory when the batch buffers cannot be allocated.
  static Expected<std::unique_ptr<DataLoader>> create(std::shared_ptr<const Dataset> dataset,
                                                      const LoaderOptions& options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  const Dataset& dataset() const { return *dataset_; }
  const LoaderOptions& options() const { return options_; }
  int64_t batches_per_epoch() const { return batches_per_epoch_; }

  // Begins epoch `epoch` (>= 0): batches already read for the previous one are discarded, the
  // threads start reading this one's.
  void start_epoch(int64_t epoch);
  // The next batch of the epoch, or nullptr once every batch was returned. The error of the
  // first sample of the batch that failed to load (naming the file) when one did.
  Expected<const Batch*> next();

 private:
  struct Slot {
    Tensor images, labels;  // owning, batch_size rows
    Batch batch;            // the views handed out
    int64_t filling = -1;   // the batch being (or last) written here
    int64_t remaining = 0;  // its samples not yet loaded
    int64_t error_position = -1;
    Status error;
  };

  DataLoader(std::shared_ptr<const Dataset> dataset, const LoaderOptions& options);
  int64_t batch_length(int64_t batch) const;
  // Loads positions [begin, end) of batch `batch` into its slot; the first failure (lowest
  // position) is returned with its position in *failed.
  Status load_range(int64_t batch, int64_t begin, int64_t end, int64_t* failed);
  void worker();
  bool work_available() const;

  std::shared_ptr<const Dataset> dataset_;
  LoaderOptions options_;
  int64_t sample_numel_ = 0;
  int64_t batches_per_epoch_ = 0;
  int64_t epoch_samples_ = 0;  // positions of order_: the data set's, or this rank's share
  int64_t chunk_ = 1;  // samples per task

  std::mutex mutex_;
  std::condition_variable work_ready_;  // workers wait for tasks
  std::condition_variable work_done_;   // next() and start_epoch wait for tasks to finish
  bool stop_ = false;
  bool started_ = false;
  int64_t epoch_ = 0;
  std::vector<int64_t> order_;
  std::vector<Slot> slots_;
  int64_t next_batch_ = 0;     // the batch whose samples are handed out next
  int64_t next_position_ = 0;  // within it
  int64_t consumed_ = 0;       // batches returned by next() in this epoch
  int64_t in_flight_ = 0;      // tasks being loaded
  std::vector<std::thread> threads_;
};

}  // namespace ucudnn::data
