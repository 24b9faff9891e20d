#pragma once
// The straggler term: a synchronous step of N workers waits for the slowest, so its compute is
// the largest of N draws from the workers' per-step compute distribution, not their mean.
#include <vector>

namespace dtbench {

// E[max of n independent draws] from the empirical distribution of `samples` (each sample equally
// likely). With the samples sorted x(1) <= ... <= x(m), the largest of n draws is x(i) with
// probability (i/m)^n - ((i-1)/m)^n, so the expectation is the sum of x(i) times that. n = 1 is
// the mean. InputError for no samples or n < 1.
double expected_max_of(std::vector<double> samples, int n);

}  // namespace dtbench
