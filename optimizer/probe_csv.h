// Loader for the H200 convolution probe CSVs (../shared/data/*.csv, copies in
// tests/data/). Format:
//   #cudnn_version 91900 B 256 math 0
//   net,layer,dir,b,algo,time_ms,ws_bytes,mathtype
//   alexnet,conv1,fwd,1,0,0.04038,0,0
// dir is "fwd", "bwdd" or "bwdf" (also accepted: "bwd_data", "bwd_filter").
// Kernels are keyed "net/layer/dir" with dir in ConvDirection's canonical
// spelling ("alexnet/conv1/bwd_data"). Malformed lines are errors naming the
// file and line number; nothing is skipped silently.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "optimizer/benchmark_table.h"
#include "runtime/core/status.h"

namespace ucudnn::optimizer {

struct ProbeData {
  int cudnn_version = 0;
  int64_t batch = 0;  // the mini-batch B of the header line
  int math_type = 0;
  std::map<std::string /*net/layer/dir*/, KernelTimings> kernels;
};

// Parses CSV text; `source` names it in error messages (a path or "<string>").
Expected<ProbeData> parse_probe_csv(const std::string& text, const std::string& source);
// Reads and parses a file; kNotFound / kIoError when it cannot be read.
Expected<ProbeData> load_probe_csv(const std::string& path);

}  // namespace ucudnn::optimizer
