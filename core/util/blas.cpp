#include "core/util/blas.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

#include <cblas.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace dtbench::blas {

namespace {

// Set on the re-executed process: what OPENBLAS_CORETYPE was before ("" when unset).
constexpr const char* kRaisedFrom = "DTBENCH_BLAS_RAISED_FROM";
constexpr const char* kForced = "DTBENCH_BLAS_CORE";

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
  if (std::getenv(kRaisedFrom) != nullptr) return;  // already re-executed once
  const char* forced = std::getenv(kForced);
  const std::string wanted = forced != nullptr ? forced : preferred_core();
  const std::string current = core_name();
  if (wanted.empty() || lower(current) == lower(wanted)) return;
  if (forced == nullptr && strength(current) >= strength(wanted)) return;
  const char* previous = std::getenv("OPENBLAS_CORETYPE");
  setenv(kRaisedFrom, previous != nullptr ? previous : "", 1);
  setenv("OPENBLAS_CORETYPE", wanted.c_str(), 1);
  execv("/proc/self/exe", argv);
  spdlog::warn("could not re-execute with OPENBLAS_CORETYPE={}; BLAS runs on core {}", wanted, current);
}

std::string core_name() { return openblas_get_corename(); }

std::string core_selection() {
  if (std::getenv(kForced) != nullptr) return fmt::format("forced by {}", kForced);
  const char* raised_from = std::getenv(kRaisedFrom);
  if (raised_from == nullptr) return "chosen by OpenBLAS";
  if (*raised_from == '\0') return fmt::format("raised to {} (OpenBLAS chose a weaker core)", core_name());
  return fmt::format("raised from {} (inherited OPENBLAS_CORETYPE) to {}", raised_from, core_name());
}

std::string config() { return openblas_get_config(); }

void set_threads(int threads) { openblas_set_num_threads(std::max(threads, 1)); }

int threads() { return openblas_get_num_threads(); }

}  // namespace dtbench::blas
