#pragma once
// Sweep blueprints: an experiment declared, not scripted. A base blueprint, overrides for every
// run, axes whose cartesian product is the set of configurations, and how often to repeat each:
//
//   name: transports
//   base: ../lenet5-fashion-mnist.yaml   # relative to this file; absent: the built-in blueprint
//   set: {steps: 50}                     # blueprint keys (dotted) for every run
//   axes:                                # in this order; the last varies fastest
//     model: [mlp, lenet5]
//     transport: [ring, mpi, ps-sync, ps-async]
//     workers: [2, 4]                    # worker processes (not a blueprint key)
//   repetitions: 5                       # measured runs per configuration
//   warmup: 1                            # runs before them, kept apart and left out of the statistics
//   cap_s: 600                           # a run still going after this is stopped: "> cap"
//   compare: {axis: transport, baseline: ring, metric: run_s, test: mann-whitney}
//
// Besides blueprint keys, some axes are the runner's: `blueprint` (base blueprint files; the
// top-level key is `base`), `workers` and `servers` (parameter servers started for ps transports;
// both also top-level keys), and with `launch.cluster` its `hosts`, `link`, `slots` and `cores_per_host`.
// `synthesize` (one data set or a list) writes synthetic data before the first run.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "comm/transport_catalogue.h"

namespace dtbench {

// An axis's values are scalars (`model: [mlp, lenet5]`) or mappings that set several keys at once
// and are named by their `label` (`workload: [{label: r18-c100, blueprint: x.yaml, dataset.path: d}]`).
struct SweepAxis {
  using Assignments = std::vector<std::pair<std::string, std::string>>;  // key -> value
  std::string key;
  std::vector<std::string> values;          // the labels, as configuration ids show them
  std::vector<Assignments> assignments;     // per value: what it sets
};

// An emulated cluster (launch/cluster) the sweep brings up for its runs and removes after them,
// also when stopped or failing: `launch: {cluster: {hosts: 3, link: 1gbit, slots: 1, cores_per_host: 0.5}}`
// (cores_per_host: each host's CPU quota, by default this machine's cores / hosts). Unless
// `workers` or `servers` say otherwise, each slot gets a worker and, for parameter-server
// transports, each host a shard beside its workers (the layout of the CPU-cluster study).
struct SweepCluster {
  int64_t hosts = 2;
  int64_t slots = 1;
  std::string link = "none";  // a rate tc takes (1gbit, 10gbit) or none
  double cores_per_host = 0;  // 0: this machine's cores / hosts
  bool operator==(const SweepCluster&) const = default;
  double resolved_cores_per_host() const;
  std::string label() const;  // "3 hosts x 1 slot x 0.667 core(s), link 1gbit"
};

// How runs are started. Workers go through mpirun when there is more than one, the transport is
// an MPI one, or they run on a cluster; parameter servers listen on `ps_host`, or on the cluster's
// hosts.
struct SweepLaunch {
  std::string mpirun = "mpirun";
  std::string hostfile;                  // passed as --hostfile; none: localhost, oversubscribed
  std::vector<std::string> mpirun_args;  // added after -np N
  std::string ps_host = "127.0.0.1";
  std::optional<SweepCluster> cluster;   // instead of hostfile and ps_host
};

// Synthetic data in the real format, written before the first run if `path` does not exist yet
// (dtbench data synth), so a sweep runs on a machine without the downloads.
struct SweepSynthesis {
  std::string format = "cifar10";
  int64_t train = 1000;
  int64_t test = 200;
  std::string path;
};

struct SweepComparison {
  std::string axis;      // each configuration is compared with its twin that has ...
  std::string baseline;  // ... this value on the axis, all else equal
  std::string metric = "run_s";     // see results.h
  std::string test = "mann-whitney";  // or wilcoxon (runs paired by repetition)
};

// The longest wall-clock cap a sweep accepts: 30 days.
inline constexpr double kLongestCapSeconds = 30.0 * 24 * 3600;

struct SweepBlueprint {
  std::string name;
  std::filesystem::path source;  // the sweep file
  std::filesystem::path base;    // empty: the built-in blueprint
  std::vector<std::string> overrides;  // "key=value" for every run
  std::vector<SweepAxis> axes;
  int64_t workers = 1;
  int64_t servers = 1;
  bool workers_given = false, servers_given = false;  // in the file, not defaults
  int64_t repetitions = 5;
  int64_t warmup = 1;
  double cap_s = 1800;  // at most kLongestCapSeconds
  SweepLaunch launch;
  std::vector<SweepSynthesis> synthesize;
  std::optional<SweepComparison> compare;
  std::string output = "runs/sweeps";
};

// One point of the axes' product.
struct SweepConfiguration {
  std::string id;  // "model=mlp,transport=ring": the axis values, also its directory name
  std::vector<std::pair<std::string, std::string>> values;  // axis key -> value label, in axis order
  std::filesystem::path base;          // empty: the built-in blueprint
  std::vector<std::string> overrides;  // the sweep's `set` then this configuration's blueprint keys
  std::string transport;
  std::string engine = "dtbench";  // who trains: dtbench, or pytorch
  int64_t workers = 1;
  int64_t servers = 1;
  std::optional<SweepCluster> cluster;  // the emulated cluster its runs need
  // Open MPI settings for this configuration's mpirun alone (axis keys `mca.NAME`): e.g. MPI_Allreduce
  // tuned beside the library's defaults, `{label: mpi-tuned, transport: mpi, mca.btl_tcp_links: 4}`.
  std::vector<std::pair<std::string, std::string>> mca;
  std::string missing;  // why it cannot run here (reported as missing, never as a number)

  const std::string* value_of(const std::string& axis) const;
  // The catalogue's row of its transport; null for the pytorch engine's own (ddp).
  const TransportRow* transport_row() const { return find_transport_row(transport); }
  // The allreduce over MPI on the host runs under mpirun even for one worker.
  bool needs_mpirun() const {
    const TransportRow* row = transport_row();
    return cluster || workers > 1 || (row != nullptr && row->family == TransportFamily::MpiAllreduce);
  }
  bool needs_servers() const { return transport_row() != nullptr && transport_row()->needs_servers(); }
};

// What a run is measured by (results.h says how): the metrics a comparison may name.
const std::vector<std::string>& sweep_metric_names();

// Reads and checks a sweep file; `extra_overrides` are appended to its `set`. InputError names
// the file and key for anything malformed.
SweepBlueprint load_sweep(const std::filesystem::path& file, const std::vector<std::string>& extra_overrides);

// Every configuration, each checked by resolving its blueprint (an invalid key or value is an
// InputError naming the configuration); what this machine lacks makes it missing instead.
std::vector<SweepConfiguration> expand_sweep(const SweepBlueprint& sweep);

}  // namespace dtbench
