// ConvKernelKey's canonical string, direction names and hash.
#include "optimizer/kernel_key.h"

#include <functional>
#include <sstream>

namespace ucudnn::optimizer {

const char* conv_direction_name(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::kForward: return "fwd";
    case ConvDirection::kBackwardData: return "bwd_data";
    case ConvDirection::kBackwardFilter: return "bwd_filter";
  }
  return "unknown";
}

std::optional<ConvDirection> parse_conv_direction(std::string_view name) {
  if (name == "fwd") return ConvDirection::kForward;
  if (name == "bwd_data" || name == "bwdd") return ConvDirection::kBackwardData;
  if (name == "bwd_filter" || name == "bwdf") return ConvDirection::kBackwardFilter;
  return std::nullopt;
}

namespace {
// Percent-encodes the separators so a name containing ';' or '=' cannot make two
// different keys print the same string.
std::string escape(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == ';') out += "%3B";
    else if (ch == '=') out += "%3D";
    else if (ch == '%') out += "%25";
    else out += ch;
  }
  return out;
}
}  // namespace

std::string ConvKernelKey::to_string() const {
  // Field order and spelling are part of the database format: change them only
  // together with the database's schema_version.
  std::ostringstream out;
  out << "dev=" << escape(device_name) << ";sm=" << sm_count << ";cuda=" << cuda_version
      << ";cudnn=" << cudnn_version << ";drv=" << driver_version << ";dtype=" << escape(dtype)
      << ";math=" << escape(math_type) << ";layout=" << escape(layout) << ";n=" << n << ";c=" << c
      << ";h=" << h << ";w=" << w << ";k=" << k << ";r=" << r << ";s=" << s
      << ";pad=" << pad_h << "," << pad_w << ";stride=" << stride_h << "," << stride_w
      << ";dil=" << dilation_h << "," << dilation_w << ";g=" << groups
      << ";dir=" << conv_direction_name(direction);
  return out.str();
}

size_t ConvKernelKeyHash::operator()(const ConvKernelKey& key) const {
  return std::hash<std::string>{}(key.to_string());
}

}  // namespace ucudnn::optimizer
