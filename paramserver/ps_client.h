#pragma once
// A worker's view of all its parameter servers: one connection per shard, the shard's keys located
// in the worker's arena, and pushes / pulls to every shard at once.
#include <exception>
#include <span>
#include <thread>
#include <vector>

#include "paramserver/for_each_shard.h"
#include "paramserver/key_placement.h"
#include "paramserver/ps_connection.h"

namespace dtbench {

struct PsClientOptions {
  std::vector<std::string> servers;  // host:port, shard order
  std::string run_id;
  int worker = 0;
  int world = 1;
  double timeout_seconds = 60.0;  // the servers' step timeout; calls wait a little longer than this
  int retries = 4;
  double backoff_seconds = 0.1;
  ClientSecurity security;
  int64_t max_message_bytes = kDefaultMaxMessageBytes;
};

// The connection settings every line to a server of this run uses.
ConnectionOptions connection_options(const PsClientOptions& options, int shard);

class PsClient {
 public:
  // `placement` must have options.servers.size() shards.
  PsClient(PsClientOptions options, const KeyPlacement& placement);

  int shard_count() const { return static_cast<int>(connections_.size()); }
  PsConnection& connection(int shard) { return *connections_.at(static_cast<size_t>(shard)); }
  const KeyIndex& index(int shard) const { return indexes_.at(static_cast<size_t>(shard)); }

  // Registers with every server and checks that each holds exactly the keys this worker's
  // placement gives it (same model, ps.key_kb and ps.placement), else InputError.
  std::vector<ps::RegisterReply> register_all();
  PushResult push(int shard, int64_t version, std::span<const float> grads);
  // Asks every server at once whether it answers within `seconds`: "silent: parameter server
  // H:P (shard 2) did not answer within 1.0 s (shards 0, 1 did)". After a failed push or pull, the
  // server a worker waited on is often not the one that is gone (a sync push waits for all workers).
  std::string roll_call_text(double seconds);
  PullResult pull(int shard, std::span<float> values);
  // Push and pull in one call (PushPull): the values of the version this gradient made.
  PushPullResult push_pull(int shard, int64_t version, std::span<const float> grads, std::span<float> values);

  // fn(shard) for every shard at once (this thread takes shard 0); the first failure is rethrown
  // after all have finished.
  template <typename Fn>
  auto for_each_shard(Fn fn) -> std::vector<decltype(fn(0))> {
    return shard_threads_->run(std::move(fn));
  }

 private:
  PsClientOptions options_;
  std::vector<std::unique_ptr<PsConnection>> connections_;
  std::unique_ptr<ShardThreads> shard_threads_;  // one per shard beyond the first, for the client's life
  std::vector<KeyIndex> indexes_;
};

}  // namespace dtbench
