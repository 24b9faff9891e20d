// The provenance header names the link when the runs were on an emulated cluster (report.json's
// network.cluster), and says it is not recorded otherwise.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "launch/report/run_context.h"
#include "launch/report/verdict_section.h"

namespace dtbench {
namespace {

std::string hosts_line(const std::vector<RunRecord>& runs) {
  for (const auto& [key, value] : summarize_runs(runs, {}).header) {
    if (key == "Hosts") return value;
  }
  return "";
}

TEST(ReportHeader, NamesAnEmulatedClustersLink) {
  nlohmann::json report = {{"provenance", {{"hostname", "c1-h0"}}}};
  report["network"]["cluster"] = {{"name", "c1"}, {"link", "1gbit"}};
  RunRecord run;
  run.name = "r";
  run.transport = "ring";
  run.world = 2;
  run.context = run_context(report);
  EXPECT_EQ(run.context.link, "1gbit");
  run.context.hosts = {"c1-h0", "c1-h1"};
  EXPECT_NE(hosts_line({run}).find("2 hosts (c1-h0, c1-h1); emulated cluster, link 1gbit each way"), std::string::npos)
      << hosts_line({run});
  run.context.link.clear();
  EXPECT_NE(hosts_line({run}).find("the link between them is not recorded"), std::string::npos) << hosts_line({run});
}

}  // namespace
}  // namespace dtbench
