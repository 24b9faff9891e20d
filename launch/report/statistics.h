#pragma once
// The statistics of repeated runs: the spread of a measurement (median, min, max) and two-sided
// rank tests of whether two configurations differ — Mann-Whitney U for independent runs, Wilcoxon
// signed-rank for runs paired by repetition — as the framework studies reported them.
//
// Both tests use the exact null distribution when there are no ties (small samples are the usual
// case: a sweep has ~5 repetitions), else the normal approximation with tie and continuity
// corrections. Note what exactness implies: with 5 pairs the smallest two-sided Wilcoxon p-value
// is 2/32 = 0.0625, so a 5-repetition paired comparison can never reach p < 0.05; Mann-Whitney
// with 5 + 5 runs can (2/252 = 0.0079).
#include <cstdint>
#include <string>
#include <vector>

namespace dtbench {

struct Spread {
  int64_t count = 0;
  double median = 0.0;  // the mean of the middle two for an even count
  double min = 0.0;
  double max = 0.0;
};

// NaN median/min/max for no values.
Spread spread_of(std::vector<double> values);

struct RankTest {
  std::string name;          // "mann-whitney" | "wilcoxon"
  double statistic = 0.0;    // U of the first sample; W+ (sum of the positive differences' ranks)
  double p_value = 1.0;      // two-sided
  bool exact = false;        // from the exact null distribution, not the normal approximation
  int64_t pairs_used = 0;    // wilcoxon: pairs with a non-zero difference
};

// Independent samples (any sizes >= 1). InputError if either is empty.
RankTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);
// Paired samples a[i] against b[i]; zero differences are dropped (Wilcoxon's own rule). InputError
// if the sizes differ. All differences zero: p = 1.
RankTest wilcoxon_signed_rank(const std::vector<double>& a, const std::vector<double>& b);

// Ranks from 1 with ties given the mean of the ranks they span ("mid-ranks"); `tie_term` receives
// the sum over tie groups of t^3 - t, which the variance corrections need.
std::vector<double> mid_ranks(const std::vector<double>& values, double* tie_term = nullptr);

}  // namespace dtbench
