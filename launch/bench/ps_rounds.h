#pragma once
// The machinery of `bench ps` (ps.cpp): in-process sync servers holding one flat parameter, bench
// workers that each push and pull every shard as a ps-sync worker does, the warm-up, and the
// check round whose result is known in advance.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "paramserver/for_each_shard.h"
#include "paramserver/parameter_server.h"
#include "paramserver/ps_client.h"

namespace dtbench {

struct PsBenchOptions {
  std::string sizes = "4KiB:64MiB";
  int workers = 1;       // worker threads in this process
  int first_worker = 0;  // their ids: first_worker .. first_worker + workers - 1
  int world = 0;         // workers the servers wait for, in every process; 0: `workers`
  std::vector<std::string> servers;  // host:port in shard order; empty: in-process servers
  int shards = 1;                    // in-process servers per size
  int iterations = 0;                // 0: automatic, about target_ms per size
  int warmup = 5;
  double target_ms = 200;
  std::string run_id = "bench-ps";
  double timeout_s = 60;
  std::string json;
  std::string auth_token_file;  // --servers' token; in-process servers get a fresh one (auth_token)
  std::string auth_token;
};

constexpr int64_t kKeyFloatCount = 64 * 1024;  // ps.key_kb's default: keys of at most 256 KiB

// K shards of one flat parameter of `float_count` floats, in this process, on free loopback ports.
class LocalServers {
 public:
  LocalServers(int64_t float_count, const PsBenchOptions& options);
  std::vector<std::string> addresses() const;
  // Fails every pending push: called when a worker failed, so the others get an error at once.
  void stop();

 private:
  std::vector<std::unique_ptr<ParameterServer>> shards_;
};

// What one server says it has spent since it started (its Stats call): the updates it made and the
// seconds of their passes (averaging, optimizer step, checks), of sync steps' waits from the first
// worker's gradient to the last's, and of gradients queued for the update thread.
struct ServerTimes {
  int64_t updates = 0;
  double update_seconds = 0;
  double straggler_seconds = 0;
  double queueing_seconds = 0;
};

struct RoundTimes {
  double push = 0;
  double wait = 0;
  double pull = 0;
  double total = 0;
};

// One worker: a line to every shard and its two buffers, laid out as the servers' Register
// replies say (shard 0's keys, then shard 1's, ..., each in key order).
class BenchWorker {
 public:
  BenchWorker(int worker, const PsBenchOptions& options, const std::vector<std::string>& servers);
  // Registers with every shard, lays out the buffers and pulls the current values; against async
  // servers, then waits until every worker of the world has done so.
  void connect();
  // One step: push grads() to every shard at once, then pull every shard's new values (sync: once
  // every worker's gradient is in; async: once this one's is applied).
  RoundTimes round();
  // Async: pulls until every shard has applied every worker's rounds so far, as many as this
  // worker's (each worker makes the same rounds), so that values() holds all of them. Sync: the
  // last round's answer already did. Gives up after the bench's --timeout-s.
  void settle();
  bool async() const { return async_; }
  // Tells every shard this worker is done (a server stops once all its workers are).
  void goodbye();
  // Every shard's ServerTimes so far, in shard order.
  std::vector<ServerTimes> server_times();

  int id() const { return worker_; }
  std::vector<float>& grads() { return grads_; }
  const std::vector<float>& values() const { return values_; }
  // The values pulled at connect(): the timed rounds push zeros, so every later value equals them
  // until the check round (in async, another worker's check push may be in a later pull).
  const std::vector<float>& initial_values() const { return initial_values_; }

 private:
  int shard_count() const { return static_cast<int>(lines_.size()); }
  PullResult pull(int shard);

  int worker_;
  int world_;
  std::string run_id_;
  double timeout_s_;
  ConnectionOptions control_;  // shard 0, for the async start's gather
  std::vector<std::unique_ptr<PsConnection>> lines_;
  std::unique_ptr<ShardThreads> shard_threads_;  // as PsClient: a round costs what a ps-sync step costs
  std::vector<KeyIndex> indexes_;
  std::vector<int64_t> versions_;  // per shard: the version of the values now in values_
  int64_t rounds_ = 0;
  bool async_ = false;  // the servers' mode, from their Register replies
  std::vector<float> grads_;
  std::vector<float> values_;
  std::vector<float> initial_values_;
};

// fn(worker) on a thread per worker. The first failure runs `on_failure` at once (so the other
// workers are not left waiting for the failed one at the sync server) and is rethrown at the end.
void run_workers(int workers, const std::function<void(int)>& fn, const std::function<void()>& on_failure);

// The workers' warm-up rounds; returns the worker's mean round (the first round, which pays for
// connection set-up and page faults, left out unless it is the only one).
double warm_up(BenchWorker& worker, int rounds);

// The check round: every worker pushes known small integers; returns how many pulled values
// differ from old value − the mean gradient of all `world` workers, those of other processes
// included (external servers must run SGD at lr 1). Async servers apply each worker's share
// apart, so there every worker first waits until all are in (settle).
int64_t check_round(std::vector<std::unique_ptr<BenchWorker>>& workers, int world, const std::function<void()>& on_failure);

}  // namespace dtbench
