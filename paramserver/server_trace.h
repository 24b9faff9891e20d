#pragma once
// One parameter server's timeline: trace-server-<shard>.json beside server-<shard>.json, in the
// workers' trace format (core/profile/trace_file.h), for `dtbench report` to merge with theirs.
// Process "server <shard>", thread "update thread"; for each of the first `max_updates` updates a
// span "update <version>" enclosing
//   gather     sync only: from the first worker's gradient for the version until aggregation
//              starts — the wait for the other workers, then the update thread's queue
//   aggregate  summing and averaging the gradients (async: scaling the one)
//   apply      the optimizer step and the checks
// (one pass interleaves the last two block by block, update_pass.h: each is drawn as its share)
// Written on the update thread after the update's pushes are answered, so the workers never wait
// for it; a fixed number of updates keeps the file small however long the server runs.
#include <chrono>
#include <cstdint>
#include <filesystem>

#include "core/profile/trace_file.h"
#include "paramserver/shard_updater.h"

namespace dtbench {

// Servers' pids in their own files, clear of the workers' ranks (the merge renumbers anyway).
inline constexpr int kServerTracePidBase = 1000;

class ServerTrace {
 public:
  ServerTrace(const std::filesystem::path& path, int shard, int64_t max_updates);
  void record(const UpdateTiming& update);
  void finish() { file_.finish(); }

 private:
  int64_t max_updates_;
  int64_t updates_written_ = 0;
  TraceEventFile file_;
};

std::filesystem::path server_trace_path(const std::filesystem::path& output_dir, int shard);

}  // namespace dtbench
