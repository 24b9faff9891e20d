#pragma once
// Bench files of known rows for the tests of `predict --fit` beside benches: written as `dtbench
// bench allreduce` and `bench ps` write them, read back as the fit reads them.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "launch/predict/fit.h"

namespace dtbench::testing {

// `bench` (a bench file's JSON) as fitted at `link`; the file it went through is removed.
inline FittedConstants benches_from(const nlohmann::json& bench, const std::string& link) {
  static int written = 0;
  const auto file = std::filesystem::temp_directory_path() /
                    ("synthetic-bench-" + std::to_string(getpid()) + "-" + std::to_string(++written) + ".json");
  std::ofstream(file) << bench;
  FittedConstants benches({{.link = parse_link_rate(link), .path = file}}, 0.0);
  std::filesystem::remove(file);
  return benches;
}

// `bench ps` of one worker and one shard whose rows are `rows`.
inline nlohmann::json ps_bench(const nlohmann::json& rows) {
  return {{"benchmark", "ps"}, {"workers", 1}, {"shards", 1}, {"rows", rows}};
}

// `bench allreduce` across 2 ranks whose rows are `rows`.
inline nlohmann::json allreduce_bench(const nlohmann::json& rows) {
  return {{"benchmark", "allreduce"}, {"world", 2}, {"rows", rows}};
}

}  // namespace dtbench::testing
