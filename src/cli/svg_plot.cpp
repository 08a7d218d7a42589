#include "cli/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "core/error.h"

namespace brisk::cli {

namespace {

constexpr double kWidth = 800, kHeight = 320;  // of one chart
constexpr double kLeft = 72, kRight = 24, kTop = 44, kBottom = 52;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Tick positions at 1, 2 or 5 times a power of ten, about five across [lo, hi].
std::vector<double> ticks(double lo, double hi) {
  const double raw = (hi - lo) / 5;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / p < 1.5 ? p : raw / p < 3.5 ? 2 * p : raw / p < 7.5 ? 5 * p : 10 * p;
  std::vector<double> out;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    out.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

struct Range {
  double lo, hi;
};

Range x_range(const Chart& c) {
  Range r{INFINITY, -INFINITY};
  for (const auto& s : c.series)
    for (auto [x, y] : s.points) r.lo = std::min(r.lo, x), r.hi = std::max(r.hi, x);
  if (!(r.lo <= r.hi)) return {0, 1};
  if (c.bars && !c.series.empty() && c.series[0].points.size() > 1) {
    const auto& p = c.series[0].points;
    const double half = (p[1].first - p[0].first) / 2;
    r.lo -= half, r.hi += half;
  }
  if (r.hi - r.lo < 1e-12) r.lo -= 0.5, r.hi += 0.5;
  return r;
}

Range y_range(const Chart& c) {
  double hi = 0, lo = 0;
  for (const auto& s : c.series)
    for (auto [x, y] : s.points) hi = std::max(hi, y), lo = std::min(lo, y);
  if (hi - lo < 1e-12) hi = lo + 1;
  return {lo, hi * 1.08};
}

void draw_axes(std::string& out, const Chart& c, double top, Range xr, Range yr) {
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  auto X = [&](double x) { return kLeft + (x - xr.lo) / (xr.hi - xr.lo) * w; };
  auto Y = [&](double y) { return top + kTop + h - (y - yr.lo) / (yr.hi - yr.lo) * h; };
  out += fmt::format(R"(<text x="{}" y="{}" font-size="15" font-weight="bold">{}</text>)", kLeft,
                     top + 24, escape(c.title)) +
         "\n";
  out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888"/>)",
                     kLeft, top + kTop, w, h) +
         "\n";
  for (double t : ticks(xr.lo, xr.hi))
    out +=
        fmt::format(R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#ddd"/>)"
                    R"(<text x="{0:.1f}" y="{3}" font-size="11" text-anchor="middle">{4:g}</text>)",
                    X(t), top + kTop, top + kTop + h, top + kTop + h + 16, t) +
        "\n";
  for (double t : ticks(yr.lo, yr.hi))
    out += fmt::format(R"(<line x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}" stroke="#ddd"/>)"
                       R"(<text x="{3}" y="{4:.1f}" font-size="11" text-anchor="end">{5:g}</text>)",
                       kLeft, Y(t), kLeft + w, kLeft - 6, Y(t) + 4, t) +
           "\n";
  out += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>)",
                     kLeft + w / 2, top + kHeight - 12, escape(c.x_label)) +
         "\n";
  out += fmt::format(R"(<text x="16" y="{0}" font-size="12" text-anchor="middle" )"
                     R"svg(transform="rotate(-90 16 {0})">{1}</text>)svg",
                     top + kTop + h / 2, escape(c.y_label)) +
         "\n";
}

void draw_chart(std::string& out, const Chart& c, double top) {
  const Range xr = x_range(c), yr = y_range(c);
  draw_axes(out, c, top, xr, yr);
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  auto X = [&](double x) { return kLeft + (x - xr.lo) / (xr.hi - xr.lo) * w; };
  auto Y = [&](double y) { return top + kTop + h - (y - yr.lo) / (yr.hi - yr.lo) * h; };
  for (size_t k = 0; k < c.series.size(); ++k) {
    const PlotSeries& s = c.series[k];
    const char* color = kColors[k % std::size(kColors)];
    out += fmt::format(R"(<g class="series" data-series="{}"><title>{}</title>)", escape(s.name),
                       escape(s.name)) +
           "\n";
    if (c.bars) {
      const double bw = s.points.size() > 1 ? (X(s.points[1].first) - X(s.points[0].first)) : w / 2;
      for (auto [x, y] : s.points)
        out += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" )"
                           R"(fill="{}" fill-opacity="0.7"/>)",
                           X(x) - bw / 2, Y(y), std::max(bw - 1, 1.0), Y(yr.lo) - Y(y), color) +
               "\n";
    } else {
      std::string pts;
      for (auto [x, y] : s.points) pts += fmt::format("{:.1f},{:.1f} ", X(x), Y(y));
      out += fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>)",
                         color, pts) +
             "\n";
      if (s.points.size() <= 40)
        for (auto [x, y] : s.points)
          out += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"/>)", X(x), Y(y),
                             color) +
                 "\n";
    }
    out += "</g>\n";
    // The legend, top right.
    const double ly = top + kTop + 14 + 16 * static_cast<double>(k);
    out += fmt::format(R"(<rect x="{}" y="{}" width="12" height="12" fill="{}"/>)"
                       R"(<text x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)",
                       kWidth - kRight - 18, ly - 10, color, kWidth - kRight - 24, ly,
                       escape(s.name)) +
           "\n";
  }
}

}  // namespace

std::string render_svg(const std::vector<Chart>& charts) {
  const double total = kHeight * static_cast<double>(std::max<size_t>(charts.size(), 1));
  std::string out = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
      R"(font-family="sans-serif">)"
      "\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kWidth, total);
  for (size_t i = 0; i < charts.size(); ++i)
    draw_chart(out, charts[i], kHeight * static_cast<double>(i));
  return out + "</svg>\n";
}

void write_svg(const std::string& path, const std::vector<Chart>& charts) {
  std::ofstream f(path, std::ios::binary);
  if (!f) fail("--plot: cannot write {}", path);
  f << render_svg(charts);
  if (!f) fail("--plot: writing {} failed", path);
}

std::vector<std::pair<double, double>> histogram(const std::vector<double>& values, int bins) {
  if (values.empty() || bins < 1) return {};
  const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  const double lo = *mn, hi = std::max(*mx, *mn + 1e-9);
  const double width = (hi - lo) / bins;
  std::vector<double> count(static_cast<size_t>(bins), 0);
  for (double v : values)
    ++count[std::min(static_cast<size_t>((v - lo) / width), static_cast<size_t>(bins - 1))];
  std::vector<std::pair<double, double>> out;
  for (int b = 0; b < bins; ++b)
    out.emplace_back(lo + (b + 0.5) * width, count[static_cast<size_t>(b)]);
  return out;
}

}  // namespace brisk::cli
