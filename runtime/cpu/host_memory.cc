// Available host memory (see host_memory.h).
#include "runtime/cpu/host_memory.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "runtime/core/bytes.h"

namespace ucudnn::cpu {

namespace {

// The whole of a small system file; "" when it cannot be read.
std::string read_text(const char* path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A decimal number at the start of `text` (after blanks); false when there is none or it overflows.
bool parse_count(const std::string& text, size_t* value) {
  size_t i = text.find_first_not_of(" \t");
  if (i == std::string::npos || text[i] < '0' || text[i] > '9') return false;
  size_t v = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i)
    if (!checked_mul(v, size_t{10}, &v) || !checked_add(v, static_cast<size_t>(text[i] - '0'), &v)) return false;
  *value = v;
  return true;
}

// The value of "key N" in a memory.stat text; 0 when absent.
size_t stat_entry(const std::string& stat, const std::string& key) {
  std::istringstream lines(stat);
  std::string line;
  size_t value = 0;
  while (std::getline(lines, line))
    if (line.compare(0, key.size() + 1, key + " ") == 0 && parse_count(line.substr(key.size() + 1), &value))
      return value;
  return 0;
}

}  // namespace

size_t mem_available_from_meminfo(const std::string& meminfo) {
  const std::string key = "MemAvailable:";
  const size_t at = meminfo.find(key);
  size_t kib = 0;
  if (at == std::string::npos || !parse_count(meminfo.substr(at + key.size()), &kib)) return SIZE_MAX;
  return saturating_mul(kib, size_t{1024});
}

size_t room_under_cgroup_limit(const std::string& limit, const std::string& usage, size_t reclaimable) {
  size_t max_bytes = 0, used = 0;
  // "max" (v2) or a limit near 2^63 (v1's "none") is no limit.
  if (!parse_count(limit, &max_bytes) || max_bytes >= (size_t{1} << 62) || !parse_count(usage, &used)) return SIZE_MAX;
  used -= std::min(used, reclaimable);
  return max_bytes > used ? max_bytes - used : 0;
}

size_t available_host_memory() {
  size_t available = mem_available_from_meminfo(read_text("/proc/meminfo"));
  const std::string v2_stat = read_text("/sys/fs/cgroup/memory.stat");
  available = std::min(available, room_under_cgroup_limit(read_text("/sys/fs/cgroup/memory.max"),
                                                          read_text("/sys/fs/cgroup/memory.current"),
                                                          stat_entry(v2_stat, "inactive_file")));
  const std::string v1_stat = read_text("/sys/fs/cgroup/memory/memory.stat");
  available = std::min(available, room_under_cgroup_limit(read_text("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
                                                          read_text("/sys/fs/cgroup/memory/memory.usage_in_bytes"),
                                                          stat_entry(v1_stat, "total_inactive_file")));
  return available;
}

}  // namespace ucudnn::cpu
