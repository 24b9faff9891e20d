// The sweep's statistics, checked against brute force: every way of splitting the pooled ranks
// (Mann-Whitney) and every sign pattern (Wilcoxon) enumerated, which is what the exact tests'
// tables count, and the normal approximations against those enumerations where ties force them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/util/error.h"
#include "launch/report/statistics.h"

namespace dtbench {
namespace {

// Two-sided permutation p of U: all C(n1+n2, n1) choices of which pooled values are "a".
double brute_force_mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  const std::vector<double> ranks = mid_ranks(pooled);
  const size_t n = pooled.size(), n1 = a.size();
  const double offset = 0.5 * static_cast<double>(n1 * (n1 + 1));
  const double observed = std::accumulate(ranks.begin(), ranks.begin() + static_cast<long>(n1), 0.0) - offset;
  const double mean = 0.5 * static_cast<double>(n1 * b.size());
  std::vector<bool> chosen(n, false);
  std::fill(chosen.begin(), chosen.begin() + static_cast<long>(n1), true);
  double extreme = 0, total = 0;
  do {
    double u = -offset;
    for (size_t i = 0; i < n; ++i) u += chosen[i] ? ranks[i] : 0.0;
    extreme += std::abs(u - mean) >= std::abs(observed - mean) - 1e-9 ? 1 : 0;
    total += 1;
  } while (std::prev_permutation(chosen.begin(), chosen.end()));
  return std::min(1.0, extreme / total);
}

// Two-sided p of W+: all 2^n sign patterns of the non-zero differences' ranks.
double brute_force_wilcoxon_p(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> magnitudes, signs;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    magnitudes.push_back(std::abs(a[i] - b[i]));
    signs.push_back(a[i] > b[i] ? 1 : 0);
  }
  const std::vector<double> ranks = mid_ranks(magnitudes);
  const double total_rank = std::accumulate(ranks.begin(), ranks.end(), 0.0);
  double observed = 0;
  for (size_t i = 0; i < ranks.size(); ++i) observed += signs[i] * ranks[i];
  const double mean = total_rank / 2;
  double extreme = 0;
  const uint64_t patterns = uint64_t{1} << ranks.size();
  for (uint64_t mask = 0; mask < patterns; ++mask) {
    double w = 0;
    for (size_t i = 0; i < ranks.size(); ++i) w += (mask >> i & 1) ? ranks[i] : 0.0;
    extreme += std::abs(w - mean) >= std::abs(observed - mean) - 1e-9 ? 1 : 0;
  }
  return std::min(1.0, extreme / static_cast<double>(patterns));
}

TEST(Statistics, SpreadOfOddEvenAndEmpty) {
  const Spread odd = spread_of({5, 1, 3});
  EXPECT_EQ(odd.count, 3);
  EXPECT_DOUBLE_EQ(odd.median, 3);
  EXPECT_DOUBLE_EQ(odd.min, 1);
  EXPECT_DOUBLE_EQ(odd.max, 5);
  EXPECT_DOUBLE_EQ(spread_of({4, 1, 3, 10}).median, 3.5);
  EXPECT_TRUE(std::isnan(spread_of({}).median));
}

TEST(Statistics, MidRanksAverageTiesAndCountTheTieTerm) {
  double tie_term = 0;
  const std::vector<double> ranks = mid_ranks({10, 20, 20, 5, 20}, &tie_term);
  EXPECT_EQ(ranks, (std::vector<double>{2, 4, 4, 1, 4}));
  EXPECT_DOUBLE_EQ(tie_term, 3 * 3 * 3 - 3);
}

TEST(Statistics, MannWhitneyCompletelySeparatedFiveAndFive) {
  // U = 0: only 2 of the C(10,5) = 252 splits are as extreme, so p = 2/252.
  const RankTest test = mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_TRUE(test.exact);
  EXPECT_DOUBLE_EQ(test.statistic, 0);
  EXPECT_NEAR(test.p_value, 2.0 / 252.0, 1e-12);
  EXPECT_LT(test.p_value, 0.05);
}

TEST(Statistics, MannWhitneyExactMatchesEnumeration) {
  const std::vector<std::vector<double>> as = {{1.5, 3.2, 0.7, 8.1}, {2, 9, 4, 6, 11}, {0.3}, {5, 1, 7, 3, 2, 8}};
  const std::vector<std::vector<double>> bs = {{2.5, 4.4, 6.0}, {1, 3, 5, 7, 8, 10}, {0.1, 0.2, 0.5}, {4, 6, 9, 10, 11}};
  for (size_t i = 0; i < as.size(); ++i) {
    const RankTest test = mann_whitney_u(as[i], bs[i]);
    ASSERT_TRUE(test.exact) << i;
    EXPECT_NEAR(test.p_value, brute_force_mann_whitney_p(as[i], bs[i]), 1e-12) << i;
  }
}

TEST(Statistics, MannWhitneyWithTiesUsesTheNormalApproximationCloseToEnumeration) {
  const std::vector<double> a = {1, 2, 2, 3, 5, 7, 7, 8}, b = {2, 4, 6, 6, 8, 9, 9, 10, 12};
  const RankTest test = mann_whitney_u(a, b);
  EXPECT_FALSE(test.exact);
  EXPECT_NEAR(test.p_value, brute_force_mann_whitney_p(a, b), 0.02);
}

TEST(Statistics, WilcoxonFivePairsCanNeverReachFivePercent) {
  const RankTest test = wilcoxon_signed_rank({2, 3, 4, 5, 6}, {1, 1, 1, 1, 1});
  EXPECT_TRUE(test.exact);
  EXPECT_DOUBLE_EQ(test.statistic, 15);
  EXPECT_NEAR(test.p_value, 2.0 / 32.0, 1e-12);
}

TEST(Statistics, WilcoxonExactMatchesEnumerationAndDropsZeroDifferences) {
  const std::vector<double> a = {1.1, 2.5, 3.0, 4.2, 5.0, 6.1, 7.3, 8.0, 9.0};
  const std::vector<double> b = {1.0, 2.0, 3.3, 3.15, 4.0, 6.75, 7.3, 7.25, 9.0};
  const RankTest test = wilcoxon_signed_rank(a, b);
  EXPECT_TRUE(test.exact);
  EXPECT_EQ(test.pairs_used, 7);
  EXPECT_NEAR(test.p_value, brute_force_wilcoxon_p(a, b), 1e-12);
}

TEST(Statistics, WilcoxonWithTiesIsCloseToEnumeration) {
  const std::vector<double> a = {3, 5, 4, 7, 9, 2, 8, 6, 10, 4, 6, 9};
  const std::vector<double> b = {1, 3, 5, 4, 6, 1, 5, 7, 7, 2, 3, 8};
  const RankTest test = wilcoxon_signed_rank(a, b);
  EXPECT_FALSE(test.exact);
  EXPECT_NEAR(test.p_value, brute_force_wilcoxon_p(a, b), 0.02);
}

TEST(Statistics, BadSamplesAreInputErrors) {
  EXPECT_THROW(mann_whitney_u({}, {1}), InputError);
  EXPECT_THROW(wilcoxon_signed_rank({1, 2}, {1}), InputError);
  EXPECT_DOUBLE_EQ(wilcoxon_signed_rank({1, 2}, {1, 2}).p_value, 1.0);
}

}  // namespace
}  // namespace dtbench
