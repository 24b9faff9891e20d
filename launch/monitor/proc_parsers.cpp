#include "launch/monitor/proc_parsers.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>

#include "core/util/files.h"

namespace dtbench {

namespace {

std::optional<uint64_t> to_u64(std::string_view word) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc{} || end != word.data() + word.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t at = 0;
  while (at < line.size()) {
    const size_t begin = line.find_first_not_of(" \t", at);
    if (begin == std::string_view::npos) break;
    size_t end = line.find_first_of(" \t", begin);
    if (end == std::string_view::npos) end = line.size();
    words.push_back(line.substr(begin, end - begin));
    at = end;
  }
  return words;
}

// Calls `on_line` with each line of `text`, without its newline, until it returns false.
template <typename OnLine>
void for_each_line(std::string_view text, OnLine on_line) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    if (!on_line(text.substr(at, end - at))) return;
    at = end + 1;
  }
}

// /proc/self/stat: "pid (comm) state ppid ..." where comm may hold spaces and parentheses, so the
// fields are counted from the last ')': field N (1-based) is word N - 3 after it. The sum of two
// neighbouring fields, first and first + 1.
std::optional<uint64_t> stat_field_pair_sum(std::string_view proc_stat, size_t first) {
  const size_t close = proc_stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  const auto words = split_words(proc_stat.substr(close + 1));
  if (words.size() < first - 1) return std::nullopt;
  const auto a = to_u64(words[first - 3]), b = to_u64(words[first - 2]);
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

}  // namespace

// utime and stime, fields 14 and 15.
std::optional<uint64_t> parse_process_cpu_ticks(std::string_view proc_self_stat) {
  return stat_field_pair_sum(proc_self_stat, 14);
}

// cutime and cstime, fields 16 and 17: the CPU time of the children this process has waited for.
std::optional<uint64_t> parse_children_cpu_ticks(std::string_view proc_self_stat) {
  return stat_field_pair_sum(proc_self_stat, 16);
}

// starttime is field 22 (1-based), the 20th after the ')'.
std::optional<uint64_t> parse_process_start_ticks(std::string_view proc_self_stat) {
  const size_t close = proc_self_stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  const auto words = split_words(proc_self_stat.substr(close + 1));
  if (words.size() < 20) return std::nullopt;
  return to_u64(words[19]);
}

std::optional<double> process_age_seconds() {
  const auto start_ticks = parse_process_start_ticks(read_proc_text("/proc/self/stat"));
  const std::string uptime = read_proc_text("/proc/uptime");  // "seconds-since-boot idle-seconds"
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (!start_ticks || uptime.empty() || ticks_per_second <= 0) return std::nullopt;
  double since_boot = 0.0;
  const auto [end, error] = std::from_chars(uptime.data(), uptime.data() + uptime.size(), since_boot);
  if (error != std::errc{}) return std::nullopt;
  return std::max(0.0, since_boot - static_cast<double>(*start_ticks) / static_cast<double>(ticks_per_second));
}

namespace {
// Set while the program's static objects are made, before main: the earliest moment of its own.
const auto program_start = std::chrono::steady_clock::now();
}  // namespace

double program_age_seconds() {
  const double since_program = std::chrono::duration<double>(std::chrono::steady_clock::now() - program_start).count();
  const auto age = process_age_seconds();
  return age && *age - since_program <= kLongestLoadSeconds ? *age : since_program;
}

// /proc/stat: "cpuN user nice system idle iowait irq softirq steal guest guest_nice". Guest time is
// already inside user and nice, so the total is the first eight; idle and iowait are not busy.
std::vector<CoreTicks> parse_core_ticks(std::string_view proc_stat) {
  std::vector<CoreTicks> cores;
  bool readable = true;
  for_each_line(proc_stat, [&](std::string_view line) {
    // "cpu " is the whole machine; "cpu0", "cpu1", ... are the cores.
    if (line.size() < 4 || !line.starts_with("cpu") || line[3] < '0' || line[3] > '9') return true;
    const auto words = split_words(line);
    if (words.size() < 5) return readable = false;
    uint64_t fields[8] = {};
    for (size_t i = 0; i < 8 && i + 1 < words.size(); ++i) {
      const auto value = to_u64(words[i + 1]);
      if (!value) return readable = false;
      fields[i] = *value;
    }
    CoreTicks core;
    for (uint64_t value : fields) core.total_ticks += value;
    core.busy_ticks = core.total_ticks - fields[3] - fields[4];
    cores.push_back(core);
    return true;
  });
  return readable ? cores : std::vector<CoreTicks>{};
}

// /proc/self/status: "VmRSS:\t  123456 kB".
std::optional<int64_t> parse_status_bytes(std::string_view proc_self_status, std::string_view key) {
  std::optional<int64_t> bytes;
  for_each_line(proc_self_status, [&](std::string_view line) {
    if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != ':') return true;
    const auto words = split_words(line.substr(key.size() + 1));
    const auto kib = words.size() == 2 && words[1] == "kB" ? to_u64(words[0]) : std::nullopt;
    if (kib) bytes = static_cast<int64_t>(*kib) * 1024;
    return false;  // the first line with the key decides
  });
  return bytes;
}

std::string read_proc_text(const char* path) { return read_file(path).value_or(""); }

}  // namespace dtbench
