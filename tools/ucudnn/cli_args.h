// A small command-line parser for the `ucudnn` subcommands: positional
// arguments plus `--flag value` / `--flag=value` / boolean `--flag`, with typed
// getters that return a clear Status for malformed values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/core/bytes.h"  // format_bytes, parse_byte_size
#include "runtime/core/status.h"

namespace ucudnn::cli {

class Args {
 public:
  // `value_flags` take a value, `bool_flags` do not; anything else is an error.
  static Expected<Args> parse(int argc, char** argv, const std::set<std::string>& value_flags,
                              const std::set<std::string>& bool_flags);

  const std::vector<std::string>& positional() const { return positional_; }
  bool has(const std::string& flag) const { return values_.count(flag) != 0; }
  // The last value given for `flag`, or `fallback`.
  std::string get(const std::string& flag, const std::string& fallback = "") const;
  // Every value given for a repeatable flag, in order.
  std::vector<std::string> get_all(const std::string& flag) const;
  // The integer value of `flag` (`fallback` when absent). Text that is not a
  // whole decimal integer, or a value outside [min_value, max_value] (overflow of
  // int64 included), is an InvalidArgument naming the flag and the range.
  Expected<int64_t> get_int(const std::string& flag, int64_t fallback, int64_t min_value,
                            int64_t max_value = INT64_MAX) const;

 private:
  std::vector<std::string> positional_;
  std::multimap<std::string, std::string> values_;
};

// Runs `command` and returns its exit code; an exception escaping it (an allocation
// no check foresaw, a bug) becomes one Status — OutOfMemory for std::bad_alloc,
// Internal otherwise — passed to `on_error`, whose result is returned instead.
int run_catching(const std::function<int()>& command, const std::function<int(const Status&)>& on_error);

}  // namespace ucudnn::cli
