// The run's timeline end to end: workers (and parameter servers) write their traces as they go,
// `dtbench report` merges them into one trace.json, and on it the processes line up — two ranks
// reduce the same bucket at the same time, a server applies an update inside the step that pushed
// it. Checked on every track: valid JSON, paired begin/end, complete spans that nest.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli_helpers.h"
#include "support/trace_checks.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Background;
using testing::check_tracks;
using testing::only_child;
using testing::Outcome;
using testing::shell;
using testing::TraceSpan;

// step -> its span, from one track.
std::map<int64_t, TraceSpan> steps_of(const std::vector<TraceSpan>& spans) {
  std::map<int64_t, TraceSpan> steps;
  for (const auto& span : spans) {
    if (span.name.rfind("step ", 0) == 0) steps[span.args["step"].get<int64_t>()] = span;
  }
  return steps;
}

// The clock uncertainty a process recorded, in µs (0 for the reference itself).
double uncertainty_us(const json& events, int64_t pid) {
  for (const auto& event : events) {
    if (event["ph"] == "M" && event["name"] == "process_name" && event["pid"] == pid) {
      return event["args"]["clock"].value("uncertainty_ns", int64_t{0}) / 1e3;
    }
  }
  return 0.0;
}

class Timeline : public testing::MpirunTest {};

TEST_F(Timeline, TwoRanksReduceEachBucketTogetherOnTheMergedTimeline) {
  const fs::path data = synth("idx", 512, 64);
  // mlp's gradients in 0.01 MiB buckets: two (its last layers; its first, 0.4 MiB), the first reduced
  // during backward.
  const Outcome run = shell(testing::mpirun(2) + " train --set model=mlp --set dataset.path=" + data.string() +
                            " --set output=" + (root_ / "runs").string() +
                            " --set steps=8 --set batch=32 --set threads=1 --set transport=ring"
                            " --set comm.overlap=true --set comm.bucket_mb=0.01 --set profile.trace_steps=6");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const fs::path dir = only_child(root_ / "runs");
  const Outcome report = testing::dtbench("report " + dir.string());
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("trace.json (2 traces"), std::string::npos) << report.output;

  const json trace = testing::read_json(dir / "trace.json");  // throws unless valid JSON
  const json& events = trace["traceEvents"];
  const auto tracks = check_tracks(events);
  EXPECT_EQ(testing::process_names(events), (std::map<int64_t, std::string>{{0, "worker 0"}, {1, "worker 1"}}));
  const auto threads = testing::thread_names(events);
  for (int64_t pid : {0, 1}) {
    EXPECT_EQ(threads.at({pid, 0}), "training loop");
    EXPECT_EQ(threads.at({pid, 1}), "comm");
    ASSERT_TRUE(tracks.count({pid, 0}) && tracks.count({pid, 1})) << "pid " << pid;
  }
  const auto buckets = testing::read_json(dir / "report.json")["transport_summary"]["buckets"].get<size_t>();
  ASSERT_GT(buckets, 1u);
  const auto steps0 = steps_of(tracks.at({0, 0})), steps1 = steps_of(tracks.at({1, 0}));
  ASSERT_EQ(steps0.size(), 6u);  // the window: steps 0..5 of 8
  ASSERT_EQ(steps1.size(), 6u);

  // Each step synchronises the ranks, so their spans of it overlap; within it each bucket is one
  // ring allreduce, which neither rank can finish before the other has started it. Rank 1 is placed
  // by its measured offset to rank 0's clock, right to within the uncertainty it recorded (half the
  // best round trip, Cristian's bound): on a loaded machine that can exceed a 70 µs bucket.
  double uncertainty_us = -1;
  for (const json& event : testing::read_json(dir / "trace-1.json")) {
    if (event.value("name", "") != "process_name") continue;
    uncertainty_us = event["args"]["clock"]["uncertainty_ns"].get<double>() / 1e3;
  }
  ASSERT_GT(uncertainty_us, 0) << "trace-1.json records no measured clock offset";
  const auto overlaps = [&](const TraceSpan& a, const TraceSpan& b) {
    const double slack = uncertainty_us + 0.01;  // and the traces' 0.01 µs rounding
    return a.ts < b.end() + slack && b.ts < a.end() + slack;
  };
  std::map<std::pair<int64_t, std::string>, TraceSpan> bucket0;
  for (const auto& span : tracks.at({0, 1})) bucket0[{span.args["step"].get<int64_t>(), span.name}] = span;
  int64_t matched = 0;
  for (const auto& span : tracks.at({1, 1})) {
    EXPECT_EQ(span.name.rfind("allreduce bucket ", 0), 0u) << span.name;
    const int64_t step = span.args["step"].get<int64_t>();
    const auto other = bucket0.find({step, span.name});
    ASSERT_NE(other, bucket0.end()) << span.name << " of step " << step << " only on rank 1";
    EXPECT_TRUE(overlaps(span, other->second))
        << span.name << " of step " << step << ": rank 1 " << span.ts << "+" << span.dur << " µs, rank 0 "
        << other->second.ts << "+" << other->second.dur << " µs, clocks aligned to ±" << uncertainty_us << " µs";
    ++matched;
  }
  EXPECT_EQ(matched, static_cast<int64_t>(6 * buckets));
  for (const auto& [step, span] : steps0) EXPECT_TRUE(overlaps(span, steps1.at(step))) << "step " << step;
}

TEST_F(Timeline, ParameterServerUpdatesLieInsideTheStepsThatPushedThem) {
  const fs::path data = synth("idx", 256, 32);
  const std::string blueprint =
      " --set model=mlp --set dataset.path=" + data.string() + " --set steps=6 --set batch=32 --set threads=1";
  Background server(std::string(DTBENCH_BINARY) + " ps --listen 127.0.0.1:0 --shard 0 --shards 1 --workers 1" +
                    " --mode sync --timeout-s 20 --trace-updates 4 --output " + (root_ / "servers").string() +
                    blueprint);
  const std::string address = server.wait_for(std::regex("listening on (\\S+)"));
  ASSERT_FALSE(address.empty()) << server.output();
  const Outcome worker = testing::dtbench("train" + blueprint + " --set transport=ps-sync --set ps.servers=" + address +
                                          " --set ps.auth_token_file=" + (root_ / "servers" / "ps.token").string() +
                                          " --set output=" + (root_ / "runs").string() + " --rank 0 --world 1");
  ASSERT_EQ(worker.exit_code, 0) << worker.output;
  ASSERT_EQ(server.finish(), 0) << server.output();
  ASSERT_TRUE(fs::exists(root_ / "servers" / "trace-server-0.json"));

  const fs::path dir = only_child(root_ / "runs");
  const Outcome report = testing::dtbench("report " + dir.string() + " --traces " + (root_ / "servers").string());
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const json trace = testing::read_json(dir / "trace.json");
  const json& events = trace["traceEvents"];
  const auto tracks = check_tracks(events);
  EXPECT_EQ(testing::process_names(events), (std::map<int64_t, std::string>{{0, "worker 0"}, {1, "server 0"}}));
  EXPECT_EQ(testing::thread_names(events).at({1, 0}), "update thread");
  EXPECT_EQ(trace["otherData"]["runs"][0]["sources"][0]["clock"], "server 0 steady clock");

  // Update v (producing version v) is the server's part of step v-1: it lies within that step.
  const auto steps = steps_of(tracks.at({0, 0}));
  const double tolerance = uncertainty_us(events, 0);
  int updates = 0;
  for (const auto& span : tracks.at({1, 0})) {
    if (span.name.rfind("update ", 0) != 0) continue;
    const int64_t version = span.args["version"].get<int64_t>();
    const TraceSpan& step = steps.at(version - 1);
    EXPECT_GE(span.ts, step.ts - tolerance) << span.name;
    EXPECT_LE(span.end(), step.end() + tolerance) << span.name;
    ++updates;
  }
  EXPECT_EQ(updates, 4);  // --trace-updates

  // The worker's comm track: push, wait for the servers, pull, in that order inside each step; one
  // server's shard is one bucket ("push 0 (…)", "wait for servers 0", "pull 0 (…)").
  ASSERT_TRUE(tracks.count({0, 1})) << "no comm track for the worker";
  std::vector<const TraceSpan*> pushes, waits, pulls;
  for (const auto& span : tracks.at({0, 1})) {
    if (std::regex_match(span.name, std::regex(R"(push( 0)? \(.*\))"))) pushes.push_back(&span);
    if (std::regex_match(span.name, std::regex("wait for servers( 0)?"))) waits.push_back(&span);
    if (std::regex_match(span.name, std::regex(R"(pull( 0)? \(.*\))"))) pulls.push_back(&span);
  }
  ASSERT_EQ(steps.size(), 6u);
  ASSERT_EQ(pushes.size(), steps.size());
  ASSERT_EQ(waits.size(), steps.size());
  ASSERT_EQ(pulls.size(), steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const TraceSpan& step = steps.at(static_cast<int64_t>(i));
    EXPECT_GE(pushes[i]->ts, step.ts);
    EXPECT_LE(pushes[i]->end(), waits[i]->ts + 0.01);  // µs: each end is rounded apart
    EXPECT_LE(waits[i]->end(), pulls[i]->ts + 0.01);
    EXPECT_LE(pulls[i]->end(), step.end() + 0.01);
  }
}

}  // namespace
}  // namespace dtbench
