#include "core/kernels/parallel_ranges.h"

#include <algorithm>

#include <omp.h>

#include "core/kernels/group_threads.h"

namespace dtbench {

void parallel_ranges(int64_t items, int64_t min_items,
                     const std::function<void(int64_t begin, int64_t end)>& body) {
  const int64_t threads =
      std::clamp<int64_t>(items / std::max<int64_t>(min_items, 1), 1, GroupThreads::available());
  if (threads <= 1 || omp_in_parallel()) {
    body(0, items);
    return;
  }
#pragma omp parallel num_threads(static_cast<int>(threads))
  {
    const int64_t thread = omp_get_thread_num(), count = omp_get_num_threads();
    body(items * thread / count, items * (thread + 1) / count);
  }
}

}  // namespace dtbench
