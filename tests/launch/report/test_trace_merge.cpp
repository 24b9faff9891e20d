// Merging the trace files of a run's processes into one timeline (launch/report/trace_merge.h): files a
// crash left unclosed or cut mid-event are repaired with a warning, and every file is moved onto
// the reference clock by the offset it recorded — or by the system clock when it has none.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/profile/trace_writer.h"
#include "launch/report/trace_merge.h"
#include "launch/report/trace_read.h"
#include "support/cli_helpers.h"
#include "support/trace_checks.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::check_tracks;
using testing::process_names;

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A trace as a process writes it: its process_name with the clock record, then one span at `ts`.
std::string trace_text(int pid, const std::string& name, const json& clock, double ts, double dur) {
  const json events = {
      {{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}, {"clock", clock}}}},
      {{"name", "work"}, {"ph", "X"}, {"pid", pid}, {"tid", 0}, {"ts", ts}, {"dur", dur}, {"args", json::object()}}};
  return events.dump();
}

json clock_record(const std::string& reference, int64_t origin_unix_ns, int64_t origin_steady_ns, int64_t offset_ns,
                  int64_t uncertainty_ns) {
  return {{"reference", reference},       {"origin_unix_ns", origin_unix_ns}, {"origin_steady_ns", origin_steady_ns},
          {"offset_ns", offset_ns},       {"uncertainty_ns", uncertainty_ns}, {"method", "test"}};
}

// The one "work" span of each process, by process name.
std::map<std::string, double> work_starts(const json& trace) {
  const auto names = process_names(trace["traceEvents"]);
  std::map<std::string, double> starts;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X" && event["name"] == "work") starts[names.at(event["pid"].get<int64_t>())] = event["ts"];
  }
  return starts;
}

TEST(TraceRead, RepairsAFileLeftUnclosedOrCutMidEvent) {
  const std::string head = "[\n{\"name\":\"a\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":1,\"dur\":2}"
                           ",\n{\"name\":\"b\",\"ph\":\"X\",\"pid\":0,\"tid\":0,\"ts\":3,\"dur\":1}";
  std::vector<std::string> warnings;
  EXPECT_EQ(parse_trace_events(head + "\n]\n", "closed", warnings)->size(), 2u);
  EXPECT_TRUE(warnings.empty());

  EXPECT_EQ(parse_trace_events(head, "unclosed", warnings)->size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("unclosed: no closing ']'"), std::string::npos) << warnings[0];

  warnings.clear();
  const auto torn = parse_trace_events(head + ",\n{\"name\":\"c\",\"ph\":\"X\",\"pi", "torn", warnings);
  ASSERT_TRUE(torn);
  EXPECT_EQ(torn->size(), 2u);
  EXPECT_EQ(torn->back()["name"], "b");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("torn: its last event was cut off"), std::string::npos) << warnings[0];

  warnings.clear();
  EXPECT_EQ(parse_trace_events(head + ",\n", "cut after a comma", warnings)->size(), 2u);
  EXPECT_EQ(parse_trace_events("{\"traceEvents\":[{\"ph\":\"M\"}]}", "object form", warnings)->size(), 1u);
  warnings.clear();
  EXPECT_FALSE(parse_trace_events("not a trace", "garbage", warnings));
  EXPECT_FALSE(parse_trace_events("{\"a\":1}", "other JSON", warnings));
  EXPECT_EQ(warnings.size(), 2u);
}

class TraceMerge : public testing::TempDirTest {};

TEST_F(TraceMerge, PlacesEveryFileOnTheReferenceClock) {
  constexpr int64_t kUnix = 1'700'000'000'000'000'000;  // rank 0's origin on the system clock
  constexpr int64_t kSteady = 5'000'000'000;            // ... and on its steady clock
  // Rank 1 started 2 s after rank 0, and its steady clock reads 7 ms more than rank 0's.
  write_text(root_ / "trace-0.json",
             trace_text(0, "worker 0", clock_record("rank 0 steady clock", kUnix, kSteady, 0, 0), 10.0, 5.0));
  write_text(root_ / "trace-1.json",
             trace_text(1, "worker 1",
                        clock_record("rank 0 steady clock", kUnix + 2'000'000'000 + 123'000,  // its NTP is off: unused
                                     kSteady + 2'000'000'000 + 7'000'000, 7'000'000, 20'000),
                        10.0, 5.0));
  // A server measured against nothing: placed by its system clock, 500 ms after rank 0's origin.
  write_text(root_ / "trace-server-1.json",
             trace_text(1001, "server 1", {{"reference", "system clock"}, {"origin_unix_ns", kUnix + 500'000'000},
                                           {"origin_steady_ns", 42}},
                        1.5, 1.0));
  const auto files = find_trace_files(root_);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files.back().filename(), "trace-server-1.json");

  const TraceMergeResult result = merge_traces({{"run", files}}, root_ / "trace.json");
  EXPECT_EQ(result.sources, 3);
  EXPECT_TRUE(result.warnings.empty());
  const json trace = testing::read_json(root_ / "trace.json");
  check_tracks(trace["traceEvents"]);
  const auto names = process_names(trace["traceEvents"]);
  EXPECT_EQ(names, (std::map<int64_t, std::string>{{0, "worker 0"}, {1, "worker 1"}, {2, "server 1"}}));
  const auto starts = work_starts(trace);
  EXPECT_DOUBLE_EQ(starts.at("worker 0"), 10.0);
  EXPECT_DOUBLE_EQ(starts.at("worker 1"), 2'000'010.0);
  EXPECT_DOUBLE_EQ(starts.at("server 1"), 500'001.5);
  const auto& sources = trace["otherData"]["runs"][0]["sources"];
  ASSERT_EQ(sources.size(), 3u);
  EXPECT_EQ(sources[0]["placed_by"], "the reference clock itself");
  EXPECT_NE(sources[1]["placed_by"].get<std::string>().find("measured offset"), std::string::npos);
  EXPECT_NE(sources[2]["placed_by"].get<std::string>().find("system clock"), std::string::npos);
}

TEST_F(TraceMerge, KeepsWhatACrashedWriterLeftAndDropsItsTornLastEvent) {
  const auto origin = std::chrono::steady_clock::now();
  const fs::path path = root_ / "trace-0.json";
  {
    TraceWriter writer(path, {.rank = 0}, origin);
    for (int64_t step = 0; step < 3; ++step) {
      const auto start = origin + std::chrono::milliseconds(10 * step);
      writer.record_step(1, step, step,
                         {start, start + std::chrono::milliseconds(1), start + std::chrono::milliseconds(2),
                          start + std::chrono::milliseconds(3), start + std::chrono::milliseconds(5), 1e-3, 1e-3});
    }
  }  // never finished: no "]"
  fs::resize_file(path, fs::file_size(path) - 20);  // and its last event half written
  const TraceMergeResult result = merge_traces({{"run", {path}}}, root_ / "trace.json");
  EXPECT_EQ(result.sources, 1);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("cut off"), std::string::npos) << result.warnings[0];
  const json trace = testing::read_json(root_ / "trace.json");
  const auto tracks = check_tracks(trace["traceEvents"]);
  EXPECT_EQ(tracks.at({0, 0}).size(), 3u * 6 - 1);  // 3 steps of 6 spans, less the torn one
}

TEST_F(TraceMerge, LaysSeveralRunsOverEachOtherFromZero) {
  fs::create_directories(root_ / "a");
  fs::create_directories(root_ / "b");
  write_text(root_ / "a" / "trace-0.json",
             trace_text(0, "worker 0", clock_record("rank 0 steady clock", 1'000'000'000, 10, 0, 0), 3.0, 1.0));
  write_text(root_ / "b" / "trace-0.json",
             trace_text(0, "worker 0", clock_record("rank 0 steady clock", 9'000'000'000, 99, 0, 0), 4.0, 1.0));
  // A trace without a clock record (an older dtbench's) is taken as it is, with a warning.
  write_text(root_ / "b" / "trace-1.json",
             R"([{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"worker 1"}},)"
             R"({"name":"work","ph":"X","pid":1,"tid":0,"ts":6,"dur":1}])");
  const TraceMergeResult result = merge_traces(
      {{"a", find_trace_files(root_ / "a")}, {"b", find_trace_files(root_ / "b")}}, root_ / "trace.json");
  EXPECT_EQ(result.sources, 3);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("no clock record"), std::string::npos);
  const auto starts = work_starts(testing::read_json(root_ / "trace.json"));
  EXPECT_DOUBLE_EQ(starts.at("a: worker 0"), 3.0);
  EXPECT_DOUBLE_EQ(starts.at("b: worker 0"), 4.0);
  EXPECT_DOUBLE_EQ(starts.at("b: worker 1"), 6.0);
}

TEST_F(TraceMerge, WritesNothingWhenNoFileCanBeRead) {
  write_text(root_ / "trace-0.json", "garbage");
  const TraceMergeResult result = merge_traces({{"run", {root_ / "trace-0.json"}}}, root_ / "trace.json");
  EXPECT_EQ(result.sources, 0);
  EXPECT_EQ(result.warnings.size(), 1u);
  EXPECT_FALSE(fs::exists(root_ / "trace.json"));
}

}  // namespace
}  // namespace dtbench
