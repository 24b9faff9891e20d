#pragma once
// The verdict at the top of a report: which configuration trains fastest and by how much, with
// how sure we can be. Configurations (runs sharing a label are repetitions of one) are ranked by
// their median time to the highest target accuracy that every one of them reached — or, where no
// target was reached by all, by their median throughput — and the best is compared with each of
// the others by a two-sided Mann-Whitney test over their repetitions. Beside the ranking: speed-up
// and scaling efficiency over a one-worker configuration, the share of a step spent waiting for
// communication, and what an injected straggler costs each transport.
//
// It works on VerdictRun, a few figures per run taken from the report's own numbers
// (verdict_run), so the verdict follows whatever those figures are computed to be.
#include <string>
#include <vector>

#include "launch/report/run_record.h"
#include "launch/report/statistics.h"

namespace dtbench {

// Repetitions a comparison needs before a difference can be told from noise.
inline constexpr int64_t kEnoughRepetitions = 5;
inline constexpr double kSignificance = 0.05;

struct VerdictRun {
  std::string label{};    // the configuration: "ring x3", "ps-async x3 +20ms straggler"
  std::string transport{};
  int world = 1;
  double straggler_delay_ms = 0.0;  // 0: no injected straggler
  // Seconds to each target accuracy (VerdictInput::targets order); +infinity when the run did not
  // reach it or diverged.
  std::vector<double> seconds_to_target{};
  double images_per_second = 0.0;  // all workers together
  double comm_share = 0.0;         // exposed communication over the step, all epochs
  bool diverged = false;
};

// The label a run is grouped under: transport and workers, and an injected straggler.
std::string configuration_label(const RunRecord& run);
// The verdict's figures of one run, against `targets` (fractions, ascending).
VerdictRun verdict_run(const RunRecord& run, const std::vector<double>& targets, std::string label = "");

struct ConfigurationVerdict {
  std::string label{}, transport{};
  int world = 1;
  double straggler_delay_ms = 0.0;
  std::vector<double> ranked_values{};  // per run: seconds to the target, or images/s
  Spread ranked{};                      // their spread
  Spread images_per_second{}, comm_share{};
  int64_t diverged = 0;
};

struct Verdict {
  bool by_time = false;          // ranked by time to `target`, else by throughput
  double target = 0.0;           // the accuracy (fraction) when by_time
  std::vector<ConfigurationVerdict> ranking;  // best first
  std::vector<std::string> findings;          // plain sentences, the answer first
  std::vector<std::string> cautions;          // about the evidence: too few repetitions, diverged runs
};

Verdict reach_verdict(const std::vector<VerdictRun>& runs, const std::vector<double>& targets);

// "ring x3 is 1.40x faster than ps-sync x3 (5 vs 5 runs, p = 0.008)", or the same with "not
// significant" / "too few runs to test". `factor` >= 1 is how much faster `best` is.
std::string comparison_sentence(const ConfigurationVerdict& best, const ConfigurationVerdict& other, double factor,
                                const RankTest* test);

}  // namespace dtbench
