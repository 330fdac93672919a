// Sharded benchmarking: the measurements of a cold optimisation spread over
// several GPUs of one host (`--benchmark-devices all|0,1,…`, μ-cuDNN's
// UCUDNN_BENCHMARK_DEVICES).
//
// A BenchmarkPool holds one worker thread per device. Each worker makes its own
// benchmarker on its own thread — a CUDA device is current per thread, so the
// worker's context, stream and cuDNN handle are its own — and then measures work
// items: one convolution kernel at one micro-batch size. Items are handed out from
// one queue, largest first (multiply-adds of the call), so the long batch-256
// measurements start early and the short ones fill the gaps.
//
// The calling thread is the one writer: it receives finished items, merges each
// kernel's sizes, and hands a kernel's table to `store` once it and every kernel
// before it are complete — the kernels' order, whatever the workers' order. The
// database, the timings and so the plan do not depend on how many workers there
// are. An error (a benchmarker that cannot be made, a measurement, `store`) stops
// the workers after the item each is on, and the first one is returned, naming
// the kernel and the device.
//
// All workers must report the same device key (name, SM count, versions, math
// type): the database keys every row by it, so GPUs of different models are
// refused for one optimisation.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "optimizer/bench/benchmarker.h"

namespace ucudnn::optimizer {

// The devices `--benchmark-devices` names: "all" (every visible GPU) or distinct ids "0,2,3".
struct BenchmarkDeviceList {
  bool all = false;
  std::vector<int> ids;  // in the order given; empty when `all`
};

// Parses `spec` ("all", "0", "1,0,3"): InvalidArgument for anything else (an empty item,
// a negative or repeated id, a word), naming the flag and the text.
Expected<BenchmarkDeviceList> parse_benchmark_devices(const std::string& spec);

// The device ids `spec` selects among `present` visible GPUs: every one for "all",
// else the listed ones; an id out of range is InvalidArgument saying how many are present.
Expected<std::vector<int>> select_benchmark_devices(const std::string& spec, int present);

// One worker: its name in messages ("GPU 1") and what makes its benchmarker, called on
// the worker's thread.
struct BenchmarkWorkerSpec {
  std::string name;
  std::function<Expected<std::unique_ptr<Benchmarker>>()> make;
};

// One measurement job: `kernel` at `sizes` (all measured, one work item per size).
struct BenchmarkJob {
  const ConvKernel* kernel = nullptr;
  std::vector<int64_t> sizes;
};

class BenchmarkPool {
 public:
  // Starts one worker per spec and waits until each has made its benchmarker. The first
  // failure is returned, naming the worker; so are two workers whose device keys differ
  // ("GPU 0 is 'NVIDIA H200' (132 SMs), GPU 1 is '…'; benchmark on GPUs of one model").
  static Expected<std::unique_ptr<BenchmarkPool>> start(std::vector<BenchmarkWorkerSpec> specs);
  ~BenchmarkPool();  // stops the workers and joins them
  BenchmarkPool(const BenchmarkPool&) = delete;
  BenchmarkPool& operator=(const BenchmarkPool&) = delete;

  // The device part of every key (the workers' common one).
  const ConvKernelKey& device_key() const { return device_key_; }
  int workers() const { return static_cast<int>(workers_.size()); }

  // Measures every job of `jobs` (kernels of `graph`) on the workers. On the calling
  // thread only: `store(j, timings)` for each job j in increasing j, as soon as it and all
  // before it are measured, and `progress(items_done, items_total)` after each item.
  // Returns the first error; nothing more is stored after it.
  Status measure(const ir::Graph& graph, const std::vector<BenchmarkJob>& jobs,
                 const std::function<Status(size_t job, KernelTimings timings)>& store,
                 const std::function<void(int done, int total)>& progress);

 private:
  struct Item {
    size_t job;
    int64_t size;
    double work;  // multiply-adds: the order items are handed out in
  };
  struct Finished {
    size_t item;
    int worker;
    Expected<KernelTimings> timings;
  };
  struct Worker {
    std::string name;
    std::thread thread;
    std::unique_ptr<Benchmarker> benchmarker;
    Status start_status;
    bool ready = false;
  };

  BenchmarkPool() = default;
  void run_worker(int index, const std::function<Expected<std::unique_ptr<Benchmarker>>()>& make);

  std::vector<Worker> workers_;
  ConvKernelKey device_key_;

  std::mutex mutex_;                  // guards everything below and the workers' ready/start_status
  std::condition_variable work_cv_;   // workers wait here for items or shutdown
  std::condition_variable done_cv_;   // the caller waits here for readiness and finished items
  const ir::Graph* graph_ = nullptr;  // of the measure() call in progress
  const std::vector<BenchmarkJob>* jobs_ = nullptr;
  std::vector<Item> items_;
  size_t next_item_ = 0;              // the first item no worker has taken
  bool stopping_ = false;             // an error: take no more items
  bool shutdown_ = false;
  std::deque<Finished> finished_;
};

}  // namespace ucudnn::optimizer
