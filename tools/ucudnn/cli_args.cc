// Command-line parsing helpers for the ucudnn tool.
#include "tools/ucudnn/cli_args.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

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

Expected<int64_t> Args::get_int(const std::string& flag, int64_t fallback, int64_t min_value,
                                int64_t max_value) const {
  if (!has(flag)) return fallback;
  const std::string text = get(flag);
  const std::string range = max_value == INT64_MAX ? "at least " + std::to_string(min_value)
                                                   : "from " + std::to_string(min_value) + " to " +
                                                         std::to_string(max_value);
  // strtoll skips leading blanks; an integer flag is digits with an optional sign only.
  const bool digits = !text.empty() && text.find_first_not_of("+-0123456789") == std::string::npos;
  char* end = nullptr;
  errno = 0;
  const long long v = digits ? std::strtoll(text.c_str(), &end, 10) : 0;
  if (!digits || *end != '\0')
    return invalid_argument("--" + flag + " expects an integer " + range + ", got '" + text + "'");
  // ERANGE: strtoll clamped the value to LLONG_MIN/MAX, which must not pass as the value given.
  if (errno == ERANGE)
    return invalid_argument("--" + flag + " must be from " + std::to_string(min_value) + " to " +
                            std::to_string(max_value) + ", got " + text + " (beyond 64 bits)");
  if (v < min_value || v > max_value) return invalid_argument("--" + flag + " must be " + range + ", got " + text);
  return static_cast<int64_t>(v);
}

int run_catching(const std::function<int()>& command, const std::function<int(const Status&)>& on_error) {
  try {
    return command();
  } catch (const std::bad_alloc&) {
    return on_error(out_of_memory("the host ran out of memory (an allocation failed): is --batch or an input too "
                                  "large for this machine?"));
  } catch (const std::exception& e) {
    return on_error(internal_error(std::string("unexpected exception: ") + e.what()));
  } catch (...) {
    return on_error(internal_error("unexpected exception of unknown type"));
  }
}

}  // namespace ucudnn::cli
