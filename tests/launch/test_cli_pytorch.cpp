// The PyTorch engine (engine: pytorch) through dtbench's own launcher and run directory: from the
// same initial weights and batches it trains as dtbench's engine does (the tolerances are
// pytorch/README.md's: 1e-4 on every weight after a step, 1 % on the loss), two workers under
// mpirun with ddp end with identical weights, and what the engine cannot do is a clear exit 2.
#include <gtest/gtest.h>

#include <chrono>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "support/cli_helpers.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;

using testing::dtbench;
using testing::Outcome;
using testing::read_json;
using testing::read_weights;

bool torch_installed() { return testing::shell("/usr/bin/python3 -c 'import torch'").exit_code == 0; }

class CliPytorch : public testing::MpirunTest {
 protected:
  void SetUp() override {
    MpirunTest::SetUp();
    if (!torch_installed()) GTEST_SKIP() << "python3-torch is not installed (scripts/install-deps.sh installs it)";
  }
  std::string lenet(const fs::path& data, int steps) const {
    return " --set model=lenet5 --set dataset.path=" + data.string() + " --set steps=" + std::to_string(steps) +
           " --set batch=64 --set threads=1 --set seed=3 --set optimizer.lr=0.02 --set optimizer.momentum=0.9" +
           " --set save_weights=true";
  }
};

double largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0.0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  return worst;
}

TEST_F(CliPytorch, BothEnginesTrainTheSameWeightsFromTheSameStart) {
  const fs::path data = synth("idx", 2560, 256);
  for (const int steps : {1, 20}) {
    const fs::path runs = root_ / ("steps-" + std::to_string(steps));
    const Outcome ours = dtbench("train" + lenet(data, steps) + " --set output=" + (runs / "dtbench").string());
    ASSERT_EQ(ours.exit_code, 0) << ours.output;
    // Both profiles train the same weights (threads, loader and zeroing change no arithmetic here).
    const std::string profile = steps == 1 ? "defaults" : "matched";
    const Outcome torch = dtbench("train" + lenet(data, steps) + " --set engine=pytorch --set pytorch.profile=" +
                                  profile + " --set output=" + (runs / "pytorch").string());
    ASSERT_EQ(torch.exit_code, 0) << torch.output;
    const fs::path a = testing::only_child(runs / "dtbench"), b = testing::only_child(runs / "pytorch");
    const double worst = largest_difference(read_weights(a / "weights.bin"), read_weights(b / "weights.bin"));
    EXPECT_LT(worst, steps == 1 ? 1e-4 : 1e-3) << "after " << steps << " step(s)";
    const auto theirs = read_json(b / "report.json");
    EXPECT_EQ(theirs["status"], "complete");
    EXPECT_EQ(theirs["provenance"]["engine"]["name"], "pytorch");
    // The run states the profile, with its settings in one line, in report.json and in its summary.
    EXPECT_EQ(theirs["provenance"]["engine"]["profile"], profile);
    const std::string settings = theirs["provenance"]["engine"]["settings"].get<std::string>();
    EXPECT_EQ(settings.rfind("pytorch " + profile + ": threads 1,", 0), 0u) << settings;
    EXPECT_NE(torch.output.find(settings), std::string::npos) << torch.output;
    const auto& epoch = theirs["epochs"].at(0);
    EXPECT_EQ(epoch["steps"], steps);
    double phase_sum = 0.0;
    for (const char* phase : {"load", "forward", "backward", "comm", "update", "other"}) {
      EXPECT_GE(epoch["phases"][phase]["sum_s"].get<double>(), 0.0) << phase;
      phase_sum += epoch["phases"][phase]["sum_s"].get<double>();
    }
    EXPECT_NEAR(phase_sum, epoch["phases"]["step"]["sum_s"].get<double>(), 1e-6);
    EXPECT_FALSE(fs::exists(b / "pytorch-0")) << "the worker's input folder outlived a complete run";
    // Its timeline, as dtbench's: a span per traced step holding one per phase.
    const std::string trace = testing::read_text(b / "trace-0.json");
    EXPECT_NE(trace.find("\"step " + std::to_string(steps - 1) + "\""), std::string::npos) << trace.substr(0, 400);
    EXPECT_NE(trace.find("\"forward\""), std::string::npos) << trace.substr(0, 400);
    const double loss = read_json(a / "report.json")["epochs"].at(0)["train_loss"].get<double>();
    EXPECT_NEAR(epoch["train_loss"].get<double>() / loss, 1.0, 0.01) << "the mean loss of " << steps << " step(s)";
  }
}

// dataset.augment: the PyTorch worker crops and flips each sample as dtbench's loader drew it, so the
// two engines still train on the same images — and a worker that did not would be caught here.
TEST_F(CliPytorch, AugmentedTrainingCropsAndFlipsTheSameImagesInBothEngines) {
  const fs::path data = synth("cifar10", 512, 64);
  const std::string run = " --set model=lenet5 --set dataset.format=cifar10 --set dataset.path=" + data.string() +
                          " --set steps=2 --set batch=32 --set threads=1 --set seed=5 --set optimizer.lr=0.05" +
                          " --set save_weights=true";
  const auto weights = [&](const std::string& name, const std::string& settings) {
    const Outcome r = dtbench("train" + run + settings + " --set output=" + (root_ / name).string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return read_weights(testing::only_child(root_ / name) / "weights.bin");
  };
  const auto ours = weights("dtbench", " --set dataset.augment=true");
  const auto theirs = weights("pytorch", " --set dataset.augment=true --set engine=pytorch");
  EXPECT_LT(largest_difference(ours, theirs), 1e-4);
  const auto unaugmented = weights("pytorch-plain", " --set dataset.augment=false --set engine=pytorch");
  EXPECT_GT(largest_difference(ours, unaugmented), 1e-3) << "the crops changed nothing: the test could not tell";
}

TEST_F(CliPytorch, TwoDdpWorkersUnderMpirunEndWithIdenticalWeights) {
  const fs::path data = synth("idx", 2560, 256);
  const Outcome r = testing::shell(testing::mpirun(2) + " train" + lenet(data, 10) +
                                   " --set engine=pytorch --set transport=ddp --set comm.bucket_mb=0.05 --set output=" +
                                   (root_ / "runs").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path run = testing::only_child(root_ / "runs");
  const auto first = read_json(run / "worker-0.json"), second = read_json(run / "worker-1.json");
  const std::string checksum = first["provenance"]["engine"]["weights_checksum"].get<std::string>();
  EXPECT_FALSE(checksum.empty());
  EXPECT_EQ(second["provenance"]["engine"]["weights_checksum"], checksum);
  const auto report = read_json(run / "report.json");
  EXPECT_EQ(report["transport"], "ddp");
  EXPECT_EQ(report["workers"]["per_worker"].size(), 2u);
  // DDP reduced every step's gradient: the comm it could not hide is part of each step, and all of
  // it (comm_total) at least that.
  const auto& split = report["epochs"].at(0)["comm_split"];
  EXPECT_GT(split["comm_total_s"].get<double>(), 0.0) << split;
  EXPECT_GE(split["comm_total_s"].get<double>(), report["epochs"].at(0)["phases"]["comm"]["sum_s"].get<double>());
  // Each bucket as the worker's DDP hook timed it, in dtbench's terms: LeNet-5's 247 KB in 50 KB
  // buckets are 2 from the second step on (DDP reduces the first step's gradient as one bucket).
  const auto& epoch = first["epochs"].at(0);
  ASSERT_EQ(epoch["comm_timings"].size(), 2u) << epoch.dump(2);
  for (const auto& bucket : epoch["comm_timings"]) {
    EXPECT_EQ(bucket["what"], "allreduce bucket");
    EXPECT_GE(bucket["steps"].get<int>(), epoch["steps"].get<int>() - 1) << bucket;
    EXPECT_GE(bucket["ready_s"].get<double>(), 0.0) << bucket;
    EXPECT_LE(bucket["ready_s"].get<double>(), bucket["start_s"].get<double>()) << bucket;
    EXPECT_LT(bucket["start_s"].get<double>(), bucket["end_s"].get<double>()) << bucket;
  }
  // ... and on the timeline, as dtbench's buckets are.
  EXPECT_NE(testing::read_text(run / "trace-0.json").find("allreduce bucket 1"), std::string::npos);
  // `dtbench report` names the engine where it is not dtbench's.
  const Outcome shown = dtbench("report " + run.string());
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("pytorch ddp x2"), std::string::npos) << shown.output;
  // ... and the profile PyTorch ran under, in the report's provenance.
  EXPECT_NE(testing::read_text(run / "report.md").find("pytorch matched: threads 1,"), std::string::npos);
}

// A sweep with the engine as an axis: results.json names each configuration's engine, and the
// report's verdict ranks PyTorch DDP beside dtbench's ring, labelled as a run's own report does.
TEST_F(CliPytorch, ASweepOverEngineAndTransportRendersAVerdictComparingThem) {
  const fs::path data = synth("idx", 512, 64);
  const fs::path file = root_ / "engines.yaml";
  std::ofstream(file) << "name: engines\nworkers: 2\nrepetitions: 1\nwarmup: 0\n"
                      << "set: {model: lenet5, steps: 4, batch: 32, threads: 1, profile.trace_steps: 0, dataset.path: "
                      << data.string() << "}\naxes:\n  configuration:\n"
                      << "    - {label: ring, engine: dtbench, transport: ring}\n"
                      << "    - {label: pytorch-ddp, engine: pytorch, transport: ddp}\n"
                      << "    - {label: pytorch-ddp-defaults, engine: pytorch, transport: ddp, pytorch.profile: defaults}\n"
                      << "compare: {axis: configuration, baseline: ring, metric: step_ms}\n"
                      << "output: " << (root_ / "out").string() << "\n";
  const Outcome r = dtbench("sweep " + file.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto results = read_json(root_ / "out" / "engines" / "results.json");
  ASSERT_EQ(results["configurations"].size(), 3u);
  EXPECT_EQ(results["configurations"][0]["engine"], "dtbench");
  for (const int c : {1, 2}) {
    EXPECT_EQ(results["configurations"][c]["engine"], "pytorch");
    EXPECT_EQ(results["configurations"][c]["complete"], 1) << results["configurations"][c];
  }
  const std::string report = testing::read_text(root_ / "out" / "engines" / "report" / "report.md");
  const size_t verdict = report.find("## Verdict");
  ASSERT_NE(verdict, std::string::npos) << report;
  const std::string findings = report.substr(verdict, report.find("\n## ", verdict + 1) - verdict);
  EXPECT_NE(findings.find("ring x2"), std::string::npos) << findings;
  EXPECT_NE(findings.find("pytorch ddp x2"), std::string::npos) << findings;
  // "pytorch-ddp" is the label's own words, not said twice: every "@pytorch-ddp" is the defaults'.
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = findings.find(what); at != std::string::npos; at = findings.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("@pytorch-ddp"), count("@pytorch-ddp-defaults")) << findings;
  // Two PyTorch rows, one per profile, and the report says what each profile set.
  EXPECT_NE(findings.find("pytorch ddp x2 @pytorch-ddp-defaults"), std::string::npos) << findings;
  EXPECT_NE(report.find("pytorch defaults: threads 1,"), std::string::npos) << report.substr(0, 2000);
  EXPECT_NE(report.find("pytorch matched: threads 1,"), std::string::npos) << report.substr(0, 2000);
}

TEST_F(CliPytorch, WithoutTorchOrWithATransportItLacksTheEngineSaysWhatIsMissing) {
  const fs::path data = synth("idx", 640, 64);
  // A python that cannot import torch: Debian's dist-packages are not on its path without `site`.
  const fs::path python = root_ / "python-without-torch";
  std::ofstream(python) << "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n";
  fs::permissions(python, fs::perms::owner_all);
  const Outcome missing = testing::shell("DTBENCH_PYTHON=" + python.string() + " " + DTBENCH_BINARY + " train" +
                                         lenet(data, 2) + " --set engine=pytorch --set output=" +
                                         (root_ / "runs").string());
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("python3-torch"), std::string::npos) << missing.output;
  // A worker that is not where dtbench looks for it: named, with how to point dtbench at it.
  const Outcome no_worker = testing::shell("DTBENCH_PYTORCH_DIR=" + (root_ / "nowhere").string() + " " +
                                           DTBENCH_BINARY + " train" + lenet(data, 2) +
                                           " --set engine=pytorch --set output=" + (root_ / "runs").string());
  EXPECT_NE(no_worker.exit_code, 0) << no_worker.output;
  EXPECT_NE(no_worker.output.find((root_ / "nowhere" / "worker.py").string()), std::string::npos) << no_worker.output;
  EXPECT_NE(no_worker.output.find("DTBENCH_PYTORCH_DIR"), std::string::npos) << no_worker.output;
  const Outcome ring = dtbench("train" + lenet(data, 2) + " --set engine=pytorch --set transport=ring");
  EXPECT_EQ(ring.exit_code, 2) << ring.output;
  EXPECT_NE(ring.output.find("none, ddp"), std::string::npos) << ring.output;
  const Outcome ddp = dtbench("train" + lenet(data, 2) + " --set transport=ddp");
  EXPECT_EQ(ddp.exit_code, 2) << ddp.output;
  EXPECT_NE(ddp.output.find("engine: pytorch"), std::string::npos) << ddp.output;
}

// A worker that said "done" and then does not exit (torch's threads stuck in the interpreter's
// teardown) is ended after a grace period: the run it finished completes, with a warning, and no
// rank waits on it for ever. A stand-in worker speaks the protocol without torch.
TEST_F(CliPytorch, AWorkerThatHangsAfterItWasDoneIsEndedAndTheRunCompletes) {
  const fs::path data = synth("idx", 256, 64);
  const fs::path fake = root_ / "fake-worker";
  fs::create_directories(fake);
  std::ofstream(fake / "worker.py") << R"(import argparse, json, os, sys, time
parser = argparse.ArgumentParser()
parser.add_argument("--input")
parser.add_argument("--events-fd", type=int)
events = os.fdopen(parser.parse_args().events_fd, "w", buffering=1)
def send(**fields):
    events.write(json.dumps(fields) + "\n")
send(event="ready", torch="stand-in", epochs=1, steps=1, settings="stand-in")
sys.stdin.readline()
now = time.time()
send(event="step", epoch=1, step=0, load=0.001, forward=0.001, backward=0.001, comm=0, update=0.001, other=0,
     total=0.004, comm_total=0, images=32, loss=2.3, correct=3, start_unix_s=now)
send(event="epoch", epoch=1, test_loss=2.3, test_accuracy=0.1, test_samples=64, start_unix_s=now,
     steps_end_unix_s=now + 0.004, end_unix_s=now + 0.01)
sys.stdin.readline()
send(event="done", weights_checksum="0")
time.sleep(600)
)";
  const auto started = std::chrono::steady_clock::now();
  const Outcome r = testing::shell("DTBENCH_PYTORCH_DIR=" + fake.string() + " " + DTBENCH_BINARY + " train" +
                                   lenet(data, 1) + " --set batch=32 --set engine=pytorch --set output=" +
                                   (root_ / "runs").string());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the worker was done but had not exited 10 s later; ended it"), std::string::npos)
      << r.output;
  EXPECT_LT(seconds, 60.0) << r.output;
  // "[w]" keeps pgrep from matching the shell that runs it, whose command line holds the pattern.
  EXPECT_EQ(testing::shell("pgrep -f '" + (fake / "[w]orker.py").string() + "'").exit_code, 1)
      << "the stand-in still runs";
}

}  // namespace
}  // namespace dtbench
