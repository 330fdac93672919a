// The benchmark pool and the device list of --benchmark-devices (see sharded_benchmarking.h).
#include "optimizer/bench/sharded_benchmarking.h"

#include <algorithm>
#include <charconv>
#include <climits>

namespace ucudnn::optimizer {

namespace {

// "'NVIDIA H200' (132 SMs)"; the versions too when the names and SM counts agree.
std::string describe(const ConvKernelKey& key, bool versions) {
  std::string text = "'" + key.device_name + "' (" + std::to_string(key.sm_count) + " SMs";
  if (versions)
    text += ", CUDA " + std::to_string(key.cuda_version) + ", cuDNN " + std::to_string(key.cudnn_version) +
            ", driver " + std::to_string(key.driver_version) + ", " + key.dtype + ", math " + key.math_type;
  return text + ")";
}

// The multiply-adds of `kernel` at micro-batch `size`: output elements per sample ×
// weights per output channel (the order work is handed out in, nothing more).
double work_of(const ConvKernel& kernel, int64_t size) {
  const double per_sample = kernel.batch() > 0 ? double(shape_numel(kernel.y_shape)) / double(kernel.batch()) : 0;
  const bool no_weights = kernel.w_shape.empty() || kernel.w_shape[0] == 0;
  const double per_output = no_weights ? 0 : double(shape_numel(kernel.w_shape)) / double(kernel.w_shape[0]);
  return double(size) * per_sample * per_output;
}

}  // namespace

Expected<BenchmarkDeviceList> parse_benchmark_devices(const std::string& spec) {
  const auto refuse = [&](const std::string& why) {
    return invalid_argument("--benchmark-devices '" + spec + "': " + why +
                            "; expected all or GPU ids separated by commas (0,1,2)");
  };
  BenchmarkDeviceList list;
  if (spec == "all") {
    list.all = true;
    return list;
  }
  if (spec.empty()) return refuse("no GPU named");
  size_t begin = 0;
  while (begin <= spec.size()) {
    const size_t end = std::min(spec.find(',', begin), spec.size());
    const std::string item = spec.substr(begin, end - begin);
    int id = -1;
    const auto [rest, error] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (item.empty() || error != std::errc() || rest != item.data() + item.size() || id < 0)
      return refuse(item.empty() ? std::string("an empty item") : "'" + item + "' is not a GPU id");
    if (std::find(list.ids.begin(), list.ids.end(), id) != list.ids.end())
      return refuse("GPU " + item + " is named twice");
    list.ids.push_back(id);
    begin = end + 1;
  }
  return list;
}

Expected<std::vector<int>> select_benchmark_devices(const std::string& spec, int present) {
  UCUDNN_ASSIGN_OR_RETURN(BenchmarkDeviceList list, parse_benchmark_devices(spec));
  if (present <= 0) return invalid_argument("--benchmark-devices " + spec + ": no GPU is present");
  if (list.all) {
    std::vector<int> ids(static_cast<size_t>(present));
    for (int i = 0; i < present; ++i) ids[static_cast<size_t>(i)] = i;
    return ids;
  }
  for (int id : list.ids)
    if (id >= present)
      return invalid_argument("--benchmark-devices " + spec + ": there is no GPU " + std::to_string(id) + "; " +
                              std::to_string(present) + (present == 1 ? " GPU is" : " GPUs are") +
                              " present (ids 0 to " + std::to_string(present - 1) + ")");
  return list.ids;
}

Expected<std::unique_ptr<BenchmarkPool>> BenchmarkPool::start(std::vector<BenchmarkWorkerSpec> specs) {
  if (specs.empty()) return invalid_argument("sharded benchmarking: no device to measure on");
  std::unique_ptr<BenchmarkPool> pool(new BenchmarkPool());
  pool->workers_.resize(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    Worker& worker = pool->workers_[i];
    worker.name = specs[i].name;
    worker.thread = std::thread(&BenchmarkPool::run_worker, pool.get(), static_cast<int>(i), std::move(specs[i].make));
  }
  // Every worker ready (or failed) before the keys are compared.
  std::unique_lock<std::mutex> lock(pool->mutex_);
  pool->done_cv_.wait(lock, [&] {
    return std::all_of(pool->workers_.begin(), pool->workers_.end(), [](const Worker& w) { return w.ready; });
  });
  for (const Worker& worker : pool->workers_)
    if (!worker.start_status.is_ok()) return worker.start_status.with_context(worker.name);
  const Worker& first = pool->workers_.front();
  pool->device_key_ = first.benchmarker->device_key();
  for (const Worker& worker : pool->workers_) {
    const ConvKernelKey key = worker.benchmarker->device_key();
    if (key == pool->device_key_) continue;
    const ConvKernelKey& expected = pool->device_key_;
    const bool same_model = key.device_name == expected.device_name && key.sm_count == expected.sm_count;
    return invalid_argument(first.name + " is " + describe(expected, same_model) + ", " + worker.name + " is " +
                            describe(key, same_model) +
                            "; benchmark on GPUs of one model (the database keys every timing by its device)");
  }
  return pool;  // the lock is released before `pool` can be destroyed
}

BenchmarkPool::~BenchmarkPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutdown_ = true;
  }
  work_cv_.notify_all();
  for (Worker& worker : workers_)
    if (worker.thread.joinable()) worker.thread.join();
}

void BenchmarkPool::run_worker(int index, const std::function<Expected<std::unique_ptr<Benchmarker>>()>& make) {
  Worker& self = workers_[static_cast<size_t>(index)];
  Expected<std::unique_ptr<Benchmarker>> made = make();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (made)
      self.benchmarker = std::move(*made);
    else
      self.start_status = made.status();
    self.ready = true;
  }
  done_cv_.notify_all();
  if (!self.benchmarker) return;
  for (;;) {
    size_t item = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_cv_.wait(lock, [&] { return shutdown_ || (!stopping_ && next_item_ < items_.size()); });
      if (shutdown_) break;
      item = next_item_++;
    }
    // Only this worker reads its benchmarker; graph_, jobs_ and items_ stay put until every
    // taken item is finished (measure() waits for that).
    const Item& work = items_[item];
    const ConvKernel& kernel = *(*jobs_)[work.job].kernel;
    Expected<KernelTimings> timings = self.benchmarker->measure(*graph_, kernel, {work.size});
    if (!timings)
      timings = timings.status().with_context(graph_->nodes[kernel.nodes.front()].describe() + " (" +
                                              conv_direction_name(kernel.direction()) + ", micro-batch " +
                                              std::to_string(work.size) + ") on " + self.name);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_.push_back({item, index, std::move(timings)});
    }
    done_cv_.notify_all();
  }
  // Its context, stream and cuDNN handle are released on the thread (and device) that made them.
  self.benchmarker.reset();
}

Status BenchmarkPool::measure(const ir::Graph& graph, const std::vector<BenchmarkJob>& jobs,
                              const std::function<Status(size_t job, KernelTimings timings)>& store,
                              const std::function<void(int done, int total)>& progress) {
  std::vector<Item> items;
  std::vector<size_t> pending(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (int64_t size : jobs[j].sizes) items.push_back({j, size, work_of(*jobs[j].kernel, size)});
    pending[j] = jobs[j].sizes.size();
  }
  // Largest first; equal work in the kernels' order (which worker takes what changes no result).
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.work > b.work; });
  const size_t total = items.size();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    graph_ = &graph;
    jobs_ = &jobs;
    items_ = std::move(items);
    next_item_ = 0;
    stopping_ = false;
    finished_.clear();
  }
  work_cv_.notify_all();

  std::vector<KernelTimings> merged(jobs.size());
  size_t received = 0, next_store = 0;
  Status first_error;
  const auto fail = [&](Status status) {
    if (!first_error.is_ok()) return;
    first_error = std::move(status);
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  };
  for (;;) {
    std::deque<Finished> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // After an error: done once every item a worker took has come back.
      const auto all_back = [&] { return received == (first_error.is_ok() ? total : next_item_); };
      done_cv_.wait(lock, [&] { return !finished_.empty() || all_back(); });
      if (finished_.empty()) {
        items_.clear();
        graph_ = nullptr;
        jobs_ = nullptr;
        break;
      }
      batch.swap(finished_);
    }
    for (Finished& done : batch) {
      ++received;
      if (!done.timings) {
        fail(done.timings.status());
        continue;
      }
      const size_t job = items_[done.item].job;  // items_ changes only between measure() calls
      for (auto& [size, row] : done.timings->by_batch) merged[job].by_batch[size] = std::move(row);
      --pending[job];
    }
    while (first_error.is_ok() && next_store < jobs.size() && pending[next_store] == 0) {
      Status stored = store(next_store, std::move(merged[next_store]));
      if (!stored.is_ok()) fail(std::move(stored));
      ++next_store;
    }
    if (first_error.is_ok() && progress) progress(static_cast<int>(received), static_cast<int>(total));
  }
  return first_error;
}

}  // namespace ucudnn::optimizer
