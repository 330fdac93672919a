// Parses the convolution probe CSVs into KernelTimings per "net/layer/dir".
#include "optimizer/probe_csv.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "optimizer/kernel_key.h"

namespace ucudnn::optimizer {
namespace {

std::vector<std::string_view> split(std::string_view line, char separator) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t end = line.find(separator, start);
    if (end == std::string_view::npos) {
      fields.push_back(line.substr(start));
      return fields;
    }
    fields.push_back(line.substr(start, end - start));
    start = end + 1;
  }
}

template <typename T>
bool parse_number(std::string_view text, T& value) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// "#cudnn_version 91900 B 256 math 0": whitespace-separated name/value pairs.
Status parse_header(std::string_view line, ProbeData& data, const std::string& where) {
  std::istringstream in{std::string(line.substr(1))};
  std::string name, value;
  while (in >> name) {
    if (!(in >> value)) return invalid_argument(where + ": header '" + name + "' has no value");
    int64_t number = 0;
    if (!parse_number(std::string_view(value), number)) {
      return invalid_argument(where + ": header '" + name + "' value '" + value + "' is not an integer");
    }
    if (name == "cudnn_version") data.cudnn_version = static_cast<int>(number);
    else if (name == "B") data.batch = number;
    else if (name == "math") data.math_type = static_cast<int>(number);
    // Unknown header entries are ignored: later probes may add some.
  }
  return Status::ok();
}

}  // namespace

Expected<ProbeData> parse_probe_csv(const std::string& text, const std::string& source) {
  ProbeData data;
  const std::string_view expected_columns = "net,layer,dir,b,algo,time_ms,ws_bytes,mathtype";
  bool seen_columns = false;
  std::istringstream in(text);
  std::string raw;
  int line_number = 0;
  while (std::getline(in, raw)) {
    ++line_number;
    std::string_view line(raw);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = source + ":" + std::to_string(line_number);
    if (line.empty()) continue;
    if (line.front() == '#') {
      UCUDNN_RETURN_IF_ERROR(parse_header(line, data, where));
      continue;
    }
    if (!seen_columns) {
      if (line != expected_columns) {
        return invalid_argument(where + ": expected the column line '" + std::string(expected_columns) +
                                "', got '" + std::string(line) + "'");
      }
      seen_columns = true;
      continue;
    }
    std::vector<std::string_view> f = split(line, ',');
    if (f.size() != 8) {
      return invalid_argument(where + ": expected 8 comma-separated fields, got " +
                              std::to_string(f.size()) + " in '" + std::string(line) + "'");
    }
    auto direction = parse_conv_direction(f[2]);
    if (!direction) {
      return invalid_argument(where + ": unknown direction '" + std::string(f[2]) +
                              "' (expected fwd, bwdd or bwdf)");
    }
    int64_t batch = 0;
    int algorithm = 0, math = 0;
    double time_ms = 0;
    int64_t workspace = 0;
    if (!parse_number(f[3], batch) || batch < 1)
      return invalid_argument(where + ": micro-batch '" + std::string(f[3]) + "' is not a positive integer");
    if (!parse_number(f[4], algorithm) || algorithm < 0)
      return invalid_argument(where + ": algorithm '" + std::string(f[4]) + "' is not a non-negative integer");
    if (!parse_number(f[5], time_ms) || !(time_ms >= 0))
      return invalid_argument(where + ": time_ms '" + std::string(f[5]) + "' is not a non-negative number");
    if (!parse_number(f[6], workspace) || workspace < 0)
      return invalid_argument(where + ": ws_bytes '" + std::string(f[6]) + "' is not a non-negative integer");
    if (!parse_number(f[7], math))
      return invalid_argument(where + ": mathtype '" + std::string(f[7]) + "' is not an integer");
    if (f[0].empty() || f[1].empty()) return invalid_argument(where + ": empty net or layer name");

    std::string key = std::string(f[0]) + "/" + std::string(f[1]) + "/" + conv_direction_name(*direction);
    AlgoMeasurement m;
    m.algorithm = algorithm;
    m.time_ms = time_ms;
    m.workspace_bytes = static_cast<size_t>(workspace);
    m.available = true;
    data.kernels[key].by_batch[batch].push_back(m);
  }
  if (!seen_columns) {
    return invalid_argument(source + ": no column line '" + std::string(expected_columns) + "' found");
  }
  return data;
}

Expected<ProbeData> load_probe_csv(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return not_found("probe CSV '" + path + "' cannot be opened");
  std::ostringstream buffer;
  buffer << file.rdbuf();
  if (file.bad()) return io_error("reading probe CSV '" + path + "' failed");
  return parse_probe_csv(buffer.str(), path);
}

}  // namespace ucudnn::optimizer
