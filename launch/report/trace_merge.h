#pragma once
// One timeline from the trace files of a run's processes — every worker's (trace-<rank>.json) and
// any parameter server's (trace-server-<shard>.json) — written as one trace.json for Perfetto or
// chrome://tracing, each source its own process (pid), on one time axis.
//
// Placing the sources. Each file's ts count from its own origin; the process_name event's
// args.clock says where that origin lies (core/profile/trace_file.h). The run's reference clock is
// that of its first source with a clock record (rank 0's trace: "rank 0 steady clock" for MPI
// transports, "server 0 steady clock" for parameter servers). A source that measured its offset to
// that clock is placed by it (to within the uncertainty it records); any other — a server other
// than 0, a transport that measured nothing — by its system clock, which is only as good as the
// hosts' NTP, joined to the reference through the reference process's own record of both clocks.
// Each run then starts at 0; several runs are laid over each other, for side-by-side comparison,
// their process names prefixed with the run's.
#include <filesystem>
#include <string>
#include <vector>

namespace dtbench {

struct TraceRun {
  std::string name;                           // shown before process names when several runs merge
  std::vector<std::filesystem::path> files;   // workers first: the first names the reference clock
};

struct TraceMergeResult {
  int sources = 0;                    // files merged
  int64_t events = 0;
  std::vector<std::string> warnings;  // files repaired, skipped or placed without a clock record
};

// The trace files of `dir`, or `dir` itself if it is a file: trace-<rank>.json by rank, then
// trace-server-<shard>.json by shard (the merged trace.json is not one of them).
std::vector<std::filesystem::path> find_trace_files(const std::filesystem::path& dir);

// Merges the runs' traces into `out` (written atomically). Files that cannot be read are skipped
// with a warning; nothing is written when no file could be read (sources == 0).
TraceMergeResult merge_traces(const std::vector<TraceRun>& runs, const std::filesystem::path& out);

}  // namespace dtbench
