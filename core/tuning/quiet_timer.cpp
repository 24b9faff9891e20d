#include "core/tuning/quiet_timer.h"

#include <dirent.h>
#include <sys/resource.h>

#include <cstdio>

namespace dtbench {

namespace {

// The summed second field (ns waited on a run queue) of every thread's schedstat; false where
// /proc or the kernel's schedstat (CONFIG_SCHED_INFO) is missing. Threads that ended between the
// two readings drop out of the second: a timing's own threads outlive it.
bool summed_run_queue_wait(double& waited_ns) {
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return false;
  bool read_any = false;
  waited_ns = 0.0;
  while (const dirent* entry = ::readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    char path[sizeof "/proc/self/task//schedstat" + sizeof entry->d_name];
    std::snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", entry->d_name);
    FILE* file = std::fopen(path, "r");
    if (file == nullptr) continue;
    unsigned long long ran_ns = 0, wait_ns = 0;
    if (std::fscanf(file, "%llu %llu", &ran_ns, &wait_ns) == 2) {
      waited_ns += static_cast<double>(wait_ns);
      read_any = true;
    }
    std::fclose(file);
  }
  ::closedir(tasks);
  return read_any;
}

}  // namespace

CpuLoss cpu_loss_so_far() {
  CpuLoss loss;
  loss.from_wait = summed_run_queue_wait(loss.waited_ns);
  if (!loss.from_wait) {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    loss.involuntary_switches = usage.ru_nivcsw;
  }
  return loss;
}

bool lost_the_cpu(const CpuLoss& before, const CpuLoss& after, double wall_ns) {
  if (before.from_wait && after.from_wait) return after.waited_ns - before.waited_ns > kMostWaitShare * wall_ns;
  return after.involuntary_switches != before.involuntary_switches;
}

}  // namespace dtbench
