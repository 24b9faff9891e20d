#include "paramserver/server_stats.h"

#include <algorithm>

namespace dtbench {

void TimeStat::add(double seconds) {
  ++count;
  total_seconds += seconds;
  max_seconds = std::max(max_seconds, seconds);
}

nlohmann::json TimeStat::to_json() const {
  return {{"count", count},
          {"total_seconds", total_seconds},
          {"mean_seconds", count > 0 ? total_seconds / static_cast<double>(count) : 0.0},
          {"max_seconds", max_seconds}};
}

nlohmann::json staleness_json(const std::map<int64_t, int64_t>& counts) {
  nlohmann::json histogram = nlohmann::json::object();
  int64_t gradients = 0, weighted = 0, largest = 0;
  for (const auto& [staleness, count] : counts) {
    histogram[std::to_string(staleness)] = count;
    gradients += count;
    weighted += staleness * count;
    largest = std::max(largest, staleness);
  }
  return {{"histogram", histogram},
          {"mean", gradients > 0 ? static_cast<double>(weighted) / static_cast<double>(gradients) : 0.0},
          {"max", largest}};
}

nlohmann::json UpdateStats::to_json() const {
  return {{"updates_applied", updates_applied},
          {"gradients_accepted", gradients_accepted},
          {"gradients_rejected", gradients_rejected},
          {"steps_failed", steps_failed},
          {"workers_dropped", workers_dropped},
          {"queueing", queueing.to_json()},
          {"aggregation", aggregation.to_json()},
          {"apply", apply.to_json()},
          {"straggler_wait", straggler_wait.to_json()},
          {"held_for_staleness", held.to_json()},
          {"staleness", staleness_json(staleness_counts)}};
}

nlohmann::json TrafficStats::to_json() const {
  return {{"push_calls", push_calls.load()},
          {"pull_calls", pull_calls.load()},
          {"bytes_in", bytes_in.load()},
          {"bytes_out", bytes_out.load()},
          {"rejected_calls", rejected_calls.load()}};
}

}  // namespace dtbench
