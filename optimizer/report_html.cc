// The optimizer report as one self-contained HTML page (report.h): inline CSS,
// inline SVG, no scripts and no external resources, so it opens anywhere and can
// be mailed or attached to CI. Plots:
//   - grouped horizontal bars per kernel: undivided (same limit), chosen, unlimited;
//   - per kernel its Pareto front, workspace on a log-2 x axis (a zero workspace
//     sits at its own "0" tick left of the smallest positive one), time on a
//     linear y axis, drawn as the staircase "best time within this workspace",
//     with the chosen point circled in red and the limit / unlimited / undivided
//     times as dashed lines.
// Every name that reaches the page goes through html_escape.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "optimizer/report.h"

namespace ucudnn::optimizer {

namespace {

constexpr const char* kUndividedColor = "#9e9e9e";
constexpr const char* kChosenColor = "#1f77b4";
constexpr const char* kUnlimitedColor = "#2ca02c";
constexpr const char* kHighlightColor = "#d62728";
constexpr const char* kLimitColor = "#ff7f0e";

std::string num(double v, const char* format = "%.1f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string ms(double v) { return v < 0 ? "n/a" : num(v, "%.4g") + " ms"; }

// "64 MiB", "1.5 KiB", "0": compact axis labels.
std::string short_size(double bytes) {
  if (bytes <= 0) return "0";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return num(bytes, "%.3g") + " " + units[u];
}

std::string shorten(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  size_t cut = max_chars - 1;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // keep UTF-8 whole
  return text.substr(0, cut) + "…";
}

std::string kernel_label(const KernelReport& r) {
  std::string label = r.nodes.empty() ? r.name : r.nodes.front();
  if (r.nodes.size() > 1) label += " (+" + std::to_string(r.nodes.size() - 1) + ")";
  if (r.direction != "fwd") label += " " + r.direction;  // a backward kernel (training)
  return label;
}

// A "nice" tick step (1, 2 or 5 × 10^k) giving about `count` ticks up to `max`.
double nice_step(double max, int count) {
  const double raw = max / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double n = raw / magnitude;
  return (n < 1.5 ? 1 : n < 3 ? 2 : n < 7 ? 5 : 10) * magnitude;
}

std::string pareto_svg(const KernelReport& r) {
  const double width = 480, height = 280, left = 64, right = 66, top = 16, bottom = 46;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const bool has_limit = r.limit_bytes != SIZE_MAX && r.limit_bytes > 0;

  // x range over every workspace shown (log 2), with a separate slot for 0.
  std::vector<double> xs;
  for (const Configuration& c : r.front) xs.push_back(static_cast<double>(c.workspace_bytes));
  xs.push_back(static_cast<double>(r.config.workspace_bytes));
  if (has_limit) xs.push_back(static_cast<double>(r.limit_bytes));
  double min_pos = 0, max_pos = 0;
  bool has_zero = false;
  for (double x : xs) {
    if (x <= 0) {
      has_zero = true;
      continue;
    }
    min_pos = min_pos == 0 ? x : std::min(min_pos, x);
    max_pos = std::max(max_pos, x);
  }
  if (max_pos == 0) min_pos = max_pos = 1024;
  const double zero_at = min_pos / 8;  // where a zero workspace is drawn
  double lo = std::log2(has_zero ? zero_at : min_pos) - 0.5, hi = std::log2(max_pos) + 0.5;
  if (hi - lo < 2) {
    lo -= 1;
    hi += 1;
  }
  auto x_of = [&](double bytes) {
    const double l = std::log2(bytes <= 0 ? zero_at : bytes);
    return left + (l - lo) / (hi - lo) * plot_w;
  };
  double y_max = std::max(r.config.time_ms, std::max(r.undivided_ms, r.unlimited_ms));
  for (const Configuration& c : r.front) y_max = std::max(y_max, c.time_ms);
  if (y_max <= 0) y_max = 1;
  const double y_step = nice_step(y_max * 1.05, 5);
  y_max = std::ceil(y_max * 1.05 / y_step) * y_step;
  auto y_of = [&](double t) { return top + plot_h * (1 - t / y_max); };

  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" role=\"img\">\n";
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\"" << plot_h
    << "\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n";
  // y ticks and grid
  for (double t = 0; t <= y_max + y_step / 2; t += y_step) {
    const double y = y_of(t);
    s << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << num(y) << "\" y2=\"" << num(y)
      << "\" stroke=\"#e4e4e4\"/>";
    s << "<text x=\"" << left - 6 << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\" class=\"tick\">"
      << num(t, "%.3g") << "</text>\n";
  }
  // x ticks: powers of two, at most ~6 of them, plus "0"
  const int first = static_cast<int>(std::ceil(lo)), last = static_cast<int>(std::floor(hi));
  const int step = std::max(1, (last - first + 5) / 6);
  for (int e = first; e <= last; ++e) {
    if (e % step != 0) continue;
    const double bytes = std::pow(2.0, e);
    if (has_zero && bytes < min_pos / 2) continue;  // the zero slot owns that region
    const double x = x_of(bytes);
    s << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << top << "\" y2=\"" << top + plot_h
      << "\" stroke=\"#e4e4e4\"/>";
    s << "<text x=\"" << num(x) << "\" y=\"" << top + plot_h + 16 << "\" text-anchor=\"middle\" class=\"tick\">"
      << html_escape(short_size(bytes)) << "</text>\n";
  }
  if (has_zero)
    s << "<text x=\"" << num(x_of(0)) << "\" y=\"" << top + plot_h + 16
      << "\" text-anchor=\"middle\" class=\"tick\">0</text>\n";
  s << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 6
    << "\" text-anchor=\"middle\" class=\"axis\">workspace (log scale)</text>\n";
  s << "<text transform=\"translate(14," << top + plot_h / 2
    << ") rotate(-90)\" text-anchor=\"middle\" class=\"axis\">time (ms)</text>\n";

  // Reference lines, labelled in the right margin (clear of the data); a label
  // that would overlap the previous one moves below it.
  double last_label_y = -1e9;
  auto hline = [&](double t, const char* color, const char* label) {
    if (t < 0) return;
    const double y = y_of(t);
    double label_y = y + 4;
    if (std::abs(label_y - last_label_y) < 12) label_y = last_label_y + 12;
    last_label_y = label_y;
    s << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << num(y) << "\" y2=\"" << num(y)
      << "\" stroke=\"" << color << "\" stroke-dasharray=\"5,4\"/>";
    s << "<text x=\"" << left + plot_w + 4 << "\" y=\"" << num(label_y) << "\" class=\"note\" fill=\""
      << color << "\">" << label << "</text>\n";
  };
  hline(r.unlimited_ms, kUnlimitedColor, "unlimited");
  hline(r.undivided_ms, kUndividedColor, "undivided");
  if (has_limit) {
    const double x = x_of(static_cast<double>(r.limit_bytes));
    s << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << top << "\" y2=\"" << top + plot_h
      << "\" stroke=\"" << kLimitColor << "\" stroke-dasharray=\"5,4\"/>";
    s << "<text x=\"" << num(x + 4) << "\" y=\"" << top + 12 << "\" class=\"note\" fill=\"" << kLimitColor
      << "\">limit</text>\n";
  }

  // the front: staircase, then points with tooltips
  if (!r.front.empty()) {
    s << "<path fill=\"none\" stroke=\"" << kChosenColor << "\" stroke-width=\"1.5\" d=\"M"
      << num(x_of(static_cast<double>(r.front[0].workspace_bytes))) << "," << num(y_of(r.front[0].time_ms));
    for (size_t i = 1; i < r.front.size(); ++i)
      s << " H" << num(x_of(static_cast<double>(r.front[i].workspace_bytes))) << " V" << num(y_of(r.front[i].time_ms));
    s << " H" << left + plot_w << "\"/>\n";
  }
  for (size_t i = 0; i < r.front.size(); ++i) {
    const Configuration& c = r.front[i];
    s << "<circle cx=\"" << num(x_of(static_cast<double>(c.workspace_bytes))) << "\" cy=\"" << num(y_of(c.time_ms))
      << "\" r=\"3.5\" fill=\"" << kChosenColor << "\"><title>"
      << html_escape(r.front_configurations[i] + ": " + ms(c.time_ms) + ", " + format_bytes(c.workspace_bytes))
      << "</title></circle>\n";
  }
  s << "<circle cx=\"" << num(x_of(static_cast<double>(r.config.workspace_bytes))) << "\" cy=\""
    << num(y_of(r.config.time_ms)) << "\" r=\"7\" fill=\"none\" stroke=\"" << kHighlightColor
    << "\" stroke-width=\"2.5\"><title>chosen: "
    << html_escape(r.configuration + ": " + ms(r.config.time_ms) + ", " + format_bytes(r.config.workspace_bytes))
    << "</title></circle>\n";
  s << "</svg>";
  return s.str();
}

std::string bars_svg(const std::vector<KernelReport>& kernels) {
  const double label_w = 230, value_w = 90, width = 940, bar_h = 13, group_gap = 14, top = 34, bottom = 30;
  const double plot_w = width - label_w - value_w;
  const double group_h = 3 * bar_h + group_gap;
  const double height = top + group_h * static_cast<double>(kernels.size()) + bottom;
  double x_max = 0;
  for (const KernelReport& r : kernels) x_max = std::max({x_max, r.undivided_ms, r.config.time_ms, r.unlimited_ms});
  if (x_max <= 0) x_max = 1;
  const double x_step = nice_step(x_max, 6);
  x_max = std::ceil(x_max / x_step) * x_step;
  auto x_of = [&](double t) { return label_w + plot_w * t / x_max; };

  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" role=\"img\">\n";
  const struct {
    const char* color;
    const char* label;
  } legend[] = {{kUndividedColor, "undivided (same limit)"}, {kChosenColor, "chosen"}, {kUnlimitedColor, "unlimited"}};
  double lx = label_w;
  for (const auto& item : legend) {
    s << "<rect x=\"" << lx << "\" y=\"8\" width=\"12\" height=\"12\" fill=\"" << item.color << "\"/>";
    s << "<text x=\"" << lx + 17 << "\" y=\"18\" class=\"axis\">" << item.label << "</text>\n";
    lx += 190;
  }
  const double plot_bottom = height - bottom;
  for (double t = 0; t <= x_max + x_step / 2; t += x_step) {
    const double x = x_of(t);
    s << "<line x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << top - 4 << "\" y2=\"" << plot_bottom
      << "\" stroke=\"#e4e4e4\"/>";
    s << "<text x=\"" << num(x) << "\" y=\"" << plot_bottom + 16 << "\" text-anchor=\"middle\" class=\"tick\">"
      << num(t, "%.3g") << "</text>\n";
  }
  s << "<text x=\"" << width - 4 << "\" y=\"" << plot_bottom + 16 << "\" text-anchor=\"end\" class=\"axis\">ms</text>\n";
  for (size_t k = 0; k < kernels.size(); ++k) {
    const KernelReport& r = kernels[k];
    const double y0 = top + group_h * static_cast<double>(k);
    const std::string label = std::to_string(k + 1) + ". " + kernel_label(r);
    s << "<text x=\"" << label_w - 8 << "\" y=\"" << num(y0 + 1.5 * bar_h + 4) << "\" text-anchor=\"end\" class=\"label\">"
      << html_escape(shorten(label, 34)) << "<title>" << html_escape(label + " — " + r.configuration)
      << "</title></text>\n";
    const double values[] = {r.undivided_ms, r.config.time_ms, r.unlimited_ms};
    const char* colors[] = {kUndividedColor, kChosenColor, kUnlimitedColor};
    for (int b = 0; b < 3; ++b) {
      const double y = y0 + b * bar_h;
      if (values[b] < 0) {
        s << "<text x=\"" << label_w + 4 << "\" y=\"" << num(y + bar_h - 1) << "\" class=\"tick\">n/a</text>\n";
        continue;
      }
      s << "<rect x=\"" << label_w << "\" y=\"" << num(y) << "\" width=\"" << num(x_of(values[b]) - label_w, "%.2f")
        << "\" height=\"" << bar_h - 1 << "\" fill=\"" << colors[b] << "\"><title>" << legend[b].label << ": "
        << ms(values[b]) << "</title></rect>";
      s << "<text x=\"" << num(x_of(values[b]) + 4) << "\" y=\"" << num(y + bar_h - 3) << "\" class=\"value\">"
        << ms(values[b]) << "</text>\n";
    }
  }
  s << "</svg>";
  return s.str();
}

constexpr const char* kStyle = R"(
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222; margin: 24px 32px; max-width: 1360px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.summary th { width: 210px; }
code { font-size: 12px; }
.grid { display: flex; flex-wrap: wrap; gap: 16px; }
figure { margin: 0; border: 1px solid #e2e2e2; padding: 8px; background: #fff; }
figcaption { font-size: 13px; margin-bottom: 4px; max-width: 480px; overflow-wrap: anywhere; }
svg text { font-family: inherit; } .tick { font-size: 11px; fill: #555; } .axis { font-size: 12px; fill: #333; }
.label { font-size: 12px; fill: #222; } .value { font-size: 10px; fill: #444; } .note { font-size: 11px; }
.muted { color: #777; font-size: 12px; }
)";

void summary_row(std::ostringstream& s, const std::string& name, const std::string& value) {
  s << "<tr><th>" << html_escape(name) << "</th><td>" << html_escape(value) << "</td></tr>\n";
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string report_html(const ReportData& d) {
  std::ostringstream s;
  const std::string title = "ucudnn report" + (d.model.empty() ? std::string() : " — " + d.model);
  s << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << html_escape(title)
    << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  s << "<h1>" << html_escape(title) << "</h1>\n";
  s << "<p class=\"muted\">Predicted times come from the measured benchmark table (sum of the micro-batches' "
       "times); &ldquo;undivided&rdquo; is the fastest single algorithm at the full batch within the same "
       "workspace limit, &ldquo;unlimited&rdquo; the fastest with no limit.</p>\n";

  const double speedup = d.total_undivided_ms > 0 && d.total_predicted_ms > 0 ? d.total_undivided_ms / d.total_predicted_ms : 0;
  s << "<h2>Summary</h2>\n<table class=\"summary\">\n";
  if (!d.device.empty()) summary_row(s, "device", d.device + (d.device_name.empty() ? "" : " (" + d.device_name + ")"));
  summary_row(s, "policy", d.policy);
  summary_row(s, "layout", format_layout(d));
  summary_row(s, d.policy == "wd" ? "total budget" : "per-kernel limit", format_workspace_limit(d));
  summary_row(s, "batch", std::to_string(d.batch) + ", micro-batch sizes " + d.batch_sizes +
                              ", division threshold " + num(d.division_threshold * 100) + " %");
  summary_row(s, "kernels", std::to_string(d.kernels.size()) + " (" + std::to_string(d.conv_nodes) + " convolution nodes)");
  summary_row(s, "predicted total", ms(d.total_predicted_ms));
  summary_row(s, "undivided total", ms(d.total_undivided_ms) +
                                        (d.kernels_without_undivided ? " (" + std::to_string(d.kernels_without_undivided) +
                                                                           " kernels have no undivided algorithm within their limit)"
                                                                     : ""));
  summary_row(s, "unlimited total", ms(d.total_unlimited_ms));
  if (d.unshared_ms >= 0) summary_row(s, "without sharing", ms(d.unshared_ms) + " (every kernel its own slice, as in μ-cuDNN)");
  summary_row(s, "speedup vs undivided", speedup > 0 ? num(speedup, "%.2f") + "×" : "n/a");
  summary_row(s, "predicted / unlimited",
              d.total_unlimited_ms > 0 ? num(d.total_predicted_ms / d.total_unlimited_ms, "%.2f") + "×" : "n/a");
  summary_row(s, "workspace pool", format_workspace_pool(d));
  if (!d.fused_pointwise.empty()) summary_row(s, "fused pointwise", format_fused_pointwise(d));
  if (d.streams == 2) {
    std::string side = std::to_string(d.side_stream_nodes.size()) + " convolutions beside the main branch";
    for (size_t i = 0; i < d.side_stream_nodes.size(); ++i) side += (i ? ", " : ": ") + d.side_stream_nodes[i];
    summary_row(s, "side stream", side);
  }
  if (d.has_ilp)
    summary_row(s, "ILP (CBC)", "objective " + ms(d.ilp.objective_ms) + ", gap " + num(d.ilp.gap * 100, "%.2f") +
                                    " %, solve time " + num(d.ilp.solve_seconds, "%.3f") + " s, status " + d.ilp.status);
  summary_row(s, "optimize time", num(d.optimize_seconds, "%.3f") + " s; kernels benchmarked " +
                                      std::to_string(d.kernels_benchmarked) + ", reused " +
                                      std::to_string(d.kernels_reused));
  s << "</table>\n";

  s << "<h2>Kernels</h2>\n<table>\n<tr><th>#</th><th>nodes</th><th>dir</th><th>input</th><th>filter</th><th>configuration</th>"
       "<th>predicted</th><th>workspace</th><th>undivided</th><th>unlimited</th><th>speedup</th></tr>\n";
  for (size_t k = 0; k < d.kernels.size(); ++k) {
    const KernelReport& r = d.kernels[k];
    std::string nodes;
    for (size_t i = 0; i < r.nodes.size(); ++i) nodes += (i ? ", " : "") + r.nodes[i];
    std::string workspace = format_bytes(r.config.workspace_bytes);
    if (d.policy == "wd") workspace += " (slice " + format_bytes(r.workspace_size) + " @ " + std::to_string(r.workspace_offset) + ")";
    s << "<tr><td class=\"n\">" << k + 1 << "</td><td>" << html_escape(nodes) << "</td><td>"
      << html_escape(r.direction) << "</td><td><code>"
      << html_escape(r.x_shape.empty() ? "" : shape_to_string(r.x_shape)) << "</code></td><td><code>"
      << html_escape(r.w_shape.empty() ? "" : shape_to_string(r.w_shape)) << "</code></td><td><code>"
      << html_escape(r.configuration) << "</code></td><td class=\"n\">" << ms(r.config.time_ms) << "</td><td class=\"n\">"
      << html_escape(workspace) << "</td><td class=\"n\">" << ms(r.undivided_ms) << "</td><td class=\"n\">"
      << ms(r.unlimited_ms) << "</td><td class=\"n\">" << (r.speedup > 0 ? num(r.speedup, "%.2f") + "×" : "n/a")
      << "</td></tr>\n";
  }
  s << "</table>\n";
  if (!d.fused_pointwise.empty()) {
    s << "<h2>Fused pointwise nodes</h2>\n<table>\n<tr><th>node</th><th>pattern</th></tr>\n";
    for (const FusedPointwiseReport& f : d.fused_pointwise)
      s << "<tr><td>" << html_escape(f.node) << "</td><td>" << html_escape(f.pattern) << "</td></tr>\n";
    s << "</table>\n";
  }

  s << "<h2>Time per kernel</h2>\n" << bars_svg(d.kernels) << "\n";
  s << "<h2>Pareto fronts</h2>\n<p class=\"muted\">Each kernel's non-dominated (workspace, time) configurations; "
       "the line is the best time reachable within a workspace. Red circle: the chosen configuration. Hover a point "
       "for its configuration.</p>\n<div class=\"grid\">\n";
  for (size_t k = 0; k < d.kernels.size(); ++k) {
    const KernelReport& r = d.kernels[k];
    s << "<figure><figcaption><b>" << k + 1 << ". " << html_escape(kernel_label(r)) << "</b>";
    if (!r.x_shape.empty())
      s << " <code>" << html_escape(shape_to_string(r.x_shape) + " * " + shape_to_string(r.w_shape)) << "</code>";
    s << "<br>chosen <code>" << html_escape(r.configuration) << "</code>, " << ms(r.config.time_ms) << ", "
      << html_escape(format_bytes(r.config.workspace_bytes)) << "</figcaption>\n"
      << pareto_svg(r) << "</figure>\n";
  }
  s << "</div>\n</body>\n</html>\n";
  return s.str();
}

}  // namespace ucudnn::optimizer
