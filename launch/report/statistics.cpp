#include "launch/report/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/util/error.h"

namespace dtbench {

namespace {

// Exact distributions are tabulated up to this many observations per sample; beyond it the
// normal approximation is accurate to well under the precision anyone reads p to.
constexpr int64_t kExactLimit = 50;

// Two-sided p from a count table of the statistic under the null: twice the smaller tail, at most 1.
double two_sided_p(const std::vector<double>& counts, double statistic) {
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  const auto at = static_cast<size_t>(std::llround(statistic));
  double lower = 0.0, upper = 0.0;
  for (size_t u = 0; u < counts.size(); ++u) {
    if (u <= at) lower += counts[u];
    if (u >= at) upper += counts[u];
  }
  return std::min(1.0, 2.0 * std::min(lower, upper) / total);
}

// P(|Z| >= |x - mean| - 0.5) for a normal with this mean and variance (continuity-corrected).
double normal_two_sided_p(double x, double mean, double variance) {
  if (variance <= 0.0) return 1.0;
  const double z = (std::abs(x - mean) - 0.5) / std::sqrt(variance);
  return z <= 0.0 ? 1.0 : std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

// Number of ways the first sample's n1 values can sit among n1 + n2 so that U equals u, for every
// u: f(i, j, u) = f(i-1, j, u-j) + f(i, j-1, u) (the largest value is in the first sample, and
// beats all j of the second, or it is not), one layer of i at a time.
std::vector<double> mann_whitney_counts(int64_t n1, int64_t n2) {
  const size_t width = static_cast<size_t>(n1 * n2 + 1);
  std::vector<std::vector<double>> previous(n2 + 1, std::vector<double>(width, 0.0));
  for (auto& row : previous) row[0] = 1.0;  // i = 0: U is 0 in exactly one way
  for (int64_t i = 1; i <= n1; ++i) {
    std::vector<std::vector<double>> current(n2 + 1, std::vector<double>(width, 0.0));
    current[0][0] = 1.0;  // j = 0: likewise
    for (int64_t j = 1; j <= n2; ++j) {
      for (size_t u = 0; u < width; ++u) {
        current[j][u] = current[j - 1][u] + (u >= static_cast<size_t>(j) ? previous[j][u - j] : 0.0);
      }
    }
    previous = std::move(current);
  }
  return previous[n2];
}

// Number of subsets of {1..n} summing to w, for every w: W+'s distribution when every sign is a
// fair coin.
std::vector<double> signed_rank_counts(int64_t n) {
  std::vector<double> counts(static_cast<size_t>(n * (n + 1) / 2 + 1), 0.0);
  counts[0] = 1.0;
  for (int64_t rank = 1; rank <= n; ++rank) {
    for (size_t w = counts.size() - 1; w >= static_cast<size_t>(rank); --w) counts[w] += counts[w - rank];
  }
  return counts;
}

}  // namespace

Spread spread_of(std::vector<double> values) {
  Spread s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) {
    s.median = s.min = s.max = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  s.median = values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
  s.min = values.front();
  s.max = values.back();
  return s;
}

std::vector<double> mid_ranks(const std::vector<double>& values, double* tie_term) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  double ties = 0.0;
  for (size_t start = 0; start < order.size();) {
    size_t end = start + 1;
    while (end < order.size() && values[order[end]] == values[order[start]]) ++end;
    const double rank = 0.5 * static_cast<double>(start + 1 + end);  // mean of start+1 .. end
    for (size_t k = start; k < end; ++k) ranks[order[k]] = rank;
    const auto t = static_cast<double>(end - start);
    ties += t * t * t - t;
    start = end;
  }
  if (tie_term != nullptr) *tie_term = ties;
  return ranks;
}

RankTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) fail_input("Mann-Whitney U needs at least one value in each sample");
  const auto n1 = static_cast<int64_t>(a.size()), n2 = static_cast<int64_t>(b.size());
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  double ties = 0.0;
  const std::vector<double> ranks = mid_ranks(pooled, &ties);
  const double rank_sum = std::accumulate(ranks.begin(), ranks.begin() + n1, 0.0);

  RankTest test;
  test.name = "mann-whitney";
  test.statistic = rank_sum - 0.5 * static_cast<double>(n1 * (n1 + 1));
  test.exact = ties == 0.0 && n1 <= kExactLimit && n2 <= kExactLimit;
  if (test.exact) {
    test.p_value = two_sided_p(mann_whitney_counts(n1, n2), test.statistic);
  } else {
    const double n = static_cast<double>(n1 + n2);
    const double variance = static_cast<double>(n1 * n2) / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    test.p_value = normal_two_sided_p(test.statistic, 0.5 * static_cast<double>(n1 * n2), variance);
  }
  return test;
}

RankTest wilcoxon_signed_rank(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) {
    fail_input("Wilcoxon signed-rank pairs runs by repetition: {} against {} values", a.size(), b.size());
  }
  std::vector<double> differences;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) differences.push_back(a[i] - b[i]);
  }
  RankTest test;
  test.name = "wilcoxon";
  test.pairs_used = static_cast<int64_t>(differences.size());
  if (differences.empty()) return test;  // nothing differs: p = 1

  std::vector<double> magnitudes(differences.size());
  std::transform(differences.begin(), differences.end(), magnitudes.begin(), [](double d) { return std::abs(d); });
  double ties = 0.0;
  const std::vector<double> ranks = mid_ranks(magnitudes, &ties);
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (differences[i] > 0) test.statistic += ranks[i];
  }
  const int64_t n = test.pairs_used;
  test.exact = ties == 0.0 && n <= kExactLimit;
  if (test.exact) {
    test.p_value = two_sided_p(signed_rank_counts(n), test.statistic);
  } else {
    const auto nd = static_cast<double>(n);
    const double variance = nd * (nd + 1.0) * (2.0 * nd + 1.0) / 24.0 - ties / 48.0;
    test.p_value = normal_two_sided_p(test.statistic, nd * (nd + 1.0) / 4.0, variance);
  }
  return test;
}

}  // namespace dtbench
