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
      << ";pad=" << pad_h << "," << pad_w;
  // Asymmetric padding (e.g. SAME_UPPER) adds the end pads; symmetric keys keep
  // the two-number form recorded databases use.
  const int64_t h_end = pad_h_end < 0 ? pad_h : pad_h_end, w_end = pad_w_end < 0 ? pad_w : pad_w_end;
  if (h_end != pad_h || w_end != pad_w) out << "," << h_end << "," << w_end;
  out << ";stride=" << stride_h << "," << stride_w
      << ";dil=" << dilation_h << "," << dilation_w << ";g=" << groups
      << ";dir=" << conv_direction_name(direction);
  return out.str();
}

size_t ConvKernelKeyHash::operator()(const ConvKernelKey& key) const {
  return std::hash<std::string>{}(key.to_string());
}

}  // namespace ucudnn::optimizer
