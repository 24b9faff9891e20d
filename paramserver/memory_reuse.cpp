#include "paramserver/memory_reuse.h"

#include <malloc.h>

#include <mutex>

#include <spdlog/spdlog.h>

namespace dtbench {

void reuse_freed_memory() {
  static std::once_flag once;
  std::call_once(once, [] {
    // glibc refuses a threshold above HEAP_MAX_SIZE / 2, 32 MiB on 64-bit machines. Setting either
    // value by hand also ends glibc's own adjustment of the threshold, so both are set.
    constexpr int kMmapThreshold = 32 << 20;
    constexpr int kTrimThreshold = 1 << 30;
    if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) != 1 || mallopt(M_TRIM_THRESHOLD, kTrimThreshold) != 1) {
      spdlog::debug("mallopt refused the parameter server's heap settings; freed memory goes back to the kernel");
    }
  });
}

}  // namespace dtbench
