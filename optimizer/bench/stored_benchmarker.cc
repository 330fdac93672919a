// The stored-timings benchmarker (see stored_benchmarker.h).
#include "optimizer/bench/stored_benchmarker.h"

#include <algorithm>

namespace ucudnn::optimizer {

namespace {

std::string describe_device(const ConvKernelKey& key) {
  return "'" + key.device_name + "' (sm " + std::to_string(key.sm_count) + ", CUDA " +
         std::to_string(key.cuda_version) + ", cuDNN " + std::to_string(key.cudnn_version) + ", math " +
         key.math_type + ", " + key.layout + ")";
}

class StoredBenchmarker final : public Benchmarker {
 public:
  StoredBenchmarker(ConvKernelKey device_key, std::string db_path)
      : device_key_(std::move(device_key)), db_path_(std::move(db_path)) {}

  ConvKernelKey device_key() const override { return device_key_; }

  Expected<KernelTimings> measure(const ir::Graph&, const ConvKernel& kernel,
                                  const std::vector<int64_t>& sizes) override {
    std::string list;
    for (int64_t s : sizes) {
      if (!list.empty()) list += ',';
      list += std::to_string(s);
    }
    return not_found("kernel '" + kernel.key.to_string() + "' (input " + shape_to_string(kernel.x_shape) +
                     ", weight " + shape_to_string(kernel.w_shape) + ", micro-batches " + list +
                     ") is not in the benchmark database '" + db_path_ + "', and device " +
                     describe_device(device_key_) +
                     " is not here to measure it; record it on that GPU into a copy of this database (ucudnn plan --device "
                     "cuda --db COPY), or use a batch size and --batch-sizes policy that were recorded");
  }

 private:
  ConvKernelKey device_key_;
  std::string db_path_;
};

}  // namespace

Expected<ConvKernelKey> stored_gpu_device_key(BenchmarkDb& db, const std::string& math_type) {
  UCUDNN_ASSIGN_OR_RETURN(std::vector<ConvKernelKey> keys, db.device_keys());
  std::vector<ConvKernelKey> gpus, matching;
  for (const ConvKernelKey& key : keys) {
    if (key.sm_count <= 0) continue;  // CPU rows
    gpus.push_back(key);
    // One device may be stored in both layouts; the kernels' keys carry their own layout.
    const bool known = std::any_of(matching.begin(), matching.end(), [&](const ConvKernelKey& m) {
      return m.device_name == key.device_name && m.sm_count == key.sm_count && m.cuda_version == key.cuda_version &&
             m.cudnn_version == key.cudnn_version && m.driver_version == key.driver_version && m.dtype == key.dtype;
    });
    if (key.math_type == math_type && !known) matching.push_back(key);
  }
  if (matching.size() == 1) return matching.front();
  std::string found, cpus;
  for (const ConvKernelKey& key : gpus) found += "\n  " + describe_device(key);
  for (const ConvKernelKey& key : keys)
    if (key.sm_count <= 0 && cpus.find("'" + key.device_name + "'") == std::string::npos)
      cpus += (cpus.empty() ? "cpu '" : ", cpu '") + key.device_name + "'";
  if (matching.empty())
    return not_found("no CUDA device is present, and the benchmark database '" + db.path() +
                     "' holds no GPU measurements with math type '" + math_type + "' to plan from" +
                     (!gpus.empty()   ? "; it holds:" + found
                      : cpus.empty() ? std::string(" (it holds none at all)")
                                     : " (it holds timings for " + cpus + " only)"));
  return invalid_argument("no CUDA device is present, and the benchmark database '" + db.path() +
                          "' holds measurements of several GPUs with math type '" + math_type +
                          "', so which one to plan for is ambiguous; keep one device per database:" + found);
}

std::unique_ptr<Benchmarker> make_stored_benchmarker(ConvKernelKey device_key, std::string db_path) {
  return std::make_unique<StoredBenchmarker>(std::move(device_key), std::move(db_path));
}

}  // namespace ucudnn::optimizer
