#include "core/cuda/plan/memory_budget.h"

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench::cuda_plan {

namespace {

double gib(int64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(int64_t{1} << 30); }

}  // namespace

int64_t MemoryBudget::set_limit(int64_t bytes) {
  std::lock_guard lock(mutex_);
  if (limit_ < 0) limit_ = bytes < 0 ? 0 : bytes;
  return limit_;
}

bool MemoryBudget::has_limit() const {
  std::lock_guard lock(mutex_);
  return limit_ >= 0;
}

void MemoryBudget::reserve(int64_t bytes, std::string_view what) {
  std::lock_guard lock(mutex_);
  DTB_CHECK(limit_ >= 0, "the GPU memory budget was used before its limit was set");
  if (bytes > limit_ - held_) {
    fail_input("{} needs {:.2f} GiB of GPU memory, and this process already holds {:.2f} GiB of its {:.2f} GiB "
               "(80 % of what the GPU had free, shared by the processes on it); use a smaller batch or model, or "
               "fewer ranks per GPU",
               what, gib(bytes), gib(held_), gib(limit_));
  }
  held_ += bytes;
}

void MemoryBudget::release(int64_t bytes) {
  std::lock_guard lock(mutex_);
  held_ = held_ > bytes ? held_ - bytes : 0;
}

int64_t MemoryBudget::held() const {
  std::lock_guard lock(mutex_);
  return held_;
}

int64_t MemoryBudget::limit() const {
  std::lock_guard lock(mutex_);
  return limit_;
}

MemoryBudget& memory_budget() {
  static MemoryBudget budget;
  return budget;
}

}  // namespace dtbench::cuda_plan
