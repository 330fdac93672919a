// DataLoader (see loader.h).
//
// Work is handed out under one mutex as tasks of up to chunk_ consecutive samples of one batch,
// batch after batch, never more than `prefetch` batches past the one the caller holds. Batch b is
// written into slot b mod (prefetch + 1): the slots of the held batch and of the batches read
// ahead are then all different. A task loads without the lock; the order and epoch it reads
// change only in start_epoch, which first waits until no task is in flight. next() waits until
// its batch's slot counts no remaining sample.
#include "training/data/loader.h"

#include <algorithm>
#include <utility>

#include "training/data/random.h"

namespace ucudnn::data {

Expected<std::unique_ptr<DataLoader>> DataLoader::create(std::shared_ptr<const Dataset> dataset,
                                                         const LoaderOptions& options) {
  if (dataset == nullptr) return invalid_argument("DataLoader needs a data set");
  if (options.batch_size < 1 || options.prefetch < 1 || options.num_threads < 0)
    return invalid_argument("DataLoader needs batch_size >= 1, prefetch >= 1 and num_threads >= 0 (got " +
                            std::to_string(options.batch_size) + ", " + std::to_string(options.prefetch) + ", " +
                            std::to_string(options.num_threads) + ")");
  if (options.drop_last && dataset->size() < options.batch_size)
    return invalid_argument("with drop_last, a batch of " + std::to_string(options.batch_size) +
                            " leaves no batch of the " + std::to_string(dataset->size()) + " samples of " +
                            dataset->describe());
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size)
    return invalid_argument("DataLoader: rank " + std::to_string(options.rank) + " is outside the " +
                            std::to_string(options.world_size) + " ranks");
  if (options.world_size > 1 && (!options.drop_last || dataset->size() < options.batch_size * options.world_size))
    return invalid_argument("data-parallel loading needs drop_last (every rank takes as many batches) and at least one "
                            "global batch of " + std::to_string(options.world_size) + " x " +
                            std::to_string(options.batch_size) + " samples; " + dataset->describe() + " has " +
                            std::to_string(dataset->size()));
  std::unique_ptr<DataLoader> loader(new DataLoader(std::move(dataset), options));
  Shape images_shape = {options.batch_size};
  const Shape& sample = loader->dataset_->image_shape();
  images_shape.insert(images_shape.end(), sample.begin(), sample.end());
  loader->slots_.resize(static_cast<size_t>(options.prefetch) + 1);
  for (Slot& slot : loader->slots_) {
    UCUDNN_ASSIGN_OR_RETURN(slot.images, Tensor::allocate_uninitialized(DType::kFloat32, images_shape));
    UCUDNN_ASSIGN_OR_RETURN(slot.labels, Tensor::allocate_uninitialized(DType::kInt64, {options.batch_size}));
  }
  for (int t = 0; t < options.num_threads; ++t) loader->threads_.emplace_back([l = loader.get()] { l->worker(); });
  return loader;
}

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, const LoaderOptions& options)
    : dataset_(std::move(dataset)), options_(options) {
  sample_numel_ = shape_numel(dataset_->image_shape());
  const int64_t size = dataset_->size();
  const int64_t global_batch = options.batch_size * options.world_size;
  epoch_samples_ = options.world_size > 1 ? size / global_batch * options.batch_size : size;
  batches_per_epoch_ = options.drop_last ? epoch_samples_ / options.batch_size
                                         : (size + options.batch_size - 1) / options.batch_size;
  const int64_t pieces = 2 * std::max(options.num_threads, 1);
  chunk_ = std::max<int64_t>(1, (options.batch_size + pieces - 1) / pieces);
}

DataLoader::~DataLoader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

int64_t DataLoader::batch_length(int64_t batch) const {
  return std::min(options_.batch_size, epoch_samples_ - batch * options_.batch_size);
}

void DataLoader::start_epoch(int64_t epoch) {
  std::unique_lock<std::mutex> lock(mutex_);
  started_ = false;  // no new task until the new order is in place
  work_done_.wait(lock, [&] { return in_flight_ == 0; });
  epoch_ = epoch;
  order_ = shard_order(epoch_order(dataset_->size(), options_.shuffle, options_.seed, epoch), options_.batch_size,
                       options_.rank, options_.world_size);
  next_batch_ = next_position_ = consumed_ = 0;
  for (Slot& slot : slots_) slot.filling = -1;
  started_ = true;
  lock.unlock();
  work_ready_.notify_all();
}

Status DataLoader::load_range(int64_t batch, int64_t begin, int64_t end, int64_t* failed) {
  Slot& slot = slots_[static_cast<size_t>(batch) % slots_.size()];
  for (int64_t position = begin; position < end; ++position) {
    const int64_t index = order_[static_cast<size_t>(batch * options_.batch_size + position)];
    float* image = slot.images.data<float>() + position * sample_numel_;
    int64_t* label = slot.labels.data<int64_t>() + position;
    Status status = dataset_->load(index, sample_seed(options_.seed, epoch_, index), image, label);
    if (!status.is_ok()) {
      *failed = position;
      return status.with_context("sample " + std::to_string(index));
    }
  }
  return Status::ok();
}

bool DataLoader::work_available() const {
  return started_ && next_batch_ < batches_per_epoch_ && next_batch_ < consumed_ + options_.prefetch;
}

void DataLoader::worker() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [&] { return stop_ || work_available(); });
    if (stop_) return;
    const int64_t batch = next_batch_, begin = next_position_, length = batch_length(batch);
    const int64_t end = std::min(begin + chunk_, length);
    Slot& slot = slots_[static_cast<size_t>(batch) % slots_.size()];
    if (begin == 0) {
      slot.filling = batch;
      slot.remaining = length;
      slot.error_position = -1;
      slot.error = Status::ok();
    }
    next_position_ = end;
    if (end == length) {
      ++next_batch_;
      next_position_ = 0;
    }
    ++in_flight_;
    lock.unlock();
    int64_t failed = -1;
    Status status = load_range(batch, begin, end, &failed);
    lock.lock();
    --in_flight_;
    if (!status.is_ok() && (slot.error_position < 0 || failed < slot.error_position)) {
      slot.error_position = failed;
      slot.error = std::move(status);
    }
    slot.remaining -= end - begin;
    work_done_.notify_all();
  }
}

Expected<const Batch*> DataLoader::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!started_) return invalid_argument("DataLoader::next() called before start_epoch()");
  if (consumed_ >= batches_per_epoch_) return nullptr;
  const int64_t batch = consumed_++;  // the batch held so far is released
  const int64_t length = batch_length(batch);
  Slot& slot = slots_[static_cast<size_t>(batch) % slots_.size()];
  if (threads_.empty()) {
    int64_t failed = -1;
    slot.filling = batch;
    slot.error = load_range(batch, 0, length, &failed);
  } else {
    work_ready_.notify_all();
    work_done_.wait(lock, [&] { return slot.filling == batch && slot.remaining == 0; });
  }
  if (!slot.error.is_ok())
    return slot.error.with_context("batch " + std::to_string(batch) + " of epoch " + std::to_string(epoch_));
  Shape images_shape = slot.images.shape();
  images_shape[0] = length;
  slot.batch.images = Tensor::view(DType::kFloat32, images_shape, slot.images.raw());
  slot.batch.labels = Tensor::view(DType::kInt64, {length}, slot.labels.raw());
  slot.batch.index = batch;
  slot.batch.epoch = epoch_;
  return &slot.batch;
}

}  // namespace ucudnn::data
