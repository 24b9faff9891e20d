#include "paramserver/ps_client.h"

#include <future>

#include <fmt/ranges.h>

#include "core/util/error.h"

namespace dtbench {

ConnectionOptions connection_options(const PsClientOptions& options, int shard) {
  return {.address = options.servers.at(static_cast<size_t>(shard)),
          .shard = shard,
          .security = options.security,
          .call_timeout_seconds = options.timeout_seconds,
          // A sync push waits for the slowest worker; the server gives up after timeout_seconds
          // and says who was missing, so the worker waits a little longer to hear that.
          .push_timeout_seconds = options.timeout_seconds + std::max(5.0, 0.5 * options.timeout_seconds),
          .connect_timeout_seconds = options.timeout_seconds,
          .retries = options.retries,
          .backoff_seconds = options.backoff_seconds,
          .max_message_bytes = options.max_message_bytes};
}

PsClient::PsClient(PsClientOptions options, const KeyPlacement& placement)
    : options_(std::move(options)) {
  if (options_.servers.empty()) fail_input("no parameter servers given: set ps.servers=host:port[,host:port...]");
  if (static_cast<int>(options_.servers.size()) != placement.options().shard_count) {
    fail_input("{} parameter servers given but the key placement has {} shards", options_.servers.size(),
               placement.options().shard_count);
  }
  for (int shard = 0; shard < static_cast<int>(options_.servers.size()); ++shard) {
    connections_.push_back(std::make_unique<PsConnection>(connection_options(options_, shard)));
    indexes_.push_back(KeyIndex::in_arena(placement, shard));
  }
  shard_threads_ = std::make_unique<ShardThreads>(connections_.size());
}

std::vector<ps::RegisterReply> PsClient::register_all() {
  auto replies = for_each_shard([&](int shard) {
    return connection(shard).register_worker(options_.run_id, options_.worker, options_.world);
  });
  for (int shard = 0; shard < shard_count(); ++shard) {
    const ps::RegisterReply& reply = replies[static_cast<size_t>(shard)];
    const KeyIndex& own = index(shard);
    bool same = reply.shard() == shard && reply.shard_count() == shard_count() &&
                reply.keys_size() == static_cast<int>(own.keys.size());
    for (int k = 0; same && k < reply.keys_size(); ++k) {
      same = reply.keys(k).key() == own.keys[static_cast<size_t>(k)] &&
             reply.keys(k).float_count() == own.float_counts[static_cast<size_t>(k)];
    }
    if (!same) {
      fail_input("parameter server {} is shard {} of {} with {} keys ({} floats), but this worker expects shard {} of "
                 "{} with {} keys ({} floats): servers and workers must use the same blueprint (model, ps.key_kb, "
                 "ps.placement) and list the servers in shard order",
                 connection(shard).address(), reply.shard(), reply.shard_count(), reply.keys_size(),
                 reply.float_count(), shard, shard_count(), own.keys.size(), own.float_count);
    }
  }
  return replies;
}

PushResult PsClient::push(int shard, int64_t version, std::span<const float> grads) {
  return connection(shard).push(options_.worker, version, index(shard), grads.data());
}

PullResult PsClient::pull(int shard, std::span<float> values) {
  return connection(shard).pull(options_.worker, index(shard), values.data());
}

PushPullResult PsClient::push_pull(int shard, int64_t version, std::span<const float> grads, std::span<float> values) {
  return connection(shard).push_pull(options_.worker, version, index(shard), grads.data(), values.data());
}

std::string PsClient::roll_call_text(double seconds) {
  std::vector<std::future<bool>> answers;
  for (auto& connection : connections_) {
    answers.push_back(std::async(std::launch::async, [&connection, seconds] { return connection->answers_within(seconds); }));
  }
  std::vector<std::string> silent;
  std::vector<int> answered;
  for (size_t shard = 0; shard < answers.size(); ++shard) {
    if (answers[shard].get()) {
      answered.push_back(static_cast<int>(shard));
    } else {
      silent.push_back(fmt::format("parameter server {} (shard {})", connections_[shard]->address(), shard));
    }
  }
  if (silent.empty()) return fmt::format("every parameter server answered within {:.1f} s", seconds);
  return fmt::format("silent: {} did not answer within {:.1f} s{}", fmt::join(silent, ", "), seconds,
                     answered.empty() ? std::string()
                                      : fmt::format(" (shard{} {} did)", answered.size() > 1 ? "s" : "",
                                                    fmt::join(answered, ", ")));
}

}  // namespace dtbench
