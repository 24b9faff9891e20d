// The comparison tables on runs built by hand, with known numbers: ratios are run over baseline,
// in the direction the note states, and the throughput compared is the whole run's.
#include <gtest/gtest.h>

#include <algorithm>

#include "launch/report/run_record.h"
#include "launch/report/settings.h"
#include "launch/report/tables.h"

namespace dtbench {
namespace {

// One epoch of `steps` steps of `step_ms` each (all of it forward), at `images_per_second`.
RunRecord run_of(const std::string& name, double step_ms, double images_per_second, int world) {
  RunRecord run;
  run.name = name;
  run.status = "complete";
  run.transport = "ring";
  run.world = world;
  run.images_per_second = images_per_second;
  EpochRecord epoch;
  epoch.epoch = 1;
  epoch.steps = 10;
  epoch.phases[1].sum_s = 10 * step_ms / 1e3;           // forward
  epoch.phases[kStepIndex].sum_s = 10 * step_ms / 1e3;  // step
  epoch.train_seconds = epoch.wall_seconds = 10 * step_ms / 1e3;
  epoch.test_accuracy = 0.9;
  run.epochs = {epoch};
  return run;
}

// The table whose title starts with `start`, or null.
const ReportTable* table_titled(const std::vector<ReportTable>& tables, const std::string& start) {
  const auto it = std::find_if(tables.begin(), tables.end(),
                               [&](const ReportTable& t) { return t.title.rfind(start, 0) == 0; });
  return it == tables.end() ? nullptr : &*it;
}

std::string cell(const ReportTable& table, size_t row, const std::string& column) {
  const auto it = std::find(table.header.begin(), table.header.end(), column);
  EXPECT_NE(it, table.header.end()) << "no column " << column;
  return table.rows.at(row).at(static_cast<size_t>(it - table.header.begin()));
}

// The "Comparison" table of `runs` against the run at `baseline`; an empty table if there is none.
ReportTable comparison_against(const std::vector<RunRecord>& runs, size_t baseline) {
  const auto tables = comparison_tables(runs, ReportSettings{.baseline = baseline});
  const ReportTable* found = table_titled(tables, "Comparison");
  EXPECT_NE(found, nullptr) << "no Comparison table";
  return found != nullptr ? *found : ReportTable{};
}

TEST(ReportTables, ComparisonRatiosAreRunOverBaseline) {
  // The second run takes half as long per step on four workers, with four times the throughput.
  const std::vector<RunRecord> runs = {run_of("one", 10.0, 1000.0, 1), run_of("four", 5.0, 4000.0, 4)};
  const ReportTable comparison = comparison_against(runs, 0);
  ASSERT_EQ(comparison.rows.size(), 2u);
  EXPECT_EQ(cell(comparison, 0, "step ratio"), "1.00x");
  EXPECT_EQ(cell(comparison, 1, "step ms"), "5.000");
  EXPECT_EQ(cell(comparison, 1, "step ratio"), "0.50x");
  EXPECT_EQ(cell(comparison, 1, "images/s (all workers)"), "4000");
  EXPECT_EQ(cell(comparison, 1, "images/s ratio"), "4.00x");

  // Against the second run instead, the ratios invert.
  const ReportTable inverted = comparison_against(runs, 1);
  ASSERT_EQ(inverted.rows.size(), 2u);
  EXPECT_EQ(cell(inverted, 0, "step ratio"), "2.00x");
  EXPECT_EQ(cell(inverted, 0, "images/s ratio"), "0.25x");
}

// The rows of a table whose first cell starts with `label`.
size_t rows_labelled(const ReportTable& table, const std::string& label) {
  return static_cast<size_t>(std::count_if(table.rows.begin(), table.rows.end(), [&](const auto& row) {
    return !row.empty() && row[0].rfind(label, 0) == 0;
  }));
}

TEST(ReportTables, AModelOnADeviceShowsItsStagingAsPartsOfComm) {
  RunRecord gpu = run_of("gpu", 10.0, 1000.0, 2);
  gpu.epochs[0].comm.comm_s = gpu.epochs[0].comm.comm_total_s = 0.05;  // 10 steps: 5 ms each
  gpu.epochs[0].comm.d2h_s = 0.02;
  gpu.epochs[0].comm.h2d_s = 0.01;
  const auto tables = single_run_tables(gpu, ReportSettings{});
  const ReportTable* comm = table_titled(tables, "Communication");
  ASSERT_NE(comm, nullptr);
  ASSERT_EQ(rows_labelled(*comm, "of which d2h ms"), 1u);
  ASSERT_EQ(rows_labelled(*comm, "of which h2d ms"), 1u);
  for (const auto& row : comm->rows) {
    if (row[0].rfind("of which d2h", 0) == 0) {
      EXPECT_EQ(row[1], "2.000");
    }
    if (row[0].rfind("of which h2d", 0) == 0) {
      EXPECT_EQ(row[1], "1.000");
    }
  }

  // On the CPU nothing is staged, and the table says nothing of it.
  const RunRecord cpu = run_of("cpu", 10.0, 1000.0, 2);
  const auto cpu_tables = single_run_tables(cpu, ReportSettings{});
  const ReportTable* cpu_comm = table_titled(cpu_tables, "Communication");
  ASSERT_NE(cpu_comm, nullptr);
  EXPECT_EQ(rows_labelled(*cpu_comm, "of which"), 0u);
}

}  // namespace
}  // namespace dtbench
