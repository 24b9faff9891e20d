#pragma once
// A sweep's report: when the runs given to `dtbench report` are repetitions of a sweep (their
// folders sit in a sweep directory beside its results.json), the page shows what results.json
// holds — medians, spreads and significance against the configured baseline, one table and chart
// per workload with its own axis — and the verdict weighs every measured repetition, not only the
// representative runs. Reads results.json as JSON; never includes launch/sweep.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/report/table.h"

namespace dtbench {

struct SweepConfigurationView {
  std::string id;         // the configuration's folder name
  std::string label;      // short: "ring x3 @1gbit"
  // What it is judged among: the values of its workload axes, then of its network axes
  // ("resnet18-cifar10", "lenet5, 3-hosts-1gbit"); "" for one workload on one network.
  std::string workload;
  std::vector<std::filesystem::path> measured_runs;  // complete, not warm-up
  nlohmann::json stats;   // results.json's stats: metric -> {n, median, min, max}
  int64_t measured = 0, complete = 0;
};

struct SweepView {
  std::filesystem::path dir;
  std::string name, baseline_axis, baseline_value, metric, test;
  int64_t repetitions = 0;
  std::vector<SweepConfigurationView> configurations;
  nlohmann::json comparisons;  // results.json's
};

// The sweep the run directories came from, when all of them did and its results.json is there.
std::optional<SweepView> find_sweep(const std::vector<std::filesystem::path>& run_dirs);
// From results.json (at `dir`), for tests.
SweepView sweep_view(const nlohmann::json& results, const std::filesystem::path& dir);

// A short label from a configuration's axis values: engine (unless dtbench's), transport and
// workers, then every other axis's value after "@" ("ring x3 @1gbit", "pytorch ddp x3");
// workload axes (workload, model, dataset.*) are left to the grouping, and a value that repeats
// the label's own words is left out. `values`: axis -> value, in axis order.
std::string short_configuration_label(const std::vector<std::pair<std::string, std::string>>& values,
                                      const std::string& transport, int64_t workers,
                                      const std::string& engine = "dtbench");
bool is_workload_axis(const std::string& axis);
// `network`, `link`: the cluster a user has, not a choice among transports — its configurations are
// judged (tables, charts, the verdict) apart from another network's, as another workload's are.
bool is_network_axis(const std::string& axis);

// Per workload: median [min - max] of the run time, throughput and accuracy, and the comparison
// with the baseline (ratio, p) from results.json.
std::vector<ReportTable> sweep_result_tables(const SweepView& sweep);
// Per workload a bar chart of median images/s, each on its own axis.
std::vector<std::string> sweep_charts(const SweepView& sweep);

}  // namespace dtbench
