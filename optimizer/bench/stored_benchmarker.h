// The stored-timings "benchmarker": plans for a device that is not here (e.g.
// `ucudnn plan --device cuda` on a machine without a GPU) from a database
// recorded on that device (models/h200_benchmarks.sqlite).
//
// Its device key is one of the devices stored in the database; it measures
// nothing, so a kernel missing from the database is a clear error naming the
// kernel and how to record it.
#pragma once

#include <memory>
#include <string>

#include "optimizer/bench/benchmark_db.h"
#include "optimizer/bench/benchmarker.h"

namespace ucudnn::optimizer {

// The one device of `db` whose math type is `math_type` (in either layout) and
// whose SM count is non-zero (a GPU). NotFound when the database holds none, or
// InvalidArgument listing them when it holds several.
Expected<ConvKernelKey> stored_gpu_device_key(BenchmarkDb& db, const std::string& math_type);

// A Benchmarker whose device_key() is `device_key` and whose measure() fails with
// NotFound naming the kernel, the database path and the fix.
std::unique_ptr<Benchmarker> make_stored_benchmarker(ConvKernelKey device_key, std::string db_path);

}  // namespace ucudnn::optimizer
