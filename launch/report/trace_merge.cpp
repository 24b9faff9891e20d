#include "launch/report/trace_merge.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/profile/trace_file.h"
#include "core/util/files.h"
#include "launch/report/trace_read.h"

namespace dtbench {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Where a file's origin lies, from its process_name event's args.clock.
struct SourceClock {
  bool known = false;
  std::string reference = kTraceSystemClock;
  int64_t origin_unix_ns = 0;
  int64_t origin_on_reference_ns = 0;  // the origin read on the reference clock: steady − offset
  int64_t uncertainty_ns = 0;
};

struct Source {
  fs::path path;
  json events;
  SourceClock clock{};
  int64_t start_ns = 0;  // the origin on the run's time axis, before the run is moved to start at 0
  std::string placed_by{};
};

SourceClock clock_of(const json& events) {
  SourceClock clock;
  for (const json& event : events) {
    if (!event.is_object() || event.value("ph", "") != "M" || event.value("name", "") != "process_name") continue;
    const json* record = event.contains("args") && event["args"].contains("clock") ? &event["args"]["clock"] : nullptr;
    if (record == nullptr || !record->is_object()) continue;
    clock.known = true;
    clock.reference = record->value("reference", kTraceSystemClock);
    clock.origin_unix_ns = record->value("origin_unix_ns", int64_t{0});
    clock.origin_on_reference_ns =
        record->value("origin_steady_ns", int64_t{0}) - record->value("offset_ns", int64_t{0});
    clock.uncertainty_ns = record->value("uncertainty_ns", int64_t{0});
    break;
  }
  return clock;
}

// The source that knows best how the reference clock and the system clock stand to each other:
// the reference process itself (no uncertainty), else the source best measured against it.
const Source* find_anchor(const std::vector<Source>& sources, const std::string& reference) {
  const Source* anchor = nullptr;
  for (const Source& source : sources) {
    if (!source.clock.known || source.clock.reference != reference) continue;
    if (anchor == nullptr || source.clock.uncertainty_ns < anchor->clock.uncertainty_ns) anchor = &source;
  }
  return anchor;
}

// Sets the start of a source with a clock record on the `reference` axis; `reference_minus_unix`
// carries system-clock readings onto it.
void place_on(Source& source, const std::string& reference, int64_t reference_minus_unix) {
  const SourceClock& clock = source.clock;
  if (reference == kTraceSystemClock) {
    source.start_ns = clock.origin_unix_ns;
    source.placed_by = "system clock";
  } else if (clock.reference == reference) {
    source.start_ns = clock.origin_on_reference_ns;
    source.placed_by = clock.uncertainty_ns == 0 ? "the reference clock itself"
                                                 : fmt::format("measured offset to the {} (±{:.1f} µs)", reference,
                                                               static_cast<double>(clock.uncertainty_ns) / 1e3);
  } else {
    source.start_ns = clock.origin_unix_ns + reference_minus_unix;
    const std::string measured = clock.reference == kTraceSystemClock
                                     ? "it measured no clock offset"
                                     : fmt::format("it measured its offset to the {} instead", clock.reference);
    source.placed_by = fmt::format("system clock ({}): as close as the hosts' clocks agree (NTP)", measured);
  }
}

// Sets every source's start_ns on one axis: the reference clock of the first source that has a
// clock record (see trace_merge.h), reached through the system clock by those not measured on it.
void place(std::vector<Source>& sources, std::vector<std::string>& warnings) {
  const auto first = std::find_if(sources.begin(), sources.end(), [](const Source& s) { return s.clock.known; });
  const std::string reference = first != sources.end() ? first->clock.reference : kTraceSystemClock;
  const Source* anchor = find_anchor(sources, reference);
  const int64_t reference_minus_unix =
      anchor != nullptr ? anchor->clock.origin_on_reference_ns - anchor->clock.origin_unix_ns : 0;
  std::optional<int64_t> earliest;
  for (Source& source : sources) {
    if (!source.clock.known) continue;
    place_on(source, reference, reference_minus_unix);
    earliest = std::min(earliest.value_or(source.start_ns), source.start_ns);
  }
  for (Source& source : sources) {
    if (source.clock.known) continue;
    warnings.push_back(fmt::format("{}: no clock record (written by an older dtbench?); its times are taken as they "
                                   "are, from the run's start",
                                   source.path.string()));
    source.start_ns = earliest.value_or(0);
    source.placed_by = "none: no clock record";
  }
}

// The events of `source` moved by `shift_ns`, with their pids renumbered from `next_pid` and, when
// `prefix` is not empty, their process names prefixed with it; appended to `out`.
int64_t append_events(const Source& source, int64_t shift_ns, const std::string& prefix, int& next_pid,
                      std::string& out, json& pids_given) {
  std::map<int64_t, int> pids;
  int64_t count = 0;
  for (json event : source.events) {
    if (!event.is_object()) continue;
    if (event.contains("pid") && event["pid"].is_number_integer()) {
      const auto [slot, fresh] = pids.try_emplace(event["pid"].get<int64_t>(), next_pid);
      if (fresh) pids_given.push_back(next_pid++);
      event["pid"] = slot->second;
    }
    const bool metadata = event.value("ph", "") == "M";
    if (metadata && event.value("name", "") == "process_sort_index") event["args"]["sort_index"] = event["pid"];
    if (metadata && !prefix.empty() && event.value("name", "") == "process_name" && event.contains("args")) {
      event["args"]["name"] = prefix + event["args"].value("name", "");
    }
    if (!metadata && event.contains("ts") && event["ts"].is_number()) {
      // In integer nanoseconds, so that "12.345" µs comes out as written, not as 12.345000000001.
      const int64_t ts_ns = std::llround(event["ts"].get<double>() * 1e3) + shift_ns;
      event["ts"] = static_cast<double>(ts_ns) / 1e3;
    }
    out += out.back() == '[' ? "\n" : ",\n";
    out += event.dump();
    ++count;
  }
  return count;
}

std::optional<std::pair<int, int64_t>> trace_file_order(const fs::path& path) {
  static const std::regex pattern(R"(trace-(server-)?(\d+)\.json)");
  std::smatch match;
  const std::string name = path.filename().string();
  if (!std::regex_match(name, match, pattern)) return std::nullopt;
  return std::pair{match[1].matched ? 1 : 0, std::stoll(match[2].str())};
}

}  // namespace

std::vector<fs::path> find_trace_files(const fs::path& dir) {
  if (fs::is_regular_file(dir)) return {dir};
  std::vector<std::pair<std::pair<int, int64_t>, fs::path>> found;
  // The run's own files, and its servers' where a sweep put them (<run>/servers).
  for (const fs::path& folder : {dir, dir / "servers"}) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(folder, error)) {
      if (!entry.is_regular_file()) continue;
      if (const auto order = trace_file_order(entry.path())) found.emplace_back(*order, entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> files;
  for (auto& [order, path] : found) files.push_back(std::move(path));
  return files;
}

TraceMergeResult merge_traces(const std::vector<TraceRun>& runs, const fs::path& out) {
  TraceMergeResult result;
  std::string text = "{\"traceEvents\":[";
  json described = json::array();
  int next_pid = 0;
  for (const TraceRun& run : runs) {
    std::vector<Source> sources;
    for (const fs::path& file : run.files) {
      auto events = read_trace_events(file, result.warnings);
      if (!events) continue;
      sources.push_back({.path = file, .events = std::move(*events)});
      sources.back().clock = clock_of(sources.back().events);
    }
    if (sources.empty()) continue;
    place(sources, result.warnings);
    const int64_t run_start =
        std::min_element(sources.begin(), sources.end(), [](const Source& a, const Source& b) {
          return a.start_ns < b.start_ns;
        })->start_ns;
    const std::string prefix = runs.size() > 1 ? run.name + ": " : "";
    json run_json = {{"name", run.name}, {"sources", json::array()}};
    for (const Source& source : sources) {
      json pids = json::array();
      result.events += append_events(source, source.start_ns - run_start, prefix, next_pid, text, pids);
      run_json["sources"].push_back({{"file", source.path.string()},
                                     {"pids", pids},
                                     {"clock", source.clock.reference},
                                     {"placed_by", source.placed_by},
                                     {"starts_at_us", static_cast<double>(source.start_ns - run_start) / 1e3}});
      ++result.sources;
    }
    described.push_back(std::move(run_json));
  }
  if (result.sources == 0) return result;
  text += "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":";
  text += json{{"merged_by", "dtbench report"}, {"runs", described}}.dump();
  text += "}\n";
  write_file_atomically(out, text);
  return result;
}

}  // namespace dtbench
