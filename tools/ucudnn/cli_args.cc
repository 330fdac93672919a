// Command-line parsing helpers for the ucudnn tool.
#include "tools/ucudnn/cli_args.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ucudnn::cli {

Expected<Args> Args::parse(int argc, char** argv, const std::set<std::string>& value_flags,
                           const std::set<std::string>& bool_flags) {
  Args args;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      args.positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (bool_flags.count(name)) {
      if (inline_value) return invalid_argument("flag --" + name + " takes no value");
      args.values_.emplace(name, "1");
    } else if (value_flags.count(name)) {
      if (!inline_value) {
        if (i + 1 >= argc) return invalid_argument("flag --" + name + " needs a value");
        value = argv[++i];
      }
      args.values_.emplace(name, value);
    } else {
      return invalid_argument("unknown flag --" + name);
    }
  }
  return args;
}

std::string Args::get(const std::string& flag, const std::string& fallback) const {
  auto range = values_.equal_range(flag);
  if (range.first == range.second) return fallback;
  return std::prev(range.second)->second;
}

std::vector<std::string> Args::get_all(const std::string& flag) const {
  std::vector<std::string> out;
  auto range = values_.equal_range(flag);
  for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
  return out;
}

Expected<int64_t> Args::get_int(const std::string& flag, int64_t fallback, int64_t min_value) const {
  if (!has(flag)) return fallback;
  const std::string text = get(flag);
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') return invalid_argument("--" + flag + " expects an integer, got '" + text + "'");
  if (v < min_value)
    return invalid_argument("--" + flag + " must be at least " + std::to_string(min_value) + ", got " + text);
  return static_cast<int64_t>(v);
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
  if (end == text.c_str() || scale == 0 || !(number >= 0) || std::isinf(number))
    return invalid_argument("cannot read '" + text + "' as a size (examples: 64MiB, 512MB, 1GiB, 1048576, unlimited)");
  return static_cast<size_t>(number * scale);
}

std::string format_bytes(size_t bytes) {
  if (bytes == SIZE_MAX) return "unlimited";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace ucudnn::cli
