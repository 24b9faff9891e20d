#pragma once
// What the parameter servers of a run recorded (server-<shard>.json beside report.json or in its
// servers/ folder): per shard the time an update queued and took to apply, and, asynchronous,
// how stale the gradients it applied were — as a table and a staleness histogram.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "launch/report/run_record.h"
#include "launch/report/table.h"

namespace dtbench {

struct ServerRecord {
  int shard = 0;
  std::string mode;  // sync | async
  int64_t updates_applied = 0;
  double queue_mean_s = 0.0, queue_max_s = 0.0;
  double apply_mean_s = 0.0, apply_max_s = 0.0;
  double straggler_wait_mean_s = 0.0;        // sync: waiting for the last worker's gradient
  std::map<int64_t, int64_t> staleness;      // versions behind -> gradients
};

// The servers' files of the run whose report.json is `run.path`, by shard; none when absent.
// An InputError naming the file when one is not valid JSON.
std::vector<ServerRecord> load_servers(const RunRecord& run);

// One row per shard; the staleness columns only mean something for async servers.
ReportTable servers_table(const std::string& run_name, const std::vector<ServerRecord>& servers);
// Gradients by staleness, all shards together; "" when no server recorded any.
std::string staleness_chart(const std::string& run_name, const std::vector<ServerRecord>& servers);

}  // namespace dtbench
