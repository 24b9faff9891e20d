#pragma once
// The parameter-server transports (`ps-sync`, `ps-async`) behind comm/'s Transport. start()
// registers with every server and pulls the initial weights (the servers built the same model from
// the same seed, or restored a checkpoint); each step makes one PushPull call to every shard at
// once: the arena's gradients out, the new values back straight into the arena. The servers'
// optimizers do the update, so update() has nothing left to do.
//
// The comm split: push = until every shard has all the gradient bytes; pull = receiving the new
// values (the slowest shard's, from its first message); wait = the rest (sync: the wait for the
// other workers; async: the server's queue and any hold for max_staleness). transfer = push + pull.
// start() also measures this worker's clock against server 0's (server_clock.h), which places the
// workers' timelines and server 0's on one time axis.
// Batch-norm running statistics are buffers, not parameters: each worker keeps its own.
#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

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
};

// What a worker of `world` with this rank connects to the servers with.
PsClientOptions client_options(const PsTransportOptions& options, int rank, int world);

class PsTransport final : public Transport {
 public:
  explicit PsTransport(PsTransportOptions options);

  std::string name() const override { return std::string(options_.mode == PsMode::Sync ? kPsSyncTransport : kPsAsyncTransport); }
  nlohmann::json summary() const override;
  std::optional<ClockAlignment> clock_alignment() const override { return clock_; }

  // The version of each shard's weights now in the arena.
  const std::vector<int64_t>& versions() const { return versions_; }

 protected:
  void begin(Model& model) override;
  void end(Model& model) override;
  void synchronize(Model& model, int64_t step, SyncTimes& times) override;
  void update(Model&, int64_t) override {}
  // The servers updated: what comes back to the worker is the weights.
  std::span<float> written_by_synchronize(Model& model) override { return model.arena().values(); }

 private:
  void push_and_pull(Model& model, SyncTimes& times);
  PsTransportOptions options_;
  std::unique_ptr<KeyPlacement> placement_;
  std::unique_ptr<PsClient> client_;
  std::vector<int64_t> versions_;
  std::map<int64_t, int64_t> staleness_counts_;  // async: per shard and push
  int64_t steps_ = 0;
  std::string weights_checksum_;
  std::optional<ClockAlignment> clock_;  // against server 0, from start()
  std::array<CommSpan, 3> spans_;        // this step's push, wait and pull, for the timeline
};

}  // namespace dtbench
