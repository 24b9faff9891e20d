#pragma once
// What every Chrome trace dtbench writes must satisfy, checked track by track (a track is one
// (pid, tid)): begin/end events pair up, complete events have dur >= 0, and spans nest — each one
// either holds the next or ends before it starts — as the viewers need to draw them as a stack.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench::testing {

struct TraceSpan {
  std::string name;
  double ts = 0, dur = 0;  // µs
  nlohmann::json args;
  double end() const { return ts + dur; }
  bool overlaps(const TraceSpan& other) const { return ts < other.end() && other.ts < end(); }
};

using TrackId = std::pair<int64_t, int64_t>;  // pid, tid

// The complete spans of every track, after checking the rules above.
inline std::map<TrackId, std::vector<TraceSpan>> check_tracks(const nlohmann::json& events) {
  std::map<TrackId, std::vector<TraceSpan>> tracks;
  std::map<TrackId, std::vector<std::string>> open;  // B events awaiting their E
  for (const auto& event : events) {
    const std::string phase = event.value("ph", "");
    if (phase == "M") continue;
    const TrackId track{event.value("pid", int64_t{-1}), event.value("tid", int64_t{-1})};
    if (phase == "B") {
      open[track].push_back(event.value("name", ""));
    } else if (phase == "E") {
      EXPECT_FALSE(open[track].empty()) << "an E without a B on pid " << track.first << " tid " << track.second;
      if (!open[track].empty()) open[track].pop_back();
    } else {
      EXPECT_EQ(phase, "X") << event.dump();
      TraceSpan span{event.value("name", ""), event["ts"].get<double>(), event["dur"].get<double>(),
                     event.value("args", nlohmann::json::object())};
      EXPECT_GE(span.ts, 0.0) << event.dump();
      EXPECT_GE(span.dur, 0.0) << event.dump();
      tracks[track].push_back(std::move(span));
    }
  }
  for (const auto& [track, names] : open) {
    EXPECT_TRUE(names.empty()) << names.size() << " B without an E on pid " << track.first << " tid " << track.second;
  }
  constexpr double kRounding = 1e-3;  // µs: ts and dur are written to the nanosecond
  for (auto& [track, spans] : tracks) {
    // Outer spans first: by start, then the longer first.
    std::sort(spans.begin(), spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;
    });
    std::vector<const TraceSpan*> stack;
    for (const TraceSpan& span : spans) {
      while (!stack.empty() && stack.back()->end() <= span.ts + kRounding) stack.pop_back();
      if (!stack.empty()) {
        EXPECT_LE(span.end(), stack.back()->end() + kRounding)
            << "'" << span.name << "' at " << span.ts << " overlaps the end of '" << stack.back()->name << "' at "
            << stack.back()->ts << " on pid " << track.first << " tid " << track.second;
      }
      stack.push_back(&span);
    }
  }
  return tracks;
}

// The names the trace gives processes (by pid) and threads (by pid and tid).
inline std::map<int64_t, std::string> process_names(const nlohmann::json& events) {
  std::map<int64_t, std::string> names;
  for (const auto& event : events) {
    if (event.value("ph", "") == "M" && event.value("name", "") == "process_name") {
      names[event["pid"].get<int64_t>()] = event["args"]["name"].get<std::string>();
    }
  }
  return names;
}

inline std::map<TrackId, std::string> thread_names(const nlohmann::json& events) {
  std::map<TrackId, std::string> names;
  for (const auto& event : events) {
    if (event.value("ph", "") == "M" && event.value("name", "") == "thread_name") {
      names[{event["pid"].get<int64_t>(), event["tid"].get<int64_t>()}] = event["args"]["name"].get<std::string>();
    }
  }
  return names;
}

}  // namespace dtbench::testing
