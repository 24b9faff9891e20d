#include "launch/report/verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "comm/transport_catalogue.h"
#include "launch/report/format.h"
#include "launch/report/run_warnings.h"
#include "launch/report/tables.h"

namespace dtbench {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct Group {
  ConfigurationVerdict figures{};
  std::vector<const VerdictRun*> runs{};
};

std::vector<Group> group_by_label(const std::vector<VerdictRun>& runs) {
  std::vector<Group> groups;
  std::map<std::string, size_t> index;
  for (const auto& run : runs) {
    auto [it, added] = index.emplace(run.label, groups.size());
    if (added) {
      groups.push_back({.figures = {.label = run.label, .transport = run.transport, .world = run.world,
                                    .straggler_delay_ms = run.straggler_delay_ms}});
    }
    Group& g = groups[it->second];
    g.runs.push_back(&run);
    g.figures.diverged += run.diverged;
  }
  for (Group& g : groups) {
    std::vector<double> throughput, comm;
    for (const VerdictRun* run : g.runs) {
      throughput.push_back(run->images_per_second);
      comm.push_back(run->comm_share);
    }
    g.figures.images_per_second = spread_of(throughput);
    g.figures.comm_share = spread_of(comm);
  }
  return groups;
}

// The configurations that compete: several workers rather than one (the one-worker run is the
// yardstick of scaling), and without an injected straggler (those measure sensitivity) — unless
// nothing else is there.
std::vector<Group> contenders(const std::vector<Group>& groups) {
  std::vector<Group> chosen = groups;
  auto drop = [&chosen](auto&& predicate) {
    std::vector<Group> kept;
    std::copy_if(chosen.begin(), chosen.end(), std::back_inserter(kept), [&](const Group& g) { return !predicate(g); });
    if (!kept.empty()) chosen = std::move(kept);
  };
  drop([](const Group& g) { return g.figures.world == 1; });
  drop([](const Group& g) { return g.figures.straggler_delay_ms > 0; });
  return chosen;
}

// The highest target whose median time every contender has (reached by at least half its runs).
std::optional<size_t> common_target(const std::vector<Group>& groups, size_t targets) {
  for (size_t t = targets; t-- > 0;) {
    const bool all = std::all_of(groups.begin(), groups.end(), [t](const Group& g) {
      std::vector<double> times;
      for (const VerdictRun* run : g.runs) times.push_back(t < run->seconds_to_target.size() ? run->seconds_to_target[t] : kInfinity);
      return std::isfinite(spread_of(times).median);
    });
    if (all) return t;
  }
  return std::nullopt;
}

std::string ranked_text(const Verdict& v, double value) {
  if (std::isinf(value)) return "not reached";
  return v.by_time ? seconds_text(value) + " s" : fmt::format("{:.0f} images/s", value);
}

std::string spread_text(const Verdict& v, const ConfigurationVerdict& c) {
  const Spread& s = c.ranked;
  if (s.count < 2) return fmt::format("{} run", s.count);
  const auto missed = std::count_if(c.ranked_values.begin(), c.ranked_values.end(), [](double x) { return std::isinf(x); });
  if (missed > 0) {  // the slowest "never": say how many, not "to not reached"
    return fmt::format("median of {} runs, the fastest {}; {} did not reach it", s.count, ranked_text(v, s.min), missed);
  }
  return fmt::format("median of {} runs, {} to {}", s.count, ranked_text(v, s.min), ranked_text(v, s.max));
}

void add_ranking_findings(Verdict& v) {
  const ConfigurationVerdict& best = v.ranking.front();
  if (v.ranking.size() == 1) {  // nothing to rank against: what it achieved
    v.findings.push_back(v.by_time ? fmt::format("{} reaches {} test accuracy in {} ({}).", best.label,
                                                 percent_text(v.target), ranked_text(v, best.ranked.median),
                                                 spread_text(v, best))
                                   : fmt::format("{} trains at {} ({}); it reached none of the target accuracies.",
                                                 best.label, ranked_text(v, best.ranked.median),
                                                 spread_text(v, best)));
    return;
  }
  const std::string what = v.by_time ? fmt::format("reaches {} test accuracy first", percent_text(v.target))
                                     : "has the highest throughput (no target accuracy was reached by all)";
  v.findings.push_back(fmt::format("{} {}: {} ({}).", best.label, what, ranked_text(v, best.ranked.median),
                                   spread_text(v, best)));
  for (size_t i = 1; i < v.ranking.size(); ++i) {
    const ConfigurationVerdict& other = v.ranking[i];
    const double factor = v.by_time ? other.ranked.median / best.ranked.median
                                    : best.ranked.median / other.ranked.median;
    std::optional<RankTest> test;
    if (best.ranked_values.size() >= 2 && other.ranked_values.size() >= 2) {
      test = mann_whitney_u(best.ranked_values, other.ranked_values);
    }
    v.findings.push_back(comparison_sentence(best, other, factor, test ? &*test : nullptr) + ".");
  }
}

// Throughput over a yardstick: the one-worker configuration, else per transport its fewest workers.
void add_scaling_findings(Verdict& v, const std::vector<Group>& groups) {
  const Group* single = nullptr;
  for (const Group& g : groups) {
    if (g.figures.world == 1 && g.figures.straggler_delay_ms == 0 && single == nullptr) single = &g;
  }
  std::vector<std::string> parts;
  for (const Group& g : groups) {
    const ConfigurationVerdict& f = g.figures;
    if (f.world == 1 || f.straggler_delay_ms > 0) continue;
    const ConfigurationVerdict* base = single ? &single->figures : nullptr;
    for (const Group& other : groups) {
      const ConfigurationVerdict& o = other.figures;
      if (single == nullptr && o.transport == f.transport && o.straggler_delay_ms == 0 && o.world < f.world &&
          (base == nullptr || o.world < base->world)) {
        base = &o;
      }
    }
    if (base == nullptr || !(base->images_per_second.median > 0)) continue;
    const double speedup = f.images_per_second.median / base->images_per_second.median;
    parts.push_back(fmt::format("{} {:.2f}x ({} scaling efficiency{})", f.label, speedup,
                                percent_text(speedup * base->world / f.world),
                                single ? "" : " over " + base->label));
  }
  if (parts.empty()) return;
  v.findings.push_back(single ? fmt::format("Throughput over one worker ({}, {:.0f} images/s): {}.",
                                            single->figures.label, single->figures.images_per_second.median,
                                            fmt::join(parts, "; "))
                              : fmt::format("Throughput as workers are added: {}.", fmt::join(parts, "; ")));
}

void add_comm_findings(Verdict& v) {
  std::vector<std::string> parts;
  for (const auto& c : v.ranking) {
    if (!exchanges_nothing(c.transport)) parts.push_back(fmt::format("{} with {}", percent_text(c.comm_share.median), c.label));
  }
  if (!parts.empty()) {
    v.findings.push_back(fmt::format("Share of a step spent waiting for communication: {}.", fmt::join(parts, ", ")));
  }
}

void add_straggler_findings(Verdict& v, const std::vector<Group>& groups) {
  std::vector<std::string> parts;
  for (const Group& g : groups) {
    const ConfigurationVerdict& slow = g.figures;
    if (slow.straggler_delay_ms <= 0) continue;
    for (const Group& other : groups) {
      const ConfigurationVerdict& even = other.figures;
      if (even.transport != slow.transport || even.world != slow.world || even.straggler_delay_ms != 0) continue;
      if (!(even.images_per_second.median > 0)) continue;
      parts.push_back(fmt::format("{} keeps {} of its throughput with a {:g} ms straggler", even.label,
                                  percent_text(slow.images_per_second.median / even.images_per_second.median),
                                  slow.straggler_delay_ms));
    }
  }
  if (!parts.empty()) v.findings.push_back(fmt::format("Sensitivity to a slow worker: {}.", fmt::join(parts, "; ")));
}

void add_cautions(Verdict& v, const std::vector<Group>& groups) {
  std::vector<std::string> few;
  for (const auto& c : v.ranking) {
    if (c.ranked.count < kEnoughRepetitions) few.push_back(fmt::format("{}: {}", c.label, c.ranked.count));
  }
  if (v.ranking.size() > 1 && !few.empty()) {
    v.cautions.push_back(fmt::format("fewer than {} repetitions ({}): a difference cannot be told from run-to-run "
                                     "noise; repeat the runs (a sweep with repetitions: {})",
                                     kEnoughRepetitions, fmt::join(few, ", "), kEnoughRepetitions));
  }
  for (const Group& g : groups) {
    if (g.figures.diverged > 0) {
      v.cautions.push_back(fmt::format("{}: {} of {} run(s) diverged and are credited no time to accuracy",
                                       g.figures.label, g.figures.diverged, g.runs.size()));
    }
  }
}

}  // namespace

std::string configuration_label(const RunRecord& run) {
  // Another engine says so: "pytorch ddp x3" beside "ring x3".
  const std::string engine = run.engine == "dtbench" ? "" : run.engine + " ";
  std::string label = fmt::format("{}{} x{}", engine, run.transport, run.world);
  if (run.context.has_straggler()) label += fmt::format(" +{:g}ms straggler", run.context.straggler_delay_ms);
  return label;
}

VerdictRun verdict_run(const RunRecord& run, const std::vector<double>& targets, std::string label) {
  VerdictRun v{.label = label.empty() ? configuration_label(run) : std::move(label), .transport = run.transport,
               .world = run.world, .images_per_second = run.images_per_second, .diverged = diverged(run)};
  if (run.context.has_straggler()) v.straggler_delay_ms = run.context.straggler_delay_ms;
  for (const double target : targets) {
    const EpochRecord* reached = first_epoch_reaching(run, target);  // never for a diverged run
    v.seconds_to_target.push_back(reached ? reached->wall_seconds : kInfinity);
  }
  const auto mean = mean_phases(run.epochs, 0);
  v.comm_share = mean[kStepIndex] > 0 ? mean[3] / mean[kStepIndex] : 0.0;  // phase 3: comm
  return v;
}

Verdict reach_verdict(const std::vector<VerdictRun>& runs, const std::vector<double>& targets) {
  Verdict v;
  const std::vector<Group> groups = group_by_label(runs);
  std::vector<Group> ranked = contenders(groups);
  if (ranked.empty()) return v;
  const std::optional<size_t> target = common_target(ranked, targets.size());
  v.by_time = target.has_value();
  if (target) v.target = targets[*target];
  for (Group& g : ranked) {
    for (const VerdictRun* run : g.runs) {
      g.figures.ranked_values.push_back(target ? run->seconds_to_target[*target] : run->images_per_second);
    }
    g.figures.ranked = spread_of(g.figures.ranked_values);
    v.ranking.push_back(g.figures);
  }
  std::stable_sort(v.ranking.begin(), v.ranking.end(), [&v](const auto& a, const auto& b) {
    return v.by_time ? a.ranked.median < b.ranked.median : a.ranked.median > b.ranked.median;
  });
  add_ranking_findings(v);
  add_scaling_findings(v, groups);
  add_comm_findings(v);
  add_straggler_findings(v, groups);
  add_cautions(v, groups);
  return v;
}

std::string comparison_sentence(const ConfigurationVerdict& best, const ConfigurationVerdict& other, double factor,
                                const RankTest* test) {
  const std::string runs = fmt::format("{} vs {} run{}", best.ranked.count, other.ranked.count,
                                       other.ranked.count == 1 ? "" : "s");
  std::string evidence;
  if (test == nullptr) {
    evidence = runs + ", too few to test";
  } else if (test->p_value < kSignificance) {
    evidence = fmt::format("{}, p = {:.2g}", runs, test->p_value);
  } else {
    evidence = fmt::format("{}, p = {:.2g}: not significant", runs, test->p_value);
  }
  if (!std::isfinite(factor)) return fmt::format("{} is faster than {} ({})", best.label, other.label, evidence);
  return fmt::format("{} is {:.2f}x faster than {} ({})", best.label, factor, other.label, evidence);
}

}  // namespace dtbench
