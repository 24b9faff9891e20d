#pragma once
// The GPU memory a process may take: every device allocation of the process reserves its bytes
// here first and gives them back when freed, against 80 % of what the GPU had free, shared by the
// processes on it, so that a rank that asks past its share is told so by name (how much was asked,
// held and allowed) rather than one rank taking what its neighbours on the GPU need. Plain C++,
// tested on the CPU.
#include <cstdint>
#include <mutex>
#include <string_view>

namespace dtbench::cuda_plan {

// The device bytes one process may hold: 80 % of what the device had free when it was opened,
// shared evenly by the processes on that device (several ranks of a host may share one GPU).
constexpr int64_t memory_limit_for(int64_t free_bytes, int processes_on_device) {
  const int64_t sharers = processes_on_device > 1 ? processes_on_device : 1;
  return free_bytes > 0 ? free_bytes / 10 * 8 / sharers : 0;
}

// How many processes drive each GPU when `local_ranks` ranks of a host spread over `devices`
// GPUs round robin (device_pick.h): the most any GPU gets.
constexpr int processes_per_device(int local_ranks, int devices) {
  if (local_ranks < 1 || devices < 1) return 1;
  return (local_ranks + devices - 1) / devices;
}

class MemoryBudget {
 public:
  // Sets the limit (bytes), once; later calls keep the first (every context of a process sees the
  // same device memory). Returns the limit in force.
  int64_t set_limit(int64_t bytes);
  bool has_limit() const;
  // Reserves `bytes` for `what` (named in the error), or throws InputError when the held bytes
  // would pass the limit; nothing is reserved then.
  void reserve(int64_t bytes, std::string_view what);
  void release(int64_t bytes);
  int64_t held() const;
  int64_t limit() const;

 private:
  mutable std::mutex mutex_;
  int64_t limit_ = -1;  // -1: not set yet
  int64_t held_ = 0;
};

// The process's budget.
MemoryBudget& memory_budget();

}  // namespace dtbench::cuda_plan
