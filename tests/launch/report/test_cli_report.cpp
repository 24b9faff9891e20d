// `dtbench report` end to end: two short training runs on synthetic data compared, the files it
// writes (report.md, phases.csv, report.html) checked, and the broken and incomplete runs it meets.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/report/csv.h"
#include "support/cli_helpers.h"
#include "support/report_checks.h"
#include "support/xml_check.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;

using testing::dtbench;
using testing::Outcome;
using testing::read_text;
using testing::xml_error;

class CliReport : public testing::TempDirTest {
 protected:
  // A two-epoch mlp run with `batch`; returns its run directory.
  fs::path train(const fs::path& data, int batch, const std::string& output) {
    const fs::path runs = root_ / output;
    const Outcome r = dtbench("train --set model=mlp --set name=" + output + " --set dataset.path=" + data.string() +
                              " --set output=" + runs.string() + " --set epochs=2 --set batch=" +
                              std::to_string(batch) + " --set threads=1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const fs::path dir = testing::only_child(runs);
    EXPECT_FALSE(dir.empty());
    return dir;
  }
};

TEST_F(CliReport, ComparesTwoRunsAndWritesMarkdownCsvAndHtml) {
  const fs::path data = synth("idx", 512, 128);
  const fs::path run1 = train(data, 32, "first");
  const fs::path run2 = train(data, 64, "second");
  // The second as a transport that is fast but less accurate: it never reaches 50%.
  auto less_accurate = testing::read_json(run2 / "report.json");
  less_accurate["epochs"][0]["test_accuracy"] = 0.30;
  less_accurate["epochs"][1]["test_accuracy"] = 0.45;
  std::ofstream(run2 / "report.json") << less_accurate.dump(2);
  const fs::path out = root_ / "report";
  const Outcome r = dtbench("report " + run1.string() + " " + run2.string() + " --out " + out.string() +
                            " --log-scale --target-accuracy 50,5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("step ratio"), std::string::npos) << r.output;

  const std::string md = read_text(out / "report.md");
  EXPECT_NE(md.find(run1.filename().string()), std::string::npos) << md;
  EXPECT_NE(md.find(run2.filename().string()), std::string::npos) << md;
  EXPECT_NE(md.find("step ratio"), std::string::npos) << md;
  EXPECT_NE(md.find("1.00x"), std::string::npos) << md;  // the baseline against itself
  // Speed beside accuracy, at the chosen targets (in ascending order).
  EXPECT_NE(md.find("### Time and accuracy"), std::string::npos) << md;
  EXPECT_NE(md.find("| to 5.0% | to 50.0% |"), std::string::npos) << md;
  EXPECT_NE(md.find(" | 45.0% | 45.0% | "), std::string::npos) << md;
  EXPECT_NE(md.find("x) | not reached |\n"), std::string::npos) << md;  // the second run at 50%
  EXPECT_NE(md.find("### Communication per step"), std::string::npos) << md;
  EXPECT_NE(md.find("### Resources per worker"), std::string::npos) << md;

  // docs/reports.md documents the columns the code writes, and the file has them (phases_csv_steps).
  EXPECT_EQ(testing::documented_phases_csv_columns(), kPhasesCsvHeader);
  const auto steps = testing::phases_csv_steps(read_text(out / "phases.csv"));
  EXPECT_EQ(steps.size(), 4u);  // 2 runs x 2 epochs, worker "all"
  testing::expect_phases_sum_to_steps(steps);

  const std::string html = read_text(out / "report.html");
  EXPECT_NE(html.find("http://www.w3.org/1999/xhtml\" lang"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos) << "nothing fetched";
  EXPECT_EQ(html.find(" href="), std::string::npos) << "nothing fetched";
  for (const std::string chart : {"Phases per step, steady epochs", "Total wall time per run", "s (log scale)",
                                  "Accuracy per epoch", "Loss per epoch"}) {
    EXPECT_NE(html.find(">" + chart), std::string::npos) << chart;
  }
  // Resource curves only for a run with 3 samples a worker.
  const bool drawn = testing::resource_curves_drawn(load_run(run1)) || testing::resource_curves_drawn(load_run(run2));
  EXPECT_EQ(html.find(">Process CPU, ") != std::string::npos, drawn);
  EXPECT_EQ(html.find(">Resident memory, ") != std::string::npos, drawn);
  EXPECT_EQ(xml_error(html), "");
  if (std::system("which xmllint > /dev/null 2>&1") == 0) {
    const Outcome lint = testing::shell("xmllint --noout " + (out / "report.html").string());
    EXPECT_EQ(lint.exit_code, 0) << lint.output;
  }
}

TEST_F(CliReport, ATargetAccuracyOutsideZeroToHundredIsAnInputError) {
  const Outcome r = dtbench("report " + (root_ / "any-run").string() + " --target-accuracy 50,120");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--target-accuracy 120"), std::string::npos) << r.output;
}

TEST_F(CliReport, SingleRunWritesIntoItsDirectoryAndMarksAFailedRunIncomplete) {
  const fs::path data = synth("idx", 256, 64);
  const fs::path run = train(data, 32, "one");
  // A run that failed midway: its report as written on failure.
  const fs::path failed = root_ / "failed-run";
  fs::create_directories(failed);
  auto report = testing::read_json(run / "report.json");
  report["status"] = "failed";
  report["complete"] = false;
  report["error"] = "peer <rank 1> went away";
  std::ofstream(failed / "report.json") << report.dump(2);

  const Outcome r = dtbench("report " + failed.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("INCOMPLETE"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("peer <rank 1> went away"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Time to accuracy"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Time to accuracy per epoch (DAWNBench style)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("epoch 1 trained in"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(failed / "report.md"));
  EXPECT_TRUE(fs::exists(failed / "phases.csv"));
  const std::string html = read_text(failed / "report.html");
  EXPECT_NE(html.find("peer &lt;rank 1&gt; went away"), std::string::npos);
  EXPECT_EQ(xml_error(html), "");
}

TEST_F(CliReport, ADirectoryWithoutAReportIsAnInputErrorNamingThePath) {
  const fs::path empty = root_ / "not-a-run";
  fs::create_directories(empty);
  const Outcome missing = dtbench("report " + empty.string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find((empty / "report.json").string()), std::string::npos) << missing.output;

  // Each bad report.json: an input error (exit 2) that says what is wrong.
  const struct {
    std::string content, expected;
  } cases[] = {
      {"{\"status\": \"complete\", ", "not valid JSON"},
      {"{\"status\": \"complete\"}", "'epochs'"},
      {"[]", "not a JSON object"},
      {"{\"status\": \"complete\", \"epochs\": [{\"epoch\": \"one\"}]}", "is not a number"},
      {"{\"status\": \"failed\", \"error\": 5, \"epochs\": []}", (empty / "report.json").string()},  // a wrong type
  };
  for (const auto& c : cases) {
    std::ofstream(empty / "report.json") << c.content;
    const Outcome r = dtbench("report " + empty.string());
    EXPECT_EQ(r.exit_code, 2) << c.content << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.content << "\n" << r.output;
  }
}

}  // namespace
}  // namespace dtbench
