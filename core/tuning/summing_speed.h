#pragma once
// How fast this machine sums one float buffer into another: the cost of reducing a received
// gradient, which the cost model charges per byte (launch/predict). Timed by `bench allreduce` on
// the cluster's hosts and written into its file, so that a prediction from stored files comes out
// the same on whichever machine runs it.

namespace dtbench {

// Seconds per byte of `sum[i] += part[i]` over 8 MiB buffers (beyond the caches, as a gradient
// bucket is), the best of a few runs.
double measure_summing_s_per_byte();

}  // namespace dtbench
