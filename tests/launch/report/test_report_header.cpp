// The provenance header names the link when the runs were on an emulated cluster (report.json's
// network.cluster), and says it is not recorded otherwise; it names the device and the precision.
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

std::string header_line(const std::vector<RunRecord>& runs, const std::string& name) {
  for (const auto& [key, value] : summarize_runs(runs, {}).header) {
    if (key == name) return value;
  }
  return "";
}

// report.json's provenance.device and provenance.precision become the header's Device and
// Precision; a report from before them shows neither.
TEST(ReportHeader, NamesTheDeviceAndThePrecision) {
  const nlohmann::json gpu = {{"name", "cuda:0 (NVIDIA H100 80GB HBM3, 79 GiB)"}, {"gpu", "NVIDIA H100 80GB HBM3"},
                              {"memory_bytes", int64_t{85'899'345'920}}, {"driver", "580.159.04"},
                              {"cuda_runtime", "13.0"}, {"cudnn", "9.10.2"}};
  RunRecord run;
  run.name = "r";
  run.context = run_context({{"provenance", {{"hostname", "h"}, {"device", gpu}, {"precision", "tf32"}}}});
  EXPECT_EQ(header_line({run}, "Device"), "NVIDIA H100 80GB HBM3, 80 GiB, driver 580.159.04, CUDA runtime 13.0, cuDNN 9.10.2");
  EXPECT_EQ(header_line({run}, "Precision"), "tf32");
  run.context = run_context({{"provenance", {{"device", {{"name", "cpu"}}}, {"precision", "fp32"}}}});
  EXPECT_EQ(header_line({run}, "Device"), "cpu");
  EXPECT_EQ(header_line({run}, "Precision"), "fp32");
  run.context = run_context({{"provenance", {{"hostname", "h"}}}});
  EXPECT_EQ(header_line({run}, "Device"), "");
  EXPECT_EQ(header_line({run}, "Precision"), "");
}

}  // namespace
}  // namespace dtbench
