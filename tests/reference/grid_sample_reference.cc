// The naive GridSample reference (grid_sample_reference.h).
#include "tests/reference/grid_sample_reference.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "tests/reference/element_access.h"

namespace ucudnn::reference {

// GridSample in double, from PyTorch's definition (grid_sampler_2d): a grid value maps to a pixel coordinate
// (align_corners: -1 and 1 the corner pixels' centres, else their outer edges); border clamps it, reflection
// folds it back about the same edges then clamps; bilinear and nearest (ties to even) pad the sampled
// coordinate, bicubic (Keys, a = -0.75) each tap; a tap off the image reads 0.
Tensor grid_sample(const Tensor& x, const Tensor& grid, const ir::Attributes& attrs) {
  const std::string mode = attrs.get_string("mode"), padding = attrs.get_string("padding_mode");
  const bool align = attrs.get_int("align_corners") != 0;
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const int64_t oh = grid.shape()[1], ow = grid.shape()[2];
  const auto pixel = [&](double g, int64_t size) {
    return align ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
  };
  const auto pad = [&](double v, int64_t size) {
    if (padding == "reflection") {
      const double low = align ? 0.0 : -0.5, high = align ? size - 1.0 : size - 0.5, span = high - low;
      if (span <= 0) return 0.0;
      double d = std::fabs(v - low);
      const auto flips = static_cast<int64_t>(std::floor(d / span));
      d -= static_cast<double>(flips) * span;
      v = flips % 2 == 0 ? low + d : high - d;
    }
    if (padding != "zeros") v = std::clamp(v, 0.0, size - 1.0);
    return v;
  };
  const auto at = [&](int64_t plane, int64_t r, int64_t col) {
    return r < 0 || r >= h || col < 0 || col >= w ? 0.0 : get(x, (plane * h + r) * w + col);
  };
  const auto keys = [](double d) {
    const double a = -0.75;
    d = std::fabs(d);
    return d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1 : d < 2 ? ((a * d - 5 * a) * d + 8 * a) * d - 4 * a : 0.0;
  };
  Tensor y = make(DType::kFloat32, {n, c, oh, ow});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < oh * ow; ++p) {
      const double ux = pixel(get(grid, (i * oh * ow + p) * 2), w), uy = pixel(get(grid, (i * oh * ow + p) * 2 + 1), h);
      for (int64_t k = 0; k < c; ++k) {
        const int64_t plane = i * c + k;
        double v = 0;
        if (mode == "bicubic" || mode == "cubic") {
          const double x0 = std::floor(ux), y0 = std::floor(uy);
          for (int dy = -1; dy <= 2; ++dy)
            for (int dx = -1; dx <= 2; ++dx)
              v += keys(uy - (y0 + dy)) * keys(ux - (x0 + dx)) *
                   at(plane, static_cast<int64_t>(pad(y0 + dy, h)), static_cast<int64_t>(pad(x0 + dx, w)));
        } else if (mode == "nearest") {
          v = at(plane, static_cast<int64_t>(std::nearbyint(pad(uy, h))),
                 static_cast<int64_t>(std::nearbyint(pad(ux, w))));
        } else {
          const double sx = pad(ux, w), sy = pad(uy, h), x0 = std::floor(sx), y0 = std::floor(sy);
          for (int dy = 0; dy <= 1; ++dy)
            for (int dx = 0; dx <= 1; ++dx)
              v += (1 - std::fabs(sy - (y0 + dy))) * (1 - std::fabs(sx - (x0 + dx))) *
                   at(plane, static_cast<int64_t>(y0) + dy, static_cast<int64_t>(x0) + dx);
        }
        put(y, plane * oh * ow + p, v);
      }
    }
  return y;
}

}  // namespace ucudnn::reference
