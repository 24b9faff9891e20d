// A sweep's part of the report from a hand-built results.json: short labels, workloads kept apart
// with the comparison against the baseline in each, and a sweep found only when every run given
// is one of its repetitions.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "launch/report/sweep_section.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json configuration(const std::string& workload, const std::string& transport, double run_s_median) {
  const std::string id = "workload=" + workload + ",transport=" + transport;
  return {{"id", id}, {"values", {{"workload", workload}, {"transport", transport}}}, {"workers", 3},
          {"transport", transport}, {"missing", nullptr}, {"measured", 2}, {"complete", 2},
          {"stats", {{"run_s", {{"n", 2}, {"median", run_s_median}, {"min", run_s_median - 1}, {"max", run_s_median + 1}}},
                     {"images_per_s", {{"n", 2}, {"median", 100.0}, {"min", 90.0}, {"max", 110.0}}}}},
          {"runs", json::array({{{"repetition", 1}, {"warmup", true}, {"status", "complete"}, {"dir", "x/" + id + "/rep-0"}},
                                {{"repetition", 2}, {"warmup", false}, {"status", "complete"}, {"dir", "x/" + id + "/rep-1"}},
                                {{"repetition", 3}, {"warmup", false}, {"status", "failed"}, {"dir", "x/" + id + "/rep-2"}}})}};
}

json results() {
  json r = {{"sweep", "study"}, {"repetitions", 2}};
  r["configurations"] = {configuration("lenet5", "ring", 10), configuration("lenet5", "ps-async", 5),
                         configuration("resnet18", "ring", 100), configuration("resnet18", "ps-async", 150)};
  r["comparisons"] = {{{"configuration", "workload=lenet5,transport=ps-async"}, {"baseline", "workload=lenet5,transport=ring"},
                       {"metric", "run_s"}, {"ratio", 0.5}, {"test", "mann-whitney"}, {"p_value", 0.333}, {"significant", false}},
                      {{"configuration", "workload=resnet18,transport=ps-async"}, {"baseline", "workload=resnet18,transport=ring"},
                       {"metric", "run_s"}, {"ratio", 1.5}, {"test", "mann-whitney"}, {"p_value", 0.01}, {"significant", true}}};
  return r;
}

TEST(SweepSection, ShortLabels) {
  EXPECT_EQ(short_configuration_label({{"transport", "ring"}, {"link", "1gbit"}}, "ring", 3), "ring x3 @1gbit");
  EXPECT_EQ(short_configuration_label({{"straggler.delay_ms", "20"}, {"transport", "mpi"}}, "mpi", 2),
            "mpi x2 @delay_ms=20");
  EXPECT_EQ(short_configuration_label({{"workload", "resnet18-cifar10"}, {"workers", "4"}}, "ring", 4), "ring x4");
  EXPECT_EQ(short_configuration_label({{"configuration", "ring"}, {"network", "3-hosts"}}, "ring", 3), "ring x3 @3-hosts");
  EXPECT_EQ(short_configuration_label({{"configuration", "pytorch-ddp"}}, "ddp", 3, "pytorch"), "pytorch ddp x3");
}

// Configurations on different networks are judged apart, as different workloads are: a user picks
// a transport for the cluster they have.
TEST(SweepSection, EachNetworkIsJudgedApart) {
  json r = {{"sweep", "engines-cluster"}, {"repetitions", 2}};
  for (const std::string network : {"1gbit", "10gbit"}) {
    for (const std::string transport : {"ring", "ddp"}) {
      json c = configuration("lenet5", transport, transport == "ring" ? 10 : 20);
      c["id"] = "network=" + network + "," + c["id"].get<std::string>();
      c["values"] = {{"network", network}, {"workload", "lenet5"}, {"configuration", transport}};
      r["configurations"].push_back(c);
    }
  }
  const SweepView view = sweep_view(r, "/s");
  ASSERT_EQ(view.configurations.size(), 4u);
  EXPECT_EQ(view.configurations[0].workload, "lenet5, 1gbit");
  EXPECT_EQ(view.configurations[3].workload, "lenet5, 10gbit");
  EXPECT_EQ(view.configurations[3].label, "ddp x3 @10gbit");
  EXPECT_EQ(sweep_result_tables(view).size(), 2u);
  EXPECT_EQ(sweep_charts(view).size(), 2u);
}

TEST(SweepSection, MeasuredRunsOnlyUnderTheSweepDirectory) {
  const SweepView view = sweep_view(results(), "/s");
  ASSERT_EQ(view.configurations.size(), 4u);
  const auto& first = view.configurations.front();
  EXPECT_EQ(first.label, "ring x3");
  EXPECT_EQ(first.workload, "lenet5");
  ASSERT_EQ(first.measured_runs.size(), 1u);  // not the warm-up, not the failed run
  EXPECT_EQ(first.measured_runs.front(), fs::path("/s/workload=lenet5,transport=ring/rep-1"));
  EXPECT_EQ(view.baseline_value, "ring x3");
}

TEST(SweepSection, OneTablePerWorkloadWithItsComparison) {
  const auto tables = sweep_result_tables(sweep_view(results(), "/s"));
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_NE(tables[0].title.find("lenet5"), std::string::npos);
  ASSERT_EQ(tables[0].rows.size(), 2u);
  EXPECT_EQ(tables[0].rows[0][5], "baseline");
  EXPECT_EQ(tables[0].rows[1][0], "ps-async x3");
  EXPECT_EQ(tables[0].rows[1][2], "5.00 [4.00 – 6.00]");
  EXPECT_EQ(tables[0].rows[1][5], "0.50x");
  EXPECT_EQ(tables[0].rows[1][7], "no");
  EXPECT_EQ(tables[1].rows[1][5], "1.50x");
  EXPECT_EQ(tables[1].rows[1][7], "yes");
  EXPECT_EQ(sweep_charts(sweep_view(results(), "/s")).size(), 2u);  // each workload its own axis
}

TEST(SweepSection, FoundOnlyWhenEveryRunIsARepetition) {
  const fs::path root = fs::temp_directory_path() / ("dtbench-sweep-section-" + std::to_string(::getpid()));
  const fs::path rep = root / "workload=lenet5,transport=ring" / "rep-1";
  fs::create_directories(rep);
  std::ofstream(rep / "run.json") << "{}";
  const fs::path loose = root / "loose";
  fs::create_directories(loose);
  EXPECT_FALSE(find_sweep({rep}).has_value());  // no results.json yet
  std::ofstream(root / "results.json") << results().dump();
  const auto found = find_sweep({rep});
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->name, "study");
  EXPECT_FALSE(find_sweep({rep, loose}).has_value());
  fs::remove_all(root);
}

}  // namespace
}  // namespace dtbench
