#pragma once
// The two charts of report.html as inline SVG (no scripts, no external resources): a stacked
// horizontal bar of the phases per step for each run or worker, and test accuracy per epoch.
#include <string>
#include <vector>

#include "launch/report_run.h"

namespace dtbench {

struct PhaseBar {
  std::string label;
  std::array<double, kReportPhaseCount> mean_s{};  // seconds per step; the last is the step
};

struct AccuracySeries {
  std::string label;
  std::vector<std::pair<int, double>> points;  // (epoch, accuracy 0..1)
};

std::string phase_bars_svg(const std::vector<PhaseBar>& bars);
std::string accuracy_svg(const std::vector<AccuracySeries>& series);

}  // namespace dtbench
