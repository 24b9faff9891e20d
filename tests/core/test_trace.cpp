// Chrome trace files: TraceWriter's events (phases on the loop's track, the transport's spans on
// the comm track, the clock record), a file left unclosed by a crash, and the trace a short
// training run leaves in its run directory.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/profile/clock_alignment.h"
#include "core/profile/trace_writer.h"
#include "support/cli_helpers.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;

using testing::read_text;
using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;

// A step starting `at` µs after `origin`: load 10, forward 20, backward 30, then 50 µs of sync
// holding comm 25 and update 15.
TraceStep make_step(Clock::time_point origin, int64_t at) {
  TraceStep step;
  step.load_start = origin + microseconds(at);
  step.forward_start = step.load_start + microseconds(10);
  step.backward_start = step.forward_start + microseconds(20);
  step.sync_start = step.backward_start + microseconds(30);
  step.step_end = step.sync_start + microseconds(50);
  step.comm_seconds = 25e-6;
  step.update_seconds = 15e-6;
  return step;
}

struct Span {
  double ts = 0, dur = 0;
};

// Checks the events of a parsed trace of `rank`; returns, per global step, its phase names.
std::map<int64_t, std::vector<std::string>> check_trace(const nlohmann::json& trace, int rank) {
  EXPECT_TRUE(trace.is_array());
  std::map<int64_t, Span> steps;
  std::map<int64_t, std::vector<std::pair<std::string, Span>>> phases;
  bool named = false;
  for (const auto& event : trace) {
    EXPECT_EQ(event["pid"], rank);
    if (event["ph"] == "M") {
      if (event["name"] == "process_name") {
        EXPECT_EQ(event["args"]["name"], "worker " + std::to_string(rank));
        named = true;
      }
      continue;
    }
    EXPECT_EQ(event["ph"], "X");
    const Span span{event["ts"].get<double>(), event["dur"].get<double>()};
    EXPECT_GE(span.ts, 0.0);
    EXPECT_GE(span.dur, 0.0);
    const auto name = event["name"].get<std::string>();
    const auto step = event["args"]["step"].get<int64_t>();
    if (name.rfind("step ", 0) == 0) {
      EXPECT_EQ(name, "step " + std::to_string(step));
      EXPECT_EQ(steps.count(step), 0u) << "step " << step << " twice";
      steps[step] = span;
    } else {
      phases[step].emplace_back(name, span);
    }
  }
  EXPECT_TRUE(named);
  std::map<int64_t, std::vector<std::string>> names;
  for (const auto& [step, spans] : phases) {
    EXPECT_EQ(steps.count(step), 1u) << "phases of step " << step << " without the step";
    const Span outer = steps[step];
    for (const auto& [name, span] : spans) {
      // Inside the step, allowing the rounding of both to the nanosecond.
      EXPECT_GE(span.ts, outer.ts - 1e-3) << name << " of step " << step;
      EXPECT_LE(span.ts + span.dur, outer.ts + outer.dur + 1e-3) << name << " of step " << step;
      names[step].push_back(name);
    }
  }
  return names;
}

const std::vector<std::string> kPhases = {"load", "forward", "backward", "comm", "update"};

class Trace : public testing::TempDirTest {};

// The other clock runs 5 s ahead of ours; each probe reads it somewhere inside its round trip.
// The shortest round trip wins, and the true offset lies within the stated uncertainty.
TEST(CristianEstimate, KeepsTheShortestRoundTripAndBoundsTheOffset) {
  CristianEstimate estimate;
  estimate.add_probe(0.0, 5.6, 1.0);    // read late in a 1 s round trip: midpoint says 5.1
  estimate.add_probe(10.0, 15.02, 10.1);  // a 0.1 s round trip: says 4.97
  estimate.add_probe(20.0, 25.1, 20.5);   // longer again: ignored
  EXPECT_NEAR(estimate.remote_minus_ours(), 4.97, 1e-12);
  EXPECT_NEAR(estimate.uncertainty(), 0.05, 1e-12);
  EXPECT_LE(std::abs(estimate.remote_minus_ours() - 5.0), estimate.uncertainty());
}

TEST_F(Trace, WritesNamedProcessAndNestedPhaseEvents) {
  const auto origin = Clock::now();
  const fs::path path = root_ / "trace-3.json";
  {
    TraceWriter writer(path, {.rank = 3, .steps_per_epoch = 2}, origin);
    for (int64_t step = 0; step < 4; ++step) writer.record_step(1, step, step, make_step(origin, 1000 * step));
    for (int64_t step = 0; step < 3; ++step) writer.record_step(2, step, 4 + step, make_step(origin, 9000 + 1000 * step));
    EXPECT_EQ(writer.steps_written(), 4);
    writer.finish();
  }
  const auto trace = nlohmann::json::parse(read_text(path));
  const auto names = check_trace(trace, 3);
  // The first two steps of each epoch: global steps 0, 1, 4, 5.
  ASSERT_EQ(names.size(), 4u);
  for (int64_t step : {0, 1, 4, 5}) EXPECT_EQ(names.at(step), kPhases) << step;

  // Exact placement of step 1: starts 1000 µs in; comm and update follow backward end to end.
  std::map<std::string, Span> step1;
  for (const auto& event : trace) {
    if (event["ph"] == "X" && event["args"]["step"] == 1) {
      step1[event["name"]] = {event["ts"].get<double>(), event["dur"].get<double>()};
      EXPECT_EQ(event["args"]["epoch"], 1);
    }
  }
  EXPECT_DOUBLE_EQ(step1["step 1"].ts, 1000.0);
  EXPECT_DOUBLE_EQ(step1["step 1"].dur, 110.0);
  EXPECT_DOUBLE_EQ(step1["backward"].ts, 1030.0);
  EXPECT_DOUBLE_EQ(step1["comm"].ts, 1060.0);
  EXPECT_DOUBLE_EQ(step1["comm"].dur, 25.0);
  EXPECT_DOUBLE_EQ(step1["update"].ts, 1085.0);
  EXPECT_DOUBLE_EQ(step1["update"].dur, 15.0);
}

TEST_F(Trace, ClampsSyncDurationsToTheStep) {
  const auto origin = Clock::now();
  const fs::path path = root_ / "trace-0.json";
  TraceWriter writer(path, {.rank = 0}, origin);
  TraceStep step = make_step(origin, 0);
  step.comm_seconds = 1.0;  // more than the step: clamped
  step.update_seconds = -1.0;
  writer.record_step(1, 0, 0, step);
  writer.finish();
  writer.finish();  // a second finish does nothing
  EXPECT_EQ(check_trace(nlohmann::json::parse(read_text(path)), 0).at(0), kPhases);
}

TEST_F(Trace, AnUnclosedFileParsesOnceClosed) {
  const auto origin = Clock::now();
  const fs::path path = root_ / "trace-1.json";
  auto writer = std::make_unique<TraceWriter>(path, TraceOptions{.rank = 1, .steps_per_epoch = 1000}, origin);
  // Many steps, more than one buffer's worth; mid-run, every step so far is already in the file.
  for (int64_t step = 0; step < 300; ++step) writer->record_step(1, step, step, make_step(origin, 200 * step));
  const std::string mid_run = read_text(path);
  EXPECT_FALSE(nlohmann::json::accept(mid_run));  // no closing bracket yet
  EXPECT_EQ(check_trace(nlohmann::json::parse(mid_run + "]"), 1).size(), 300u);
  writer->record_step(1, 300, 300, make_step(origin, 200 * 300));
  writer.reset();  // destroyed without finish(), as a crash would leave it
  EXPECT_EQ(check_trace(nlohmann::json::parse(read_text(path) + "]"), 1).size(), 301u);
}

TEST_F(Trace, WritesTheTransportsSpansOnTheCommTrackAndTheClock) {
  const auto origin = Clock::now();
  const fs::path path = root_ / "trace-1.json";
  TraceWriter writer(path,
                     {.rank = 1,
                      .clock = ClockAlignment{.reference = "rank 0 steady clock", .offset_seconds = 1.5e-3,
                                              .uncertainty_seconds = 2e-5, .method = "test"}},
                     origin);
  TraceStep step = make_step(origin, 1000);
  // Reduced during backward (1030..1060 µs) and after it.
  const auto at = [&](int64_t us) { return origin + microseconds(us); };
  const CommSpan spans[] = {{"allreduce bucket", 0, 4 << 20, at(1040), at(1040), at(1055)},
                            {"allreduce bucket", 1, 512 << 10, at(1050), at(1055), at(1070)}};
  step.comm_spans = spans;
  writer.record_step(1, 0, 7, step);
  writer.finish();

  const auto trace = nlohmann::json::parse(read_text(path));
  std::vector<nlohmann::json> comm;
  bool named = false;
  for (const auto& event : trace) {
    if (event["name"] == "process_name") {
      const auto& clock = event["args"]["clock"];
      EXPECT_EQ(clock["reference"], "rank 0 steady clock");
      EXPECT_EQ(clock["offset_ns"], 1'500'000);
      EXPECT_EQ(clock["uncertainty_ns"], 20'000);
      const auto origin_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(origin.time_since_epoch()).count();
      EXPECT_EQ(clock["origin_steady_ns"], origin_ns);
      EXPECT_GT(clock["origin_unix_ns"].get<int64_t>(), 1'600'000'000'000'000'000);  // after 2020
    }
    if (event["name"] == "thread_name" && event["tid"] == 1) named = event["args"]["name"] == "comm";
    if (event["ph"] == "X" && event["tid"] == 1) comm.push_back(event);
  }
  EXPECT_TRUE(named);
  ASSERT_EQ(comm.size(), 2u);
  EXPECT_EQ(comm[0]["name"], "allreduce bucket 0 (4.0 MiB)");
  EXPECT_DOUBLE_EQ(comm[0]["ts"].get<double>(), 1040.0);
  EXPECT_DOUBLE_EQ(comm[0]["dur"].get<double>(), 15.0);
  EXPECT_EQ(comm[0]["args"]["step"], 7);
  EXPECT_EQ(comm[1]["name"], "allreduce bucket 1 (512.0 KiB)");
  EXPECT_EQ(comm[1]["args"]["bytes"], 512 << 10);
}

// The parameter servers' shards go at once: their pieces overlap in time, and each overlapping
// piece goes on a comm track of its own (a trace viewer draws only nested slices on one track);
// one after another, they share the first.
TEST_F(Trace, CommPiecesThatRanAtOnceGoOnTracksOfTheirOwn) {
  const fs::path path = root_ / "trace-0.json";
  const auto origin = std::chrono::steady_clock::now();
  TraceWriter writer(path, {.rank = 0}, origin);
  TraceStep step = make_step(origin, 1000);
  const auto at = [&](int64_t us) { return origin + microseconds(us); };
  const CommSpan spans[] = {{"push", 1, 100, at(1010), at(1010), at(1020)},
                            {"pull", 1, 100, at(1020), at(1020), at(1040)},
                            {"push", 0, 100, at(1015), at(1015), at(1030)},   // beside shard 1's
                            {"pull", 0, 100, at(1030), at(1030), at(1050)},
                            {"push", 2, 100, at(1050), at(1050), at(1060)}};  // after both: track 1
  step.comm_spans = spans;
  writer.record_step(1, 0, 7, step);
  writer.finish();

  std::map<int, std::vector<std::string>> by_track;
  std::map<int, std::string> names;
  for (const auto& event : nlohmann::json::parse(read_text(path))) {
    const int tid = event["tid"].get<int>();
    if (event["name"] == "thread_name") names[tid] = event["args"]["name"];
    if (event["ph"] == "X" && tid >= 1) by_track[tid].push_back(event["name"]);
  }
  EXPECT_EQ(names[1], "comm");
  EXPECT_EQ(names[2], "comm 2");
  ASSERT_EQ(by_track.size(), 2u);
  EXPECT_EQ(by_track[1], (std::vector<std::string>{"push 1 (100.0 B)", "pull 1 (100.0 B)", "push 2 (100.0 B)"}));
  EXPECT_EQ(by_track[2], (std::vector<std::string>{"push 0 (100.0 B)", "pull 0 (100.0 B)"}));
}

TEST_F(Trace, WithoutAMeasuredOffsetTheClockIsTheSystemClock) {
  const fs::path path = root_ / "trace-0.json";
  TraceWriter(path, {.rank = 0}).finish();
  const auto trace = nlohmann::json::parse(read_text(path));
  EXPECT_EQ(trace[0]["args"]["clock"]["reference"], "system clock");
}

TEST_F(Trace, RecordingAStepIsCheap) {
  const auto origin = Clock::now();
  TraceWriter writer(root_ / "trace-0.json", {.rank = 0, .steps_per_epoch = 1 << 30}, origin);
  const TraceStep step = make_step(origin, 0);
  constexpr int kSteps = 20000;
  const auto start = Clock::now();
  for (int64_t i = 0; i < kSteps; ++i) writer.record_step(1, i, i, step);
  const double per_step = std::chrono::duration<double>(Clock::now() - start).count() / kSteps;
  writer.finish();
  std::printf("record_step: %.2f us per step (6 events, %.0f bytes)\n", per_step * 1e6,
              static_cast<double>(writer.bytes_written()) / kSteps);
  EXPECT_LT(per_step, 200e-6);
}

TEST_F(Trace, TrainingWritesTraceWithOneEventPerPhasePerStep) {
  const fs::path data = synth("idx", 512, 64);
  const fs::path runs = root_ / "runs";
  // 512 / 32 = 16 steps per epoch, 2 epochs; the first 10 of each are traced.
  const auto r = testing::dtbench("train --set model=mlp --set dataset.path=" + data.string() + " --set output=" +
                                  runs.string() + " --set epochs=2 --set batch=32 --set threads=1" +
                                  " --set profile.trace_steps=10");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path dir = testing::only_child(runs);
  ASSERT_TRUE(fs::exists(dir / "trace-0.json"));
  const auto report = testing::read_json(dir / "report.json");
  const auto names = check_trace(testing::read_json(dir / "trace-0.json"), 0);
  int64_t expected = 0;
  for (const auto& epoch : report["epochs"]) expected += std::min<int64_t>(10, epoch["steps"].get<int64_t>());
  EXPECT_EQ(expected, 20);
  EXPECT_EQ(static_cast<int64_t>(names.size()), expected);
  for (const auto& [step, phases] : names) EXPECT_EQ(phases, kPhases) << step;
  // Epoch 2's traced steps are global steps 16..25.
  EXPECT_EQ(names.count(15), 0u);
  EXPECT_EQ(names.count(16), 1u);
}

TEST_F(Trace, TraceStepsZeroWritesNoTrace) {
  const fs::path data = synth("idx", 128, 32);
  const fs::path runs = root_ / "runs";
  const auto r = testing::dtbench("train --set model=mlp --set dataset.path=" + data.string() + " --set output=" +
                                  runs.string() + " --set steps=2 --set batch=32 --set profile.trace_steps=0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(testing::only_child(runs) / "trace-0.json"));
}

}  // namespace
}  // namespace dtbench
