// The servers' side of a measured parameter-server run: server-<shard>.json files, read for what
// the cost model needs (workload.h, ServerCosts).
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "launch/predict/workload.h"

namespace dtbench {

namespace {

std::vector<std::filesystem::path> server_files(const std::filesystem::path& run_dir) {
  static const std::regex name(R"(server-[0-9]+\.json)");
  std::vector<std::filesystem::path> files;
  for (const auto& dir : {run_dir, run_dir / "servers"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (std::regex_match(entry.path().filename().string(), name)) files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::optional<ServerCosts> load_server_costs(const std::filesystem::path& run_dir) {
  const auto files = server_files(run_dir);
  if (files.empty()) return std::nullopt;
  double floats = 0, largest = 0, aggregation = 0, summed = 0, apply = 0, applied = 0;
  for (const auto& path : files) {
    std::ifstream file(path);
    try {
      const nlohmann::json j = nlohmann::json::parse(file);
      const double shard_bytes = 4 * j.at("float_count").get<double>();
      const nlohmann::json& updates = j.at("updates");
      floats += shard_bytes / 4;
      largest = std::max(largest, shard_bytes / 4);
      aggregation += updates.at("aggregation").at("total_seconds").get<double>();
      summed += shard_bytes * updates.at("gradients_accepted").get<double>();
      apply += updates.at("apply").at("total_seconds").get<double>();
      applied += shard_bytes * updates.at("updates_applied").get<double>();
    } catch (const nlohmann::json::exception& e) {
      fail_input("{}: not a server report the model can read: {}", path.string(), e.what());
    }
  }
  if (!(summed > 0 && applied > 0)) return std::nullopt;  // servers that never updated
  return ServerCosts{.shards = static_cast<int>(files.size()), .largest_share = largest / floats,
                     .reduce_s_per_byte = aggregation / summed, .apply_s_per_byte = apply / applied,
                     .source = fmt::format("server costs and shard sizes from {} server file(s) in {}", files.size(),
                                           files.front().parent_path().string())};
}

}  // namespace dtbench
