// Byte sizes for people: formatting ("64.0 MiB") and parsing ("64MiB").
#pragma once

#include <cstddef>
#include <string>

#include "runtime/core/status.h"

namespace ucudnn {

// "512 B", "1.5 KiB", "64.0 MiB", "1.2 GiB"; SIZE_MAX is "unlimited".
std::string format_bytes(size_t bytes);
// Parses "64MiB", "512MB", "1GiB", "1048576", "unlimited" (→ SIZE_MAX) into bytes;
// InvalidArgument with examples otherwise.
Expected<size_t> parse_byte_size(const std::string& text);

}  // namespace ucudnn
