// dtbench cluster up | down | status | exec | freeze | thaw: an emulated cluster on this machine (launch/cluster).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "core/util/error.h"
#include "launch/blueprint/number_option.h"
#include "launch/cluster/cluster.h"
#include "launch/cluster/cluster_files.h"
#include "launch/cluster/host_cgroups.h"
#include "launch/cluster/slurm_daemons.h"
#include "launch/commands.h"

namespace dtbench {

namespace {

void print_up(const cluster::ClusterRecord& r) {
  fmt::print("{}", cluster::describe(r));
  fmt::print("launch across it:\n  mpirun --mca mca_param_files {0}/mca-params.conf --hostfile {0}/hostfile -np {1} "
             "dtbench doctor\n  (or: mpirun $(cat {0}/mpirun-args) -np {1} ...)\n",
             r.dir.string(), r.hosts * r.slots_per_host);
  if (r.slurm) {
    fmt::print("or through its Slurm:\n  {}\n  srun -N{} --mpi=pmix dtbench doctor; sbatch configs/cluster/slurm.sbatch\n",
               cluster::slurm_env_line(r), r.hosts);
  }
}

void add_up(CLI::App& parent) {
  auto* command = parent.add_subcommand("up", "Make N emulated hosts: namespaces on one bridge, shaped links, "
                                              "cores of their own");
  auto options = std::make_shared<cluster::UpOptions>();
  command->add_option("name", options->name, "Cluster name: 1 to 8 of a-z, 0-9, '-'")->required();
  command->add_option("--hosts", options->hosts, "Number of hosts")->required();
  command->add_option("--slots", options->slots_per_host, "MPI slots per host")->capture_default_str();
  command->add_option("--link", options->link_rate, "Link rate each way: 1gbit, 10gbit, 25gbit, none")
      ->capture_default_str();
  command->add_option("--cores-per-host", options->cores_per_host,
                      "Each host's CPU quota in cores, fractions allowed (default: this machine's cores / hosts)")
      ->check(positive_number());
  command->add_option("--cpuset", options->cpuset,
                      "The cores every host runs on, a cpu list such as 0 or 0-1, instead of a share of its own");
  command->add_flag("--spread", options->spread,
                    "Hosts of less than a core one to a core while there are cores, each beside a filler, "
                    "instead of side by side (2 half-core hosts: a core each rather than both on core 0)");
  command->add_option("--dir", options->dir, "Where the hostfile, rsh agent and MCA settings go "
                                             "(default /tmp/dtbench-cluster-NAME)");
  command->add_flag("--slurm", options->slurm,
                    "Also run Slurm: MUNGE, slurmctld on host 0, a slurmd per host (scripts/install-deps.sh slurm)");
  command->add_option("--owner-pid", options->owner_pid,
                      "Remove the cluster (at the next cluster up/status/down) once this process is gone");
  command->callback([options] { print_up(cluster::up(*options)); });
}

void add_down(CLI::App& parent) {
  auto* command = parent.add_subcommand("down", "Remove a cluster: its hosts, links, bridge and files");
  auto name = std::make_shared<std::string>();
  command->add_option("name", *name, "Cluster name")->required();
  command->callback([name] {
    cluster::down(*name);
    fmt::print("cluster {} removed\n", *name);
  });
}

void add_status(CLI::App& parent) {
  auto* command = parent.add_subcommand("status", "List clusters: hosts, addresses, links and their shaping");
  auto name = std::make_shared<std::string>();
  command->add_option("name", *name, "Only this cluster");
  command->callback([name] {
    cluster::require_net_admin("dtbench cluster status");
    for (const auto& gone : cluster::reap_abandoned()) fmt::print("removed abandoned cluster {}\n", gone);
    if (!name->empty()) {
      fmt::print("{}", cluster::describe(cluster::find(*name)));
      return;
    }
    const auto records = cluster::read_records();
    if (records.empty()) fmt::print("no clusters\n");
    for (const auto& r : records) fmt::print("{}", cluster::describe(r));
  });
}

// Replaces this process with the command on the host, so its exit code and output are the command's.
[[noreturn]] void exec_on_host(const std::string& name, const std::string& host, const std::vector<std::string>& command,
                               double timeout_s) {
  cluster::require_net_admin("dtbench cluster exec");
  const cluster::ClusterRecord r = cluster::find(name);
  if (!r.complete) fail_input("cluster {} is still being built", name);
  std::vector<std::string> argv = {"timeout", "--kill-after=5", fmt::format("{}", timeout_s)};
  const auto on_host = cluster::on_host_argv(r, cluster::host_index(r, host), command);
  argv.insert(argv.end(), on_host.begin(), on_host.end());
  std::vector<char*> args;
  for (auto& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  std::fflush(stdout);
  execvp(args[0], args.data());
  throw IoError(fmt::format("cannot run {}: {}", argv[0], std::strerror(errno)));
}

void add_exec(CLI::App& parent) {
  auto* command = parent.add_subcommand("exec", "Run a command on one host: dtbench cluster exec NAME HOST -- CMD...");
  struct Exec {
    std::string name, host;
    std::vector<std::string> command;
    double timeout_s = 3600;
  };
  auto options = std::make_shared<Exec>();
  command->add_option("name", options->name, "Cluster name")->required();
  command->add_option("host", options->host, "Host: its number, name (NAME-h0) or address")->required();
  command->add_option("command", options->command, "The command and its arguments, after --")->required();
  command->add_option("--timeout-s", options->timeout_s, "The command is killed after this long")
      ->check(positive_number())
      ->capture_default_str();
  command->callback([options] { exec_on_host(options->name, options->host, options->command, options->timeout_s); });
}

// freeze | thaw NAME HOST
void add_freezer(CLI::App& parent, bool frozen) {
  auto* command = parent.add_subcommand(frozen ? "freeze" : "thaw",
                                        frozen ? "Stop every process of one host at once and silence its link, as a hung machine"
                                               : "Let a frozen host's processes run again");
  auto options = std::make_shared<std::pair<std::string, std::string>>();
  command->add_option("name", options->first, "Cluster name")->required();
  command->add_option("host", options->second, "Host: its number, name (NAME-h0) or address")->required();
  command->callback([options, frozen] {
    cluster::freeze(options->first, options->second, frozen);
    fmt::print("host {} of cluster {} {}\n", options->second, options->first, frozen ? "frozen" : "thawed");
  });
}

// filler NAME K: what `cluster up` runs on the part of a core its hosts leave (hidden: no one
// else has a reason to).
void add_filler(CLI::App& parent) {
  auto* command = parent.add_subcommand("filler", "Yield a core to the hosts that want it, forever (cluster up runs it)");
  command->group("");
  auto options = std::make_shared<std::pair<std::string, int>>();
  command->add_option("name", options->first, "Cluster name")->required();
  command->add_option("filler", options->second, "The filler's number")->required();
  command->callback([options] { cluster::run_filler(); });  // options outlive the parse
}

}  // namespace

void add_cluster_command(CLI::App& app) {
  auto* command = app.add_subcommand("cluster", "An emulated cluster on this machine (needs root)");
  command->require_subcommand(1);
  add_up(*command);
  add_down(*command);
  add_status(*command);
  add_exec(*command);
  add_freezer(*command, true);
  add_freezer(*command, false);
  add_filler(*command);
}

}  // namespace dtbench
