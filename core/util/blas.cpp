#include "core/util/blas.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <cblas.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace dtbench::blas {

namespace {

// Set for the re-executed process alone: "<pid>:<what OPENBLAS_CORETYPE was before>" (empty after the
// colon when it was unset). execv keeps the pid, so a process whose pid is not the marker's is a child
// that inherited it, and decides for itself.
constexpr const char* kRaisedFrom = "DTBENCH_BLAS_RAISED_FROM";
constexpr const char* kForced = "DTBENCH_BLAS_CORE";

// This process's own raise, read from the marker at start: what OPENBLAS_CORETYPE was before it.
std::optional<std::string>& raised_from() {
  static std::optional<std::string> previous;
  return previous;
}

// Reads the marker and removes it from the environment, so no process this one starts inherits it.
// Returns whether it was set for this very process (then it was re-executed already).
bool take_marker() {
  const char* marker = std::getenv(kRaisedFrom);
  if (marker == nullptr) return false;
  const std::string text = marker;
  unsetenv(kRaisedFrom);
  const std::string own_prefix = std::to_string(getpid()) + ":";
  if (text.rfind(own_prefix, 0) != 0) return false;
  raised_from() = text.substr(own_prefix.size());
  return true;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// How capable a core's kernels are; cores we do not rank are left alone.
int strength(const std::string& core) {
  static const std::map<std::string, int> ranks = {
      {"prescott", 1}, {"core2", 1},     {"penryn", 1},   {"dunnington", 1}, {"nehalem", 2},
      {"atom", 1},     {"sandybridge", 3}, {"haswell", 4}, {"zen", 4},        {"skylakex", 5},
      {"cooperlake", 6}, {"sapphirerapids", 7}};
  const auto found = ranks.find(lower(core));
  return found == ranks.end() ? 100 : found->second;
}

// The command line the kernel started this process with. Usually argv; but under a loader started
// by name (the GPU kit's `ld-linux-x86-64.so.2 --library-path ... dtbench ...`), /proc/self/exe is
// the loader, and only /proc/self/cmdline still holds the loader's own arguments and the program.
std::vector<std::string> started_command_line(char** argv) {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::string> words;
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\0', start);
    words.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (words.empty()) {
    for (char** arg = argv; *arg != nullptr; ++arg) words.emplace_back(*arg);
  }
  return words;
}

}  // namespace

std::string preferred_core() {
  __builtin_cpu_init();
  // Cooperlake is SkylakeX plus bf16; both need AVX-512 F/BW/VL/DQ.
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (avx512 && __builtin_cpu_supports("avx512bf16")) return "Cooperlake";
  if (avx512) return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return "";
}

void select_core(char** argv) {
  if (take_marker()) return;  // already re-executed once
  const char* forced = std::getenv(kForced);
  const std::string wanted = forced != nullptr ? forced : preferred_core();
  const std::string current = core_name();
  if (wanted.empty() || lower(current) == lower(wanted)) return;
  if (forced == nullptr && strength(current) >= strength(wanted)) return;
  const char* inherited = std::getenv("OPENBLAS_CORETYPE");
  const std::optional<std::string> previous = inherited != nullptr ? std::optional<std::string>(inherited) : std::nullopt;
  setenv(kRaisedFrom, fmt::format("{}:{}", getpid(), previous.value_or("")).c_str(), 1);
  setenv("OPENBLAS_CORETYPE", wanted.c_str(), 1);
  std::vector<std::string> words = started_command_line(argv);
  std::vector<char*> command;
  for (std::string& word : words) command.push_back(word.data());
  command.push_back(nullptr);
  execv("/proc/self/exe", command.data());
  // Not re-executed: leave the environment as it was, for the processes this one starts.
  unsetenv(kRaisedFrom);
  if (previous) {
    setenv("OPENBLAS_CORETYPE", previous->c_str(), 1);
  } else {
    unsetenv("OPENBLAS_CORETYPE");
  }
  spdlog::warn("could not re-execute with OPENBLAS_CORETYPE={}; BLAS runs on core {}", wanted, current);
}

std::string core_name() { return openblas_get_corename(); }

std::string core_selection() {
  if (std::getenv(kForced) != nullptr) return fmt::format("forced by {}", kForced);
  const std::optional<std::string>& previous = raised_from();
  if (!previous) {
    return std::getenv("OPENBLAS_CORETYPE") != nullptr ? "set by OPENBLAS_CORETYPE" : "chosen by OpenBLAS";
  }
  if (previous->empty()) return fmt::format("raised to {} (OpenBLAS chose a weaker core)", core_name());
  return fmt::format("raised from {} (inherited OPENBLAS_CORETYPE) to {}", *previous, core_name());
}

std::string config() { return openblas_get_config(); }

void set_threads(int threads) { openblas_set_num_threads(std::max(threads, 1)); }

int threads() { return openblas_get_num_threads(); }

}  // namespace dtbench::blas
