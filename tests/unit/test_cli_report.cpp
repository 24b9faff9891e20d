// `dtbench report` end to end: two short training runs on synthetic data compared, the files it
// writes (report.md, phases.csv, report.html) checked, and the broken and incomplete runs it meets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "unit/cli_helpers.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;

using testing::dtbench;
using testing::Outcome;

std::string read_text(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(part);
  return parts;
}

// Every element opened is closed, in order ("<x/>" closes itself); doctype and comments skipped.
// An empty string when balanced, else what went wrong.
std::string tag_balance_error(const std::string& xml) {
  std::vector<std::string> open;
  for (size_t at = xml.find('<'); at != std::string::npos; at = xml.find('<', at + 1)) {
    const size_t end = xml.find('>', at);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(at);
    const std::string tag = xml.substr(at + 1, end - at - 1);
    if (tag.empty() || tag[0] == '!' || tag[0] == '?') continue;
    const bool closing = tag[0] == '/';
    const std::string name = tag.substr(closing ? 1 : 0, tag.find_first_of(" \t\n/", closing ? 1 : 0) - (closing ? 1 : 0));
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> closes " + (open.empty() ? "nothing" : open.back());
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(name);
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

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
  const fs::path out = root_ / "report";
  const Outcome r = dtbench("report " + run1.string() + " " + run2.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("step ratio"), std::string::npos) << r.output;

  const std::string md = read_text(out / "report.md");
  EXPECT_NE(md.find(run1.filename().string()), std::string::npos) << md;
  EXPECT_NE(md.find(run2.filename().string()), std::string::npos) << md;
  EXPECT_NE(md.find("step ratio"), std::string::npos) << md;
  EXPECT_NE(md.find("1.00x"), std::string::npos) << md;  // the baseline against itself

  const auto lines = split(read_text(out / "phases.csv"), '\n');
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "run,transport,world,epoch,worker,phase,mean_ms,median_ms,p95_ms,sum_s");
  std::map<std::string, double> phase_sum, step_mean;  // by run/epoch/worker
  std::map<std::string, int> phase_rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto cells = split(lines[i], ',');
    ASSERT_EQ(cells.size(), 10u) << lines[i];
    const std::string key = cells[0] + "/" + cells[3] + "/" + cells[4];
    const double mean_ms = std::stod(cells[6]);
    if (cells[5] == "step") {
      step_mean[key] = mean_ms;
    } else {
      phase_sum[key] += mean_ms;
      ++phase_rows[key];
    }
  }
  ASSERT_EQ(step_mean.size(), 4u);  // 2 runs x 2 epochs, worker "all"
  for (const auto& [key, step] : step_mean) {
    EXPECT_EQ(phase_rows[key], 6) << key;
    EXPECT_GT(step, 0.0) << key;
    EXPECT_NEAR(phase_sum[key], step, 1e-6 * step) << key;
  }

  const std::string html = read_text(out / "report.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("http://www.w3.org/1999/xhtml\" lang") != std::string::npos, true);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(tag_balance_error(html), "");
  if (std::system("which xmllint > /dev/null 2>&1") == 0) {
    const Outcome lint = testing::shell("xmllint --noout " + (out / "report.html").string());
    EXPECT_EQ(lint.exit_code, 0) << lint.output;
  }
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
  EXPECT_TRUE(fs::exists(failed / "report.md"));
  EXPECT_TRUE(fs::exists(failed / "phases.csv"));
  const std::string html = read_text(failed / "report.html");
  EXPECT_NE(html.find("peer &lt;rank 1&gt; went away"), std::string::npos);
  EXPECT_EQ(tag_balance_error(html), "");
}

TEST_F(CliReport, ADirectoryWithoutAReportIsAnInputErrorNamingThePath) {
  const fs::path empty = root_ / "not-a-run";
  fs::create_directories(empty);
  const Outcome missing = dtbench("report " + empty.string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find((empty / "report.json").string()), std::string::npos) << missing.output;

  std::ofstream(empty / "report.json") << "{\"status\": \"complete\", ";
  const Outcome broken = dtbench("report " + empty.string());
  EXPECT_EQ(broken.exit_code, 2) << broken.output;
  EXPECT_NE(broken.output.find("not valid JSON"), std::string::npos) << broken.output;

  std::ofstream(empty / "report.json") << "{\"status\": \"complete\"}";
  const Outcome lacking = dtbench("report " + empty.string());
  EXPECT_EQ(lacking.exit_code, 2) << lacking.output;
  EXPECT_NE(lacking.output.find("'epochs'"), std::string::npos) << lacking.output;
}

}  // namespace
}  // namespace dtbench
