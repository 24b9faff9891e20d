#pragma once
// Why a run's figures may mislead, said beside them in the console and the report: more busy
// threads than cores, a machine that other work kept busy, a setting that has handicapped a
// transport on such hosts, synthetic data, and a run that diverged. A diverged run is never credited a time to accuracy (first_epoch_reaching).
#include <string>
#include <vector>

#include "launch/report/run_record.h"

namespace dtbench {

struct RunWarning {
  std::string kind;  // "oversubscribed" | "time-sliced hosts" | "polling ranks" | "bucketed pushes" | "machine busy" |
                     // "synthetic data" | "diverged"
  std::string text;  // what was seen, with the numbers behind it (without the kind)
  std::string line() const { return kind + ": " + text; }
};

// Loss more than this many times epoch 1's training loss: exploding, not noise.
inline constexpr double kExplodingLossFactor = 4.0;
// Final test accuracy this far (a fraction) below the run's best: it fell apart.
inline constexpr double kAccuracyCollapse = 0.2;
// Other processes using more than this share of the cores (and at least half a core) make a
// machine busy: the run's times include waiting for them.
inline constexpr double kBusyShareOfCores = 0.25;

// Why the run counts as diverged (a non-finite or exploding loss, final accuracy far below its
// best), or "" when it does not.
std::string divergence(const RunRecord& run);
inline bool diverged(const RunRecord& run) { return !divergence(run).empty(); }

// Cores that processes other than the run's workers kept busy on its busiest host, from the
// sampled per-core load and the workers' own CPU; NaN when the run has no resource samples.
double other_busy_cores(const RunRecord& run);

std::vector<RunWarning> run_warnings(const RunRecord& run);

}  // namespace dtbench
