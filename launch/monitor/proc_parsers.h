#pragma once
// Parsers for the /proc text the resource sampler reads (Linux only). Each returns nothing, or an
// empty list, on text it cannot read, so a sampler on another system simply has no readings.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtbench {

// One core's counters from a /proc/stat "cpuN" line, in clock ticks.
struct CoreTicks {
  uint64_t busy_ticks = 0;
  uint64_t total_ticks = 0;
};

std::optional<uint64_t> parse_process_cpu_ticks(std::string_view proc_self_stat);  // utime + stime
// The CPU ticks of the children the process has waited for (cutime + cstime).
std::optional<uint64_t> parse_children_cpu_ticks(std::string_view proc_self_stat);
std::vector<CoreTicks> parse_core_ticks(std::string_view proc_stat);                // cpu0, cpu1, ...
std::optional<int64_t> parse_status_bytes(std::string_view proc_self_status, std::string_view key);  // "VmRSS"

// starttime (field 22 of /proc/self/stat): when the process started, in clock ticks since boot.
std::optional<uint64_t> parse_process_start_ticks(std::string_view proc_self_stat);
// Seconds since this process started, from /proc/self/stat and /proc/uptime (both in 1/100 s, so
// to within about 0.02 s); nullopt where they cannot be read.
std::optional<double> process_age_seconds();
// Seconds since dtbench began: the process's age (which counts the dynamic loader), unless the
// process is older than its program by more than kLongestLoadSeconds — a shell that ran for
// minutes before it exec'd dtbench (`bash -c 'scripts/setup.sh && build/dtbench train'`) hands
// its own start time on — then since the program's first static initializer ran.
constexpr double kLongestLoadSeconds = 2.0;
double program_age_seconds();

// The whole of a small file such as /proc/self/stat; empty when it cannot be read.
std::string read_proc_text(const char* path);

}  // namespace dtbench
