// ConvKernelKey's canonical string, direction names and hash.
#include "optimizer/kernel_key.h"

#include <charconv>
#include <functional>
#include <sstream>
#include <vector>

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
std::string unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string_view code = text.substr(i, 3);
    if (code == "%3B" || code == "%3D" || code == "%25") {
      out += code == "%3B" ? ';' : code == "%3D" ? '=' : '%';
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

template <typename T>
bool parse_whole(std::string_view text, T& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && !text.empty();
}

// "a,b" or "a,b,c,d" into `values` (2 or 4 numbers).
bool parse_pair_list(std::string_view text, std::vector<int64_t>& values) {
  values.clear();
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    int64_t v = 0;
    if (!parse_whole(text.substr(begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin), v))
      return false;
    values.push_back(v);
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return values.size() == 2 || values.size() == 4;
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

std::optional<ConvKernelKey> parse_kernel_key(std::string_view text) {
  static const char* const kFields[] = {"dev", "sm", "cuda", "cudnn", "drv", "dtype", "math", "layout", "n", "c",
                                        "h", "w", "k", "r", "s", "pad", "stride", "dil", "g", "dir"};
  std::vector<std::string_view> values;
  size_t begin = 0;
  for (const char* name : kFields) {  // the fields in to_string's order, each "name=value"
    if (begin > text.size()) return std::nullopt;
    size_t end = text.find(';', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view field = text.substr(begin, end - begin);
    const size_t eq = field.find('=');
    if (eq == std::string_view::npos || field.substr(0, eq) != name) return std::nullopt;
    values.push_back(field.substr(eq + 1));
    begin = end + 1;
  }
  if (begin <= text.size()) return std::nullopt;  // something after dir=
  ConvKernelKey key;
  key.device_name = unescape(values[0]);
  key.dtype = unescape(values[5]);
  key.math_type = unescape(values[6]);
  key.layout = unescape(values[7]);
  int64_t* const shape[] = {&key.n, &key.c, &key.h, &key.w, &key.k, &key.r, &key.s};
  std::vector<int64_t> pad, stride, dilation;
  bool ok = parse_whole(values[1], key.sm_count) && parse_whole(values[2], key.cuda_version) &&
            parse_whole(values[3], key.cudnn_version) && parse_whole(values[4], key.driver_version) &&
            parse_whole(values[18], key.groups) && parse_pair_list(values[15], pad) &&
            parse_pair_list(values[16], stride) && stride.size() == 2 && parse_pair_list(values[17], dilation) &&
            dilation.size() == 2;
  for (int i = 0; ok && i < 7; ++i) ok = parse_whole(values[8 + i], *shape[i]) && *shape[i] >= 1;
  const std::optional<ConvDirection> direction = parse_conv_direction(values[19]);
  if (!ok || !direction || (key.layout != "nchw" && key.layout != "nhwc") || key.sm_count < 0 || key.groups < 1)
    return std::nullopt;
  key.direction = *direction;
  key.pad_h = pad[0];
  key.pad_w = pad[1];
  if (pad.size() == 4) {
    key.pad_h_end = pad[2];
    key.pad_w_end = pad[3];
  }
  key.stride_h = stride[0];
  key.stride_w = stride[1];
  key.dilation_h = dilation[0];
  key.dilation_w = dilation[1];
  for (int64_t v : pad)
    if (v < 0) return std::nullopt;
  for (int64_t v : {key.stride_h, key.stride_w, key.dilation_h, key.dilation_w})
    if (v < 1) return std::nullopt;
  // Only the canonical spelling (no "+1", no "bwdd", no symmetric four-number pads) is a key.
  if (key.to_string() != text) return std::nullopt;
  return key;
}

OpKind conv_direction_op(ConvDirection direction) {
  switch (direction) {
    case ConvDirection::kForward: return OpKind::kConv;
    case ConvDirection::kBackwardData: return OpKind::kConvGradData;
    case ConvDirection::kBackwardFilter: return OpKind::kConvGradFilter;
  }
  return OpKind::kConv;
}

size_t ConvKernelKeyHash::operator()(const ConvKernelKey& key) const {
  return std::hash<std::string>{}(key.to_string());
}

}  // namespace ucudnn::optimizer
