#pragma once
// What the cost model takes from a measured run directory: the compute phases per step (medians,
// the first epoch left out when there are more), the gradient's buckets as the run's transport
// cut them (the model rebuilt from report.json's name, input and classes; comm.bucket_mb and
// comm.overlap from its blueprint), how much longer its slowest worker computed (workers.per_worker),
// and the step time it measured, to check a prediction against.
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "launch/predict/cost_model.h"

namespace dtbench {

// What the run's parameter servers measured (server-<shard>.json, in the run directory or its
// servers/): their summing and optimizer time per byte, and the largest shard's share.
struct ServerCosts {
  int shards = 0;
  double largest_share = 0.0;
  double reduce_s_per_byte = 0.0;  // aggregation time / (shard bytes x gradients summed)
  double apply_s_per_byte = 0.0;   // apply time / (shard bytes x updates)
  std::string source{};
};

// One piece of the run's communication per step (an allreduce bucket; a parameter server's push,
// wait or pull), as the run timed it: means over the epochs the compute phases are from, seconds
// from the step's backward start (worker JSON's comm_timings).
struct MeasuredPiece {
  std::string what{};
  int index = 0;
  int64_t bytes = 0;
  double ready_s = 0.0, start_s = 0.0, end_s = 0.0;
  double seconds() const { return end_s - start_s; }
};

struct MeasuredRun {
  std::filesystem::path dir{};
  std::string model{}, transport{};
  int workers = 1;
  Workload workload{};
  double measured_step_s = 0.0;  // mean seconds per step, over the epochs the compute phases are from
  double measured_comm_s = 0.0;  // exposed comm per step
  std::string source{};          // "report.json of RUN: N worker(s), epochs a-b, means"
  std::optional<ServerCosts> servers{};  // parameter-server runs whose server files are present
  std::string link{};  // the emulated cluster's link rate ("1gbit"); empty where the run names none
  // The machine's cores, where the run's emulated hosts shared them (a fraction of a core each, or
  // taking turns: RunContext::hosts_share_cores): every byte any host moves passes through those
  // cores. 0: hosts of their own.
  int shared_cores = 0;
  // The hosts promised more cores than the machine has and took turns on them; hosts that each hold
  // a quota the machine's cores can all give at once have their CPU to themselves.
  bool hosts_time_sliced = false;
  // An emulated host's CPU quota in cores where the hosts shared the machine's (the compute and
  // the communication of its ranks share it); 0 otherwise.
  double host_cores = 0.0;
  std::vector<MeasuredPiece> comm_pieces{};  // empty for a run that recorded none (older, or one worker)
  // workload.bucket_ready came from the run's own bucket timings (else from multiply-adds), and
  // what multiply-adds would have said, for the check against the run.
  bool ready_measured = false;
  std::vector<double> ready_from_macs{};
};

// The comm pieces of a report's (or a worker file's) epochs from `first` on, each a mean over all
// their steps; InputError naming `file` for a piece without its keys.
std::vector<MeasuredPiece> comm_pieces(const nlohmann::json& epochs, size_t first, const std::filesystem::path& file);

// InputError naming the file and key when the directory holds no usable report.json.
MeasuredRun load_measured_run(const std::filesystem::path& run_dir);

// The run's workload cut into the buckets its pieces say it sent, each ready when the run had it,
// where those differ from the model's arena buckets but hold the same gradient (PyTorch DDP cuts
// and pads its own: ResNet-18 at 25 MiB 28.34 + 16.35 MB against the arena's 28.87 + 15.82), so
// that the check against the run sets each bucket's own time beside it. Unchanged otherwise.
// (The fit on runs times buckets from their pieces and keeps the arena's: taking these there moved
// its DDP predictions both ways, docs/predict.md.)
void take_buckets_sent(MeasuredRun& run);
// nullopt when the run left no server files (or its servers never updated).
std::optional<ServerCosts> load_server_costs(const std::filesystem::path& run_dir);

// The gradient as the run's transport cuts it: buckets of about `bucket_bytes` in the order backward
// completes them (one fused bucket for 0), and for each the share of backward done when its last
// gradient is final, backward's time taken as spread over the layers in proportion to their
// multiply-adds (a convolution net's early layers hold the work, its late layers the bytes).
struct GradientBuckets {
  std::vector<int64_t> bytes{};
  std::vector<double> ready{};
};
GradientBuckets gradient_buckets(const std::string& model, const std::vector<int64_t>& input, int64_t classes,
                                 int64_t bucket_bytes);

}  // namespace dtbench
