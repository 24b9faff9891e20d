#include "launch/report/server_stats.h"

#include <algorithm>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "comm/transport_catalogue.h"
#include "core/util/error.h"
#include "launch/report/charts.h"
#include "launch/report/format.h"
#include "launch/report/svg.h"

namespace dtbench {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

double seconds(const json& updates, const char* what, const char* which) {
  return updates.contains(what) ? updates[what].value(which, 0.0) : 0.0;
}

ServerRecord server_record(const json& j) {
  ServerRecord s;
  s.shard = j.value("shard", 0);
  s.mode = j.value("mode", std::string());
  const json updates = j.value("updates", json::object());
  s.updates_applied = updates.value("updates_applied", int64_t{0});
  s.queue_mean_s = seconds(updates, "queueing", "mean_seconds");
  s.queue_max_s = seconds(updates, "queueing", "max_seconds");
  s.apply_mean_s = seconds(updates, "apply", "mean_seconds");
  s.apply_max_s = seconds(updates, "apply", "max_seconds");
  s.straggler_wait_mean_s = seconds(updates, "straggler_wait", "mean_seconds");
  const json histogram = updates.contains("staleness") ? updates["staleness"].value("histogram", json::object())
                                                       : json::object();
  for (const auto& [staleness, count] : histogram.items()) s.staleness[std::stoll(staleness)] = count.get<int64_t>();
  return s;
}

}  // namespace

std::vector<ServerRecord> load_servers(const RunRecord& run) {
  const fs::path dir = run.path.parent_path();
  static const std::regex kName(R"(server-\d+\.json)");
  std::vector<ServerRecord> servers;
  for (const fs::path& folder : {dir, dir / "servers"}) {
    if (!fs::is_directory(folder)) continue;
    for (const auto& entry : fs::directory_iterator(folder)) {
      if (!std::regex_match(entry.path().filename().string(), kName)) continue;
      std::ifstream in(entry.path());
      try {
        servers.push_back(server_record(json::parse(in)));
      } catch (const std::exception& error) {
        fail_input("{}: not a parameter server's statistics: {}", entry.path().string(), error.what());
      }
    }
  }
  std::sort(servers.begin(), servers.end(), [](const auto& a, const auto& b) { return a.shard < b.shard; });
  return servers;
}

ReportTable servers_table(const std::string& run_name, const std::vector<ServerRecord>& servers) {
  ReportTable table = titled_table(fmt::format("Parameter servers of {}, per shard", run_name),
                                   {"shard", "mode", "updates", "queue ms mean", "queue ms max", "apply ms mean",
                                    "apply ms max", "straggler wait ms", "staleness mean", "staleness max"});
  for (const auto& s : servers) {
    int64_t gradients = 0, weighted = 0, largest = 0;
    for (const auto& [staleness, count] : s.staleness) {
      gradients += count;
      weighted += staleness * count;
      largest = std::max(largest, staleness);
    }
    const bool async = s.mode == "async" && gradients > 0;
    table.rows.push_back({std::to_string(s.shard), s.mode, std::to_string(s.updates_applied), ms_text(s.queue_mean_s),
                          ms_text(s.queue_max_s), ms_text(s.apply_mean_s), ms_text(s.apply_max_s),
                          ms_text(s.straggler_wait_mean_s),
                          async ? fmt::format("{:.2f}", static_cast<double>(weighted) / gradients) : "-",
                          async ? std::to_string(largest) : "-"});
  }
  table.note = "queue: a decoded push waiting for the shard's update thread; apply: the optimizer step on the "
               "shard; staleness (async): updates the shard applied between a worker's pull and its push.";
  return table;
}

std::string staleness_chart(const std::string& run_name, const std::vector<ServerRecord>& servers) {
  std::map<int64_t, int64_t> all;
  for (const auto& s : servers) {
    for (const auto& [staleness, count] : s.staleness) all[staleness] += count;
  }
  if (all.empty()) return "";
  std::vector<ValueBar> bars;
  for (const auto& [staleness, count] : all) {
    bars.push_back({fmt::format("{} behind", staleness), static_cast<double>(count),
                    transport_row(kPsAsyncTransport).chart_colour});
  }
  return value_bars_svg(fmt::format("Gradient staleness, {}", run_name), bars, "gradients", false, kHalfChart);
}

}  // namespace dtbench
