// Byte-size formatting and parsing (see bytes.h).
#include "runtime/core/bytes.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace ucudnn {

std::string format_bytes(size_t bytes) {
  if (bytes == SIZE_MAX) return "unlimited";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

Expected<size_t> parse_byte_size(const std::string& text) {
  if (text == "unlimited" || text == "inf") return SIZE_MAX;
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  const std::string unit = end ? std::string(end) : "";
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "KiB" || unit == "K") scale = 1024.0;
  else if (unit == "MiB" || unit == "M") scale = 1024.0 * 1024;
  else if (unit == "GiB" || unit == "G") scale = 1024.0 * 1024 * 1024;
  else if (unit == "KB") scale = 1e3;
  else if (unit == "MB") scale = 1e6;
  else if (unit == "GB") scale = 1e9;
  if (end == text.c_str() || scale == 0 || !(number >= 0) || std::isinf(number) || number * scale >= 1.8e19)
    return invalid_argument("cannot read '" + text + "' as a size (examples: 64MiB, 512MB, 1GiB, 1048576, unlimited)");
  return static_cast<size_t>(number * scale);
}

}  // namespace ucudnn
