// Charts as SVG, written by brisk for the benchmarks' --plot: line charts and histograms with
// axes, ticks, labels and a legend, stacked in one file that any browser shows. No scripts, no
// styles from outside: the file is plain SVG 1.1.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace brisk::cli {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

struct Chart {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
  bool bars = false;  // a histogram: each point is a bin's centre and count
};

// The charts one under the other, as an SVG document.
std::string render_svg(const std::vector<Chart>& charts);
// Writes it; an error names the file.
void write_svg(const std::string& path, const std::vector<Chart>& charts);

// A histogram of the values in `bins` equal bins (points at the bins' centres).
std::vector<std::pair<double, double>> histogram(const std::vector<double>& values, int bins);

}  // namespace brisk::cli
