#pragma once
// The memory-bound loops of a training step (batch normalisation, activations, the residual join)
// split into contiguous ranges among the threads the convolutions use. Single-threaded, they left
// the second core idle for a seventh of ResNet-18's step on 2 threads (perf on a 2-core Intel
// Xeon: libgomp's spin-wait 12 % of the samples, batch normalisation, ReLU and the join 7 %).
// A range is a whole number of the caller's items (channels, planes, floats), so each item is
// computed by one thread in the same order as on one: results do not depend on the thread count.
#include <cstdint>
#include <functional>

namespace dtbench {

// Calls body(begin, end) over disjoint ranges covering [0, items), one per thread, on as many of
// the convolutions' threads (GroupThreads::available) as leave each at least `min_items`; on the
// calling thread alone when that is one, or when already inside a parallel region.
void parallel_ranges(int64_t items, int64_t min_items,
                     const std::function<void(int64_t begin, int64_t end)>& body);

// Enough floats for a thread that starting the parallel region (a few microseconds) is worth it.
constexpr int64_t kMinFloatsPerThread = int64_t{1} << 15;

}  // namespace dtbench
