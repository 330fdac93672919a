// Sliding-window geometry (see window_geometry.h for the formulas).
#include "runtime/ops/window_geometry.h"

#include <algorithm>
#include <string>

#include "runtime/core/bytes.h"

namespace ucudnn {

namespace {

std::string ints_to_string(const std::vector<int64_t>& v) { return shape_to_string(v); }

}  // namespace

Status read_axis_ints(const ir::Attributes& attrs, const char* name, size_t expected, int64_t fallback,
                      std::vector<int64_t>* out) {
  if (!attrs.has(name)) {
    out->assign(expected, fallback);
    return Status::ok();
  }
  *out = attrs.get_ints(name);
  if (out->size() != expected)
    return invalid_model(std::string(name) + " " + ints_to_string(*out) + " has " + std::to_string(out->size()) +
                         " values; expected " + std::to_string(expected));
  return Status::ok();
}

Expected<WindowGeometry> compute_window_geometry(const ir::Attributes& attrs, const Shape& input_spatial,
                                                 const std::vector<int64_t>& kernel, bool ceil_mode) {
  const size_t rank = input_spatial.size();
  WindowGeometry g;
  g.input = input_spatial;
  g.kernel = kernel;
  if (kernel.size() != rank)
    return invalid_model("kernel_shape " + ints_to_string(kernel) + " has " + std::to_string(kernel.size()) +
                         " dims but the input has " + std::to_string(rank) + " spatial dims");
  UCUDNN_RETURN_IF_ERROR(read_axis_ints(attrs, "strides", rank, 1, &g.stride));
  UCUDNN_RETURN_IF_ERROR(read_axis_ints(attrs, "dilations", rank, 1, &g.dilation));
  std::vector<int64_t> pads;
  UCUDNN_RETURN_IF_ERROR(read_axis_ints(attrs, "pads", 2 * rank, 0, &pads));
  const std::string auto_pad = attrs.has("auto_pad") ? attrs.get_string("auto_pad") : "NOTSET";
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
    return invalid_model("auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  const bool explicit_pads = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  if (auto_pad != "NOTSET" && explicit_pads)
    return invalid_model("pads " + ints_to_string(pads) + " cannot be combined with auto_pad '" + auto_pad + "'");

  g.pad_begin.resize(rank);
  g.pad_end.resize(rank);
  g.output.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    const std::string axis = " along spatial axis " + std::to_string(i);
    if (kernel[i] < 1) return invalid_model("kernel size " + std::to_string(kernel[i]) + axis + " must be >= 1");
    if (g.stride[i] < 1) return invalid_model("stride " + std::to_string(g.stride[i]) + axis + " must be >= 1");
    if (g.dilation[i] < 1) return invalid_model("dilation " + std::to_string(g.dilation[i]) + axis + " must be >= 1");
    if (pads[i] < 0 || pads[i + rank] < 0) return invalid_model("pads " + ints_to_string(pads) + " must be >= 0");
    const int64_t in = input_spatial[i], s = g.stride[i];
    // Attributes are any int64: every step below is checked (in, out and s are >= 0 here).
    auto too_large = [&] {
      return invalid_model("kernel " + std::to_string(kernel[i]) + ", dilation " + std::to_string(g.dilation[i]) +
                           ", stride " + std::to_string(s) + " and pads " + ints_to_string(pads) + axis +
                           " give a window or padded size that does not fit in 64 bits");
    };
    int64_t dk = 0;  // the dilated window: (kernel - 1) * dilation + 1
    if (!checked_mul(kernel[i] - 1, g.dilation[i], &dk) || !checked_add(dk, 1, &dk)) return too_large();
    int64_t out = 0, pb = 0, pe = 0;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = in == 0 ? 0 : 1 + (in - 1) / s;  // ceil(in / s)
      int64_t total = 0;                     // (out - 1) * s + dk - in, at least 0
      if (!checked_mul(std::max<int64_t>(out - 1, 0), s, &total) || !checked_add(total, dk - in, &total))
        return too_large();
      total = std::max<int64_t>(0, total);
      pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else {
      if (auto_pad == "NOTSET") {
        pb = pads[i];
        pe = pads[i + rank];
      }
      int64_t span = 0;  // in + pb + pe - dk
      if (!checked_add(in, pb, &span) || !checked_add(span, pe, &span) || !checked_sub(span, dk, &span))
        return too_large();
      if (span < 0)
        return invalid_model("the window (kernel " + std::to_string(kernel[i]) + ", dilation " +
                             std::to_string(g.dilation[i]) + ") is larger than the padded input (" +
                             std::to_string(in) + " + pads " + std::to_string(pb) + "+" + std::to_string(pe) + ")" +
                             axis + "; the output would be empty");
      out = (ceil_mode && span > 0 ? 1 + (span - 1) / s : span / s) + 1;
      // The last window must start inside the input or its begin padding; a start past int64 does not.
      // (in + pb fits: in + pb + pe did, with pe >= 0.)
      int64_t last_start = 0;
      if (ceil_mode && (!checked_mul(out - 1, s, &last_start) || last_start >= in + pb)) --out;
    }
    if (out < 1) return invalid_model("the output size would be " + std::to_string(out) + axis);
    g.pad_begin[i] = pb;
    g.pad_end[i] = pe;
    g.output[i] = out;
  }
  return g;
}

}  // namespace ucudnn
