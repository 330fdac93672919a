// How much host memory a process can still allocate without being killed: what the
// CPU backend's available_memory_bytes answers, so that the executor refuses a plan
// larger than memory instead of being OOM-killed half-way through its allocations.
//
// Linux only: the kernel's estimate (/proc/meminfo MemAvailable), lowered to what is
// left under the memory limit of the process's cgroup (v2 memory.max, v1
// memory.limit_in_bytes) when there is one; page cache the cgroup can drop counts as free.
#pragma once

#include <cstddef>
#include <string>

namespace ucudnn::cpu {

// Bytes available now; SIZE_MAX when nothing tells (not Linux, /proc not mounted).
size_t available_host_memory();

// The parts, for tests: MemAvailable of a /proc/meminfo text in bytes (SIZE_MAX when absent);
// the room under a cgroup limit (SIZE_MAX for "max" or no limit). Texts as the files hold them.
size_t mem_available_from_meminfo(const std::string& meminfo);
size_t room_under_cgroup_limit(const std::string& limit, const std::string& usage, size_t reclaimable);

}  // namespace ucudnn::cpu
