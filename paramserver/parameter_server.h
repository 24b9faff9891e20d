#pragma once
// One parameter-server shard, serving: the keys KeyPlacement gives it (initial values from the
// model the server built — the same blueprint, seed and initialisation as the workers' — or from a
// checkpoint), an optimizer from core over them, and the gRPC service in front.
//
// It stops on a Shutdown call (-1), once every worker has said it is done, or on stop(); a worker
// that fails says so (Shutdown with its failure) and the server ends at once, failed. Stopping
// fails whatever is pending, then writes server-<shard>.json into output_dir and a last
// checkpoint (when it has a checkpoint path). It also ends by itself, failed, when its run cannot
// go on: a sync step aborted because a worker did not push in time, or no worker heard from for
// idle_timeout_seconds (workers that died, or never came); failure() then says why, and so does
// server-<shard>.json ("status": "failed", "error").
//
// Access is controlled by default: without a token (and unless security.insecure), the server
// takes the one in <output_dir>/ps.token, which it creates (mode 0600, 32 random bytes in hex)
// when absent, so that the shards of a run sharing an output directory share it; without an
// output directory it makes one in memory (auth_token() gives it to in-process workers). With trace_updates, trace-server-<shard>.json in
// output_dir gets the first updates' spans as they happen (server_trace.h).
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <grpcpp/server.h>
#include <nlohmann/json.hpp>

#include "paramserver/checkpoint.h"
#include "paramserver/control_store.h"
#include "paramserver/key_placement.h"
#include "paramserver/ps_service.h"
#include "paramserver/security.h"
#include "paramserver/server_trace.h"
#include "paramserver/shard_updater.h"
#include "paramserver/worker_roster.h"

namespace dtbench {

struct ParameterServerOptions {
  std::string listen = "127.0.0.1:0";  // port 0: any free port (see address())
  int shard = 0;
  int worker_count = 1;
  PsMode mode = PsMode::Sync;
  std::string run_id;              // empty: adopt the first worker's
  double timeout_seconds = 60.0;   // sync: a missing worker fails the step after this long
  double idle_timeout_seconds = 300.0;  // no worker heard from for this long: the server ends, failed
  int64_t max_staleness = 0;       // async: 0 unbounded
  bool drop_missing_workers = false;  // sync: go on without a worker missing past the timeout
  int64_t checkpoint_every = 0;    // updates; 0: only on demand and at stop
  std::string checkpoint_path;     // empty: <output_dir>/server-<shard>.ckpt, or none without output_dir
  bool checkpoints = true;         // false: never write one (a benchmark's servers need none)
  std::string restore_path;        // start from this checkpoint
  std::string output_dir;          // where server-<shard>.json goes; empty: not written
  int64_t trace_updates = 0;       // trace-server-<shard>.json of the first N updates into output_dir; 0: none
  PlacementOptions placement;      // shard_count is the number of servers
  ServerSecurity security;
  int64_t max_message_bytes = kDefaultMaxMessageBytes;
};

class ParameterServer {
 public:
  // `arena` holds the initialised model's values; only this shard's keys are copied.
  ParameterServer(const ParamArena& arena, const OptimizerConfig& optimizer, ParameterServerOptions options);
  ~ParameterServer();
  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

  // host:port as bound (the chosen port when asked for port 0).
  const std::string& address() const { return address_; }
  const KeyPlacement& placement() const { return placement_; }
  // The token every call must carry ("" when insecure).
  const std::string& auth_token() const { return options_.security.auth_token; }
  // Where the token was written ("" when it was given, made in memory, or insecure).
  const std::string& token_file() const { return token_file_; }

  // Until the server is asked to stop (Shutdown call, every worker done, request_stop()); false
  // when `seconds` passed first.
  bool wait_for(double seconds);
  void request_stop();
  // Ends the run as failed, for `reason` (the first reason given is kept).
  void fail(const std::string& reason);
  // Why the server failed, or "" when it did not.
  std::string failure() const;
  // Stops serving, writes the statistics and the last checkpoint. Idempotent.
  void stop();

  int64_t version() const { return updater_->version(); }
  ShardState state() const { return updater_->state(); }
  nlohmann::json stats_json() const;
  // Writes the checkpoint now; returns its path. InputError without a checkpoint path.
  std::string checkpoint_now();

 private:
  void resolve_token();
  void start_serving();
  void watch_idle();
  ShardState initial_state(const ParamArena& arena);
  CheckpointHeader checkpoint_header() const;
  void save_checkpoint(const ShardState& state);
  bool on_shutdown(int worker, const std::string& failure);
  // server-<shard>.json, "stopped", or "failed" with the reason when `failure` says one.
  void write_stats(const std::string& failure);

  ParameterServerOptions options_;
  KeyPlacement placement_;
  KeyIndex index_;
  std::string checkpoint_path_;
  std::string token_file_;
  std::mutex checkpoint_mutex_;  // the update thread (every N updates) and Checkpoint calls
  std::unique_ptr<ServerTrace> trace_;  // written by the update thread; declared first, destroyed after it
  std::unique_ptr<ShardUpdater> updater_;
  WorkerRoster roster_;
  ControlStore control_;
  TrafficStats traffic_;
  std::unique_ptr<PsService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  int port_ = 0;
  SteadyClock::time_point started_;

  mutable std::mutex stop_mutex_;
  std::condition_variable stop_requested_cv_;
  bool stop_requested_ = false;
  bool stopped_ = false;
  std::string failure_;
  std::thread idle_watch_;
};

}  // namespace dtbench
