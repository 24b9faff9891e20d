#pragma once
// The parameter-server transports (`ps-sync`, `ps-async`) behind comm/'s Transport. start()
// registers with every server and pulls the initial weights (the servers built the same model from
// the same seed, or restored a checkpoint); each step makes one PushPull call to every shard at
// once: the arena's gradients out, the new values back straight into the arena. The servers'
// optimizers do the update, so update() has nothing left to do.
//
// With buckets (comm.bucket_mb > 0) and comm.overlap, each shard goes by itself as soon as backward
// has finished every parameter with a key on it, on comm/'s bucket pipeline: a bucket is a shard,
// because a server applies a shard's gradient as one update (one version per shard). The shards
// go at once, each on a lane of the pipeline's own, while backward goes on with the earlier
// layers; the step then waits only for what is left, as the allreduce transports' buckets do.
// (One after another, every worker pushed to the same server at the same time while the others'
// links idled: AlexNet's step on 4 emulated hosts at 1 Gbit took 7.2 s against 2.5 s with every
// shard at once after backward.) A sync push never waits for a worker pushing another shard first:
// each worker's shards are all in flight. The values pulled for a shard land in the arena during
// backward, but only those of layers whose backward is over, which backward does not read again.
//
// The comm split: push = until every shard has all the gradient bytes; pull = receiving the new
// values (the slowest shard's, from its first message); wait = the rest (sync: the wait for the
// other workers; async: the server's queue and any hold for max_staleness). transfer = push + pull.
// start() also measures this worker's clock against server 0's (server_clock.h), which places the
// workers' timelines and server 0's on one time axis.
// Batch-norm running statistics are buffers, not parameters: each worker keeps its own.
#include <chrono>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "comm/bucket_pipeline.h"
#include "comm/transport.h"
#include "comm/transport_catalogue.h"
#include "paramserver/ps_client.h"
#include "paramserver/ps_mode.h"

namespace dtbench {

struct PsTransportOptions {
  std::vector<std::string> servers;  // host:port, in shard order
  PsMode mode = PsMode::Sync;        // register_ps_transports sets it per name
  int rank = 0;
  int world = 1;
  std::string run_id;                // servers refuse workers of another run
  PlacementPolicy placement = PlacementPolicy::Balanced;
  int64_t key_float_count = 64 * 1024;
  double timeout_seconds = 60.0;
  int retries = 4;
  double backoff_seconds = 0.1;
  ClientSecurity security;
  int64_t max_message_bytes = kDefaultMaxMessageBytes;
  // Push and pull each shard as backward finishes it (the allreduce transports' comm.bucket_mb and
  // comm.overlap: both must be on); otherwise every shard at once after backward.
  int64_t bucket_bytes = 0;
  bool overlap = false;
  // The optimizer this worker's blueprint asks for (optimizer_settings); the servers, which apply
  // the updates, must run the same one. Empty: not checked (a benchmark's workers ask for none).
  std::string optimizer;
};

// What a worker of `world` with this rank connects to the servers with.
PsClientOptions client_options(const PsTransportOptions& options, int rank, int world);

class PsTransport final : public Transport {
 public:
  explicit PsTransport(PsTransportOptions options);
  ~PsTransport() override;

  std::string name() const override { return std::string(options_.mode == PsMode::Sync ? kPsSyncTransport : kPsAsyncTransport); }
  nlohmann::json summary() const override;
  std::optional<ClockAlignment> clock_alignment() const override { return clock_; }
  // Every server hears of the failure (ShutdownRequest.failure) and ends the run at once.
  void abandon(const std::string& reason) noexcept override;

  using TimeSpan = std::pair<std::chrono::steady_clock::time_point, std::chrono::steady_clock::time_point>;

  // The version of each shard's weights now in the arena.
  const std::vector<int64_t>& versions() const { return versions_; }

 protected:
  void begin(Model& model) override;
  void end(Model& model) override;
  void synchronize(Model& model, int64_t step, SyncTimes& times) override;
  void update(Model&, int64_t) override {}
  // The servers updated: what comes back to the worker is the weights.
  std::span<float> written_by_synchronize(Model& model) override { return model.arena().values(); }
  // With buckets, each shard's gradients came to the host as backward finished them.
  std::span<float> read_by_synchronize(Model& model) override {
    return pipeline_ != nullptr ? std::span<float>() : model.arena().grads();
  }

 private:
  void push_and_pull(Model& model, SyncTimes& times);
  // With buckets: each shard pushed and pulled as soon as backward finished it; waits for the last.
  void push_and_pull_buckets(SyncTimes& times);
  void start_pipeline(Model& model);
  // One shard's results into the step's times, versions and timeline.
  void note_shard(size_t shard, const PushPullResult& result, std::chrono::steady_clock::time_point start,
                  SyncTimes& times);
  PsTransportOptions options_;
  std::unique_ptr<KeyPlacement> placement_;
  std::unique_ptr<PsClient> client_;
  std::vector<int64_t> versions_;
  std::map<int64_t, int64_t> staleness_counts_;  // async: per shard and push
  int64_t steps_ = 0;
  std::string weights_checksum_;
  std::optional<ClockAlignment> clock_;  // against server 0, from start()
  std::vector<CommSpan> spans_;          // this step's push, wait and pull (per shard with buckets)
  std::vector<TimeSpan> busy_;           // buckets: when each shard's call ran this step
  Model* model_ = nullptr;
  // Buckets: one per shard, pushed and pulled on the pipeline's thread; null without.
  std::unique_ptr<BucketPipeline> pipeline_;
  std::vector<PushPullResult> results_;  // by shard, written by the pipeline's thread
  double bucket_d2h_seconds_ = 0.0;      // a device's gradients moved to the host during backward
};

}  // namespace dtbench
