#pragma once
// What the report tests read back from the files `dtbench report` writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "launch/report/charts.h"
#include "launch/report/run_record.h"
#include "support/cli_helpers.h"

namespace dtbench::testing {

// Resource curves are drawn from 3 samples a worker (one a second): a short run may have none.
inline bool resource_curves_drawn(const RunRecord& run) {
  return std::any_of(run.resources.begin(), run.resources.end(),
                     [](const ResourceRecord& r) { return r.seconds.size() >= kFewestResourceSamples; });
}

// The columns of phases.csv as docs/reports.md documents them: the `names` in the first cell of each
// row of the table after "`phases.csv` has one row per", in order, joined by commas.
inline std::string documented_phases_csv_columns() {
  const auto page = std::filesystem::path(DTBENCH_CONFIGS_DIR).parent_path() / "docs" / "reports.md";
  const std::string doc = read_text(page);
  std::string columns;
  const size_t section = doc.find("`phases.csv` has one row per");
  if (section == std::string::npos) return "(docs/reports.md documents no phases.csv columns)";
  bool in_table = false;
  for (const std::string& line : split(doc.substr(section), '\n')) {
    if (in_table && line.empty()) break;
    if (!line.starts_with("| `")) continue;
    in_table = true;
    const std::string first_cell = line.substr(1, line.find('|', 1) - 1);
    for (size_t open = first_cell.find('`'); open != std::string::npos; open = first_cell.find('`', open + 1)) {
      const size_t close = first_cell.find('`', open + 1);
      if (!columns.empty()) columns += ',';
      columns += first_cell.substr(open + 1, close - open - 1);
      open = close;
    }
  }
  return columns;
}

// One run x epoch x worker of phases.csv: the step's mean and the sum of its six phases' means.
struct StepRows {
  double step_ms = 0.0;
  double phases_ms = 0.0;
  int phases = 0;
};

// phases.csv by "run/epoch/worker"; a failed expectation when the header or a row's width is wrong.
inline std::map<std::string, StepRows> phases_csv_steps(const std::string& csv) {
  std::map<std::string, StepRows> steps;
  const auto lines = split(csv, '\n');
  EXPECT_FALSE(lines.empty());
  if (lines.empty()) return steps;
  EXPECT_EQ(lines[0], documented_phases_csv_columns());
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto cells = split(lines[i], ',');
    EXPECT_EQ(cells.size(), 10u) << lines[i];
    if (cells.size() != 10) continue;
    StepRows& rows = steps[cells[0] + "/" + cells[3] + "/" + cells[4]];
    const double mean_ms = std::stod(cells[6]);
    if (cells[5] == "step") {
      rows.step_ms = mean_ms;
    } else {
      rows.phases_ms += mean_ms;
      ++rows.phases;
    }
  }
  return steps;
}

// The phases are measured so that they sum to the step (other = step - the rest): what is left
// is rounding in the printed decimals, far below this share of the step.
inline constexpr double kPhaseSumTolerance = 1e-6;

inline void expect_phases_sum_to_steps(const std::map<std::string, StepRows>& steps) {
  for (const auto& [key, rows] : steps) {
    EXPECT_EQ(rows.phases, 6) << key;
    EXPECT_GT(rows.step_ms, 0.0) << key;
    EXPECT_NEAR(rows.phases_ms, rows.step_ms, kPhaseSumTolerance * rows.step_ms) << key;
  }
}

}  // namespace dtbench::testing
