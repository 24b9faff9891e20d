#pragma once
// What the options of `dtbench report` change in its tables and charts.
#include <cstddef>
#include <vector>

namespace dtbench {

struct ReportSettings {
  // Test accuracies (fractions) whose time to reach is reported, ascending.
  std::vector<double> target_accuracies = {0.5, 0.7, 0.8, 0.9};
  size_t baseline = 0;     // the run (index) a comparison's ratios are against
  bool log_scale = false;  // the time chart's axis: runs that differ tenfold stay readable
};

}  // namespace dtbench
