#pragma once
// What a run was: the facts a reader needs before its numbers (model, batch, data, hosts, cores,
// threads, BLAS core, commit, injected straggler), read leniently from report.json's blueprint,
// data, model and provenance, so that reports written before a field existed still load.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench {

struct RunContext {
  std::string model;           // "lenet5"; empty when the report does not say
  int64_t parameters = 0;      // the model's trainable parameters (its gradient is 4 bytes each)
  int64_t batch = 0;           // per worker; 0 when unknown
  std::string data_path, data_format;
  bool synthetic = false;      // written by `dtbench data synth`, not a real data set
  int threads = 0;             // BLAS threads per worker, as the run measured them
  int cores = 0;               // of rank 0's machine
  std::string cpu_model, blas_core, commit;
  std::string torch_settings;  // the PyTorch engine's profile in one line (provenance.engine.settings); "" for dtbench's
  std::string device;          // "cpu", or the GPU with its driver and libraries; empty: not recorded
  std::string conv_algorithms;  // the host convolutions' algorithms in one line (provenance.engine.conv_algorithms.summary)
  std::string precision;       // "fp32", "tf32"; empty: not recorded (reports before the key)
  std::vector<std::string> hosts;  // each worker's host name by rank; rank 0's alone when the others' are unknown
  std::string link;            // an emulated cluster's link ("1gbit"), from report.json's network; empty: unknown
  bool emulated_cluster = false;  // its hosts are namespaces of one machine, which all their workers share
  double host_cores = 0.0;        // an emulated host's CPU quota in cores; 0: unknown (a real host: `cores`)
  bool time_sliced = false;       // the emulated hosts promise more cores than the machine has
  double filler_cores = 0.0;      // the emulated cluster's fillers: the cores they may take (host_cores.h)
  std::optional<bool> ranks_yield;  // MPI ranks yield their core while they wait; nullopt: not MPI, or unknown
  bool overlapped = false;        // the transport communicated buckets during backward (transport_summary.overlap)
  int straggler_rank = -1;     // the injected straggler (blueprint `straggler`), -1: none
  double straggler_delay_ms = 0.0;
  int64_t steps_limit = 0;     // the blueprint's `steps`; 0: whole epochs

  bool has_straggler() const { return straggler_rank >= 0 && straggler_delay_ms > 0; }
  // Emulated hosts that each hold a fraction of a core, or more than the machine has between them.
  bool hosts_share_cores() const;
  // The most workers any one host ran (every worker on rank 0's host when hosts are unknown).
  int most_workers_on_a_host(int world) const;
};

// From a report.json object; missing or mistyped fields stay at their defaults.
RunContext run_context(const nlohmann::json& report);

}  // namespace dtbench
