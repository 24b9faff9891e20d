// `dtbench sweep` end to end: a tiny sweep (2 models x 2 transports x 2 repetitions, 2 workers,
// a few steps each: mpirun for the ring, `dtbench ps` processes for the parameter server) and its
// results; started again it makes no run; an unfinished run is redone and its directory kept; a
// run over the cap is reported as such and a configuration that cannot run as missing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "launch/sweep/child_process.h"
#include "launch/sweep/plan.h"
#include "launch/sweep/results.h"
#include "support/cli_helpers.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;

using testing::read_text;
using testing::split;

using testing::dtbench;
using testing::Outcome;
using testing::read_json;

class CliSweep : public testing::MpirunTest {
 protected:
  // A sweep named tiny on synthetic data of 256 samples, 2 workers, writing under root/out.
  fs::path write_sweep(const std::string& body) {
    const fs::path file = root_ / "sweep.yaml";
    std::ofstream(file) << "name: tiny\n"
                        << "synthesize: {format: idx, train: 256, test: 64, path: " << (root_ / "data").string() << "}\n"
                        << "workers: 2\n"
                        << "output: " << (root_ / "out").string() << "\n"
                        << body;
    return file;
  }
};

// Every configuration of the tiny sweep measured twice, compared with its ring twin, and written
// as results.json, results.csv, results.md and the breakdown report.
void expect_every_configuration_measured(const fs::path& dir) {
  const nlohmann::json results = read_json(dir / "results.json");
  ASSERT_EQ(results["configurations"].size(), 4u);
  for (const auto& c : results["configurations"]) {
    SCOPED_TRACE(c["id"].get<std::string>());
    EXPECT_EQ(c["complete"].get<int>(), 2);
    EXPECT_EQ(c["stats"]["run_s"]["n"].get<int>(), 2);
    const double low = c["stats"]["images_per_s"]["min"], median = c["stats"]["images_per_s"]["median"],
                 high = c["stats"]["images_per_s"]["max"];
    EXPECT_GT(low, 0.0);
    EXPECT_LE(low, median);
    EXPECT_LE(median, high);
    // Each run trained 3 steps on each of 2 workers: the phases were measured, comm among them.
    EXPECT_GT(c["stats"]["comm_ms"]["median"].get<double>(), 0.0);
  }
  // ps-sync against its ring twin, per model.
  ASSERT_EQ(results["comparisons"].size(), 2u);
  for (const auto& c : results["comparisons"]) {
    EXPECT_EQ(c["baseline"].get<std::string>().find("transport=ring") != std::string::npos, true);
    EXPECT_GT(c["p_value"].get<double>(), 0.0);
    EXPECT_LE(c["p_value"].get<double>(), 1.0);
  }

  // results.csv: the documented columns, one row per run.
  const auto csv = split(read_text(dir / "results.csv"), '\n');
  ASSERT_EQ(csv.size(), 1u + 8u);
  EXPECT_EQ(csv[0],
            "configuration,model,transport,workers,servers,repetition,warmup,status,error,run_s,process_s,epoch_s,"
            "images_per_s,test_accuracy,step_ms,load_ms,forward_ms,backward_ms,comm_ms,update_ms,other_ms");
  EXPECT_NE(read_text(dir / "results.md").find("model=lenet5,transport=ps-sync"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "report" / "report.html"));
  // A parameter-server run kept its servers' reports beside the workers'.
  EXPECT_TRUE(fs::exists(dir / "model=mlp,transport=ps-sync" / "rep-1" / "servers" / "server-0.json"));
  EXPECT_FALSE(fs::exists(dir / "model=mlp,transport=ps-sync" / "rep-1" / "servers" / "server-0.ckpt"));
}

// Started again, the sweep keeps every finished run and redoes an unfinished or unreadable one,
// keeping its old directory aside.
void expect_resumes_without_rerunning(const fs::path& file, const fs::path& dir) {
  // Started again: every run is kept, none redone.
  const auto stamp = fs::last_write_time(dir / "model=mlp,transport=ring" / "rep-1" / "report.json");
  const Outcome again = dtbench("sweep " + file.string() + " --no-report");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("0 run(s) made, 8 kept"), std::string::npos) << again.output;
  EXPECT_EQ(fs::last_write_time(dir / "model=mlp,transport=ring" / "rep-1" / "report.json"), stamp);

  // A run without its run.json was interrupted: it is made again, the old directory kept aside.
  const fs::path unfinished = dir / "model=lenet5,transport=ring" / "rep-2";
  fs::remove(unfinished / "run.json");
  // A dry run estimates what is left from the runs kept.
  const Outcome estimate = dtbench("sweep " + file.string() + " --dry-run");
  EXPECT_NE(estimate.output.find("estimate: 1 run(s) to make, about "), std::string::npos) << estimate.output;
  EXPECT_NE(estimate.output.find("(the mean of the 7 run(s) kept from an earlier start)"), std::string::npos)
      << estimate.output;
  const Outcome resumed = dtbench("sweep " + file.string() + " --no-report");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("1 run(s) made, 7 kept"), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find(": complete in "), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find("(elapsed 0:"), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find(", about 0:00 left)"), std::string::npos) << resumed.output;
  EXPECT_TRUE(fs::exists(unfinished.string() + ".attempt-1"));
  EXPECT_EQ(read_json(unfinished / "run.json")["status"], "complete");

  // A run.json that cannot be read marks no finished run either: warned about, and redone.
  std::ofstream(unfinished / "run.json") << "{";
  const Outcome unreadable = dtbench("sweep " + file.string() + " --no-report");
  ASSERT_EQ(unreadable.exit_code, 0) << unreadable.output;
  EXPECT_NE(unreadable.output.find("1 run(s) made, 7 kept"), std::string::npos) << unreadable.output;
  EXPECT_NE(unreadable.output.find((unfinished / "run.json").string() + ": unreadable"), std::string::npos)
      << unreadable.output;
  EXPECT_TRUE(fs::exists(unfinished.string() + ".attempt-2"));
}

// A broken report.json counts as a failed run naming the file; other settings or an unreadable
// record of them are refused.
void expect_broken_records_named(const fs::path& file, const fs::path& dir) {
  // A finished run whose report.json is broken is counted as failed, naming the file; not as a number.
  const fs::path broken = dir / "model=mlp,transport=ring" / "rep-2";
  std::ofstream(broken / "report.json") << "{";
  const Outcome unreadable_report = dtbench("sweep " + file.string() + " --no-report");
  ASSERT_EQ(unreadable_report.exit_code, 0) << unreadable_report.output;
  EXPECT_NE(unreadable_report.output.find("0 run(s) made, 8 kept"), std::string::npos) << unreadable_report.output;
  for (const auto& c : read_json(dir / "results.json")["configurations"]) {
    if (c["id"] != "model=mlp,transport=ring") continue;
    EXPECT_EQ(c["failed"].get<int>(), 1);
    EXPECT_EQ(c["stats"]["run_s"]["n"].get<int>(), 1);
  }
  const std::string rows = read_text(dir / "results.csv");
  EXPECT_NE(rows.find((broken / "report.json").string() + ": not valid JSON"), std::string::npos) << rows;

  // Other settings under the same sweep directory are refused, not mixed in.
  const Outcome changed = dtbench("sweep " + file.string() + " --set optimizer.lr=0.5");
  EXPECT_NE(changed.exit_code, 0);
  EXPECT_NE(changed.output.find("other settings"), std::string::npos) << changed.output;

  // So is a directory whose record of its settings cannot be read: named, not called other settings.
  std::ofstream(dir / "model=mlp,transport=ring" / "configuration.json") << "{\"id\":";
  const Outcome unrecorded = dtbench("sweep " + file.string() + " --no-report");
  EXPECT_EQ(unrecorded.exit_code, 2) << unrecorded.output;
  EXPECT_NE(unrecorded.output.find((dir / "model=mlp,transport=ring" / "configuration.json").string() +
                                   ": unreadable or not valid JSON"),
            std::string::npos)
      << unrecorded.output;
}

TEST_F(CliSweep, TinySweepReportsEveryConfigurationAndResumesWithoutRerunning) {
  const fs::path file = write_sweep(
      "set: {steps: 3, batch: 16, threads: 1, dataset.path: " + (root_ / "data").string() +
      ", profile.trace_steps: 0}\n"
      "axes: {model: [mlp, lenet5], transport: [ring, ps-sync]}\n"
      "repetitions: 2\nwarmup: 0\ncompare: {axis: transport, baseline: ring}\n");
  const Outcome first = dtbench("sweep " + file.string());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("8 run(s) made, 0 kept"), std::string::npos) << first.output;
  // Two repetitions cannot show a difference: the console says so.
  EXPECT_NE(first.output.find("2 measured repetition(s) per configuration, fewer than 5"), std::string::npos)
      << first.output;

  const fs::path dir = root_ / "out" / "tiny";
  // The report: the sweep's statistics and a verdict per workload (the model axis), short labels.
  const std::string html = read_text(dir / "report" / "report.html");
  for (const char* part : {"Sweep: every measured repetition", "Sweep tiny, mlp: median", "Sweep tiny, lenet5: median",
                           "<h3>mlp</h3>", "<h3>lenet5</h3>", "<td>ps-sync x2</td>"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  expect_every_configuration_measured(dir);
  expect_resumes_without_rerunning(file, dir);
  expect_broken_records_named(file, dir);
}

TEST_F(CliSweep, ARunOverTheCapIsReportedAsCappedAndAnImpossibleConfigurationAsMissing) {
  const fs::path file = write_sweep(
      // The cap falls inside the first step's 6 s straggler sleep, so the rank needs more than 2 s
      // after SIGTERM to finish its step and write its report: longer than mpirun grants by default.
      "set: {epochs: 100000, batch: 16, threads: 1, straggler.rank: 0, straggler.delay_ms: 6000, dataset.path: " +
      (root_ / "data").string() + "}\n"
      "axes: {model: [mlp], transport: [ring, none]}\n"
      "repetitions: 1\nwarmup: 0\ncap_s: 3\n");
  const Outcome run = dtbench("sweep " + file.string() + " --no-report");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const fs::path dir = root_ / "out" / "tiny";
  const nlohmann::json results = read_json(dir / "results.json");
  ASSERT_EQ(results["configurations"].size(), 2u);
  const auto& capped = results["configurations"][0];
  EXPECT_EQ(capped["capped"].get<int>(), 1);
  EXPECT_EQ(capped["stats"]["run_s"]["median"], "> cap");
  EXPECT_EQ(capped["stats"]["images_per_s"]["n"].get<int>(), 0);
  // The run was stopped, and said why in its own report.
  EXPECT_EQ(read_json(dir / "model=mlp,transport=ring" / "rep-1" / "report.json")["status"], "failed");
  const auto& missing = results["configurations"][1];
  EXPECT_NE(missing["missing"].get<std::string>().find("transport none trains one worker"), std::string::npos);
  EXPECT_EQ(missing["stats"]["run_s"]["n"].get<int>(), 0);
  const std::string table = read_text(dir / "results.md");
  EXPECT_NE(table.find("> 3 s cap"), std::string::npos) << table;
  EXPECT_NE(table.find("missing: transport none"), std::string::npos) << table;
  const auto csv = split(read_text(dir / "results.csv"), '\n');
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_NE(csv[1].find(",capped,"), std::string::npos);
  EXPECT_NE(csv[2].find(",missing,"), std::string::npos);
}

// A parameter server that cannot start (here: no such address to listen on) fails its run with the
// server's own last error, instead of hanging or counting as capped; the sweep goes on.
TEST_F(CliSweep, AServerThatCannotStartFailsItsRunNamingTheServer) {
  const fs::path file = write_sweep(
      "set: {steps: 3, batch: 16, threads: 1, dataset.path: " + (root_ / "data").string() + "}\n"
      "axes: {model: [mlp], transport: [ps-sync]}\n"
      "repetitions: 1\nwarmup: 0\nlaunch: {ps_host: 256.0.0.1}\n");
  const Outcome run = dtbench("sweep " + file.string() + " --no-report");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const fs::path rep = root_ / "out" / "tiny" / "model=mlp,transport=ps-sync" / "rep-1";
  const nlohmann::json record = read_json(rep / "run.json");
  EXPECT_EQ(record["status"], "failed");
  const std::string error = record["error"];
  EXPECT_NE(error.find("parameter server 0 exited"), std::string::npos) << error;
  EXPECT_NE(error.find("cannot listen on 256.0.0.1:0"), std::string::npos) << error;  // the server's own words
  EXPECT_EQ(read_json(root_ / "out" / "tiny" / "results.json")["configurations"][0]["failed"].get<int>(), 1);
}

TEST_F(CliSweep, BadSweepFilesAreErrorsNamingFileAndKey) {
  const fs::path unknown = write_sweep("axes: {model: [mlp]}\nrepetitons: 3\n");
  Outcome r = dtbench("sweep " + unknown.string() + " --dry-run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown key 'repetitons'"), std::string::npos) << r.output;

  const fs::path bad_value = write_sweep("axes: {model: [mlp, resnet7]}\n");
  r = dtbench("sweep " + bad_value.string() + " --dry-run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("configuration model=resnet7"), std::string::npos) << r.output;

  const fs::path bad_compare = write_sweep("axes: {transport: [ring, mpi]}\ncompare: {axis: transport, baseline: gloo}\n");
  r = dtbench("sweep " + bad_compare.string() + " --dry-run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("compare.baseline"), std::string::npos) << r.output;

  r = dtbench("sweep " + (root_ / "absent.yaml").string() + " --dry-run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("absent.yaml: cannot open it"), std::string::npos) << r.output;

  std::ofstream(root_ / "broken.yaml") << "axes: [\n";
  r = dtbench("sweep " + (root_ / "broken.yaml").string() + " --dry-run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("broken.yaml: not valid YAML"), std::string::npos) << r.output;

  std::ofstream(root_ / "list.yaml") << "- a\n- b\n";
  r = dtbench("sweep " + (root_ / "list.yaml").string() + " --dry-run");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("expected a mapping of keys at the top"), std::string::npos) << r.output;
}

using SweepPlan = testing::TempDirTest;

TEST_F(SweepPlan, AxesExpandInOrderWithTheLastFastest) {
  const fs::path file = root_ / "plan.yaml";
  std::ofstream(file) << "axes:\n  workers: [1, 3]\n  comm.chunk_kb: [64, 256]\nset: {transport: ring}\n";
  const SweepBlueprint sweep = load_sweep(file, {"steps=2"});
  const auto configurations = expand_sweep(sweep);
  ASSERT_EQ(configurations.size(), 4u);
  EXPECT_EQ(configurations[0].id, "workers=1,comm.chunk_kb=64");
  EXPECT_EQ(configurations[1].id, "workers=1,comm.chunk_kb=256");
  EXPECT_EQ(configurations[3].workers, 3);
  EXPECT_EQ(configurations[3].overrides, (std::vector<std::string>{"transport=ring", "steps=2", "comm.chunk_kb=256"}));
  EXPECT_TRUE(configurations[0].needs_mpirun());  // ring, even with one worker
}

TEST_F(SweepPlan, LabelledValuesSetSeveralKeysAndNamesMustBeDistinct) {
  const fs::path file = root_ / "plan.yaml";
  std::ofstream(file) << "axes:\n  workload:\n    - {label: small, model: mlp, batch: 8}\n"
                         "    - {label: conv, model: lenet5, optimizer: {lr: 0.1}}\n";
  const auto configurations = expand_sweep(load_sweep(file, {}));
  ASSERT_EQ(configurations.size(), 2u);
  EXPECT_EQ(configurations[1].id, "workload=conv");
  EXPECT_EQ(configurations[1].overrides, (std::vector<std::string>{"model=lenet5", "optimizer.lr=0.1"}));

  std::ofstream(file) << "axes: {batch: [8, 8]}\n";
  try {
    expand_sweep(load_sweep(file, {}));
    ADD_FAILURE() << "a repeated value was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("both named batch=8"), std::string::npos) << error.what();
  }
  std::ofstream(file) << "axes: {transport: [ring, mpi]}\ncompare: {axis: transport, baseline: ring, metric: runs_s}\n";
  EXPECT_THROW(load_sweep(file, {}), InputError);
  std::ofstream(file) << "name: ../elsewhere\n";
  EXPECT_THROW(load_sweep(file, {}), InputError);
}

// A configuration may carry Open MPI settings of its own (MPI_Allreduce tuned beside the library's
// defaults): they go to its mpirun as --mca NAME VALUE, not into the blueprint; a malformed name
// is an error naming the key.
TEST_F(SweepPlan, McaKeysGoToThatConfigurationsMpirunOnly) {
  const fs::path file = root_ / "plan.yaml";
  std::ofstream(file) << "workers: 2\nset: {steps: 1}\naxes:\n  configuration:\n"
                         "    - {label: mpi, transport: mpi}\n"
                         "    - {label: mpi-tuned, transport: mpi, mca.btl_tcp_links: 4}\n";
  const auto configurations = expand_sweep(load_sweep(file, {}));
  ASSERT_EQ(configurations.size(), 2u);
  EXPECT_TRUE(configurations[0].mca.empty());
  EXPECT_EQ(configurations[1].mca, (std::vector<std::pair<std::string, std::string>>{{"btl_tcp_links", "4"}}));
  EXPECT_EQ(configurations[1].overrides, (std::vector<std::string>{"steps=1", "transport=mpi"}));
  const Outcome dry = dtbench("sweep " + file.string() + " --dry-run");
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("configuration=mpi-tuned: 2 worker(s), transport mpi, --mca btl_tcp_links 4"),
            std::string::npos) << dry.output;
  EXPECT_EQ(dry.output.find("configuration=mpi: 2 worker(s), transport mpi, --mca"), std::string::npos) << dry.output;

  std::ofstream(file) << "axes: {mca.BTL-links: [1, 4]}\n";
  try {
    expand_sweep(load_sweep(file, {}));
    ADD_FAILURE() << "a malformed MCA name was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("'axes.mca.BTL-links': expected an Open MPI parameter name"),
              std::string::npos) << error.what();
  }
}

// Open MPI starts each rank in a process group of its own; stopping the launcher must stop them
// too. Here a shell starts a `setsid` child (its own session and group) and one in its group.
TEST_F(SweepPlan, TerminatingAChildStopsDescendantsInOtherProcessGroups) {
  adopt_orphaned_descendants();
  ChildProcess launcher({"sh", "-c", "setsid sleep 60 & sleep 60 & wait"}, root_ / "launcher.log");
  std::vector<pid_t> descendants;
  for (int attempt = 0; attempt < 100 && descendants.size() < 2; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    descendants = descendants_of(launcher.pid());
  }
  ASSERT_EQ(descendants.size(), 2u);
  launcher.terminate(2.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (const pid_t pid : descendants) {
    int status = 0;
    waitpid(pid, &status, WNOHANG);  // an adopted orphan is ours to reap
    EXPECT_NE(kill(pid, 0), 0) << "process " << pid << " outlived its launcher";
  }
}

}  // namespace
}  // namespace dtbench
