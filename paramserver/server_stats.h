#pragma once
// What a parameter server measures about itself, written as server-<shard>.json when it stops
// (and returned by the Stats call at any time).
#include <atomic>
#include <cstdint>
#include <map>

#include <nlohmann/json.hpp>

namespace dtbench {

// Count, total and maximum of a duration, in seconds.
struct TimeStat {
  int64_t count = 0;
  double total_seconds = 0.0;
  double max_seconds = 0.0;

  void add(double seconds);
  nlohmann::json to_json() const;
};

// Kept by the update thread (read under the shard's state lock).
struct UpdateStats {
  int64_t updates_applied = 0;
  int64_t gradients_accepted = 0;
  int64_t gradients_rejected = 0;  // wrong version, duplicate worker
  int64_t steps_failed = 0;        // sync: a worker missing past the timeout
  int64_t workers_dropped = 0;     // sync with drop_missing_workers: workers left out
  TimeStat queueing;               // a decoded push waiting for the update thread
  TimeStat aggregation;            // sync: summing and averaging the workers' gradients; async: scaling
                                   // (the update pass's share spent on it: update_pass.h)
  TimeStat apply;                  // the optimizer step and the checks (the rest of the pass)
  TimeStat straggler_wait;         // sync: first to last worker's arrival at a step
  TimeStat held;                   // async with max_staleness: a push held back for the slow workers
  std::map<int64_t, int64_t> staleness_counts;  // async: staleness -> gradients

  nlohmann::json to_json() const;
};

// Kept by the gRPC threads: bytes on the wire (protobuf message sizes) and calls.
struct TrafficStats {
  std::atomic<int64_t> push_calls{0};
  std::atomic<int64_t> pull_calls{0};
  std::atomic<int64_t> bytes_in{0};
  std::atomic<int64_t> bytes_out{0};
  std::atomic<int64_t> rejected_calls{0};  // malformed, unauthenticated, wrong run

  nlohmann::json to_json() const;
};

// A staleness histogram (staleness -> gradients) with its mean and max, as server and worker
// reports give it.
nlohmann::json staleness_json(const std::map<int64_t, int64_t>& counts);

}  // namespace dtbench
