#include "launch/bench/ps_rounds.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/util/clock.h"
#include "core/util/error.h"
#include "paramserver/ps_channel.h"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

// A small integer in -16..15 from a hash of (seed, i): exact in float32 and not periodic in i, so a
// slice written to the wrong place shows.
float small_integer(uint64_t seed, int64_t i) {
  uint64_t x = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull ^ seed * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 31)) * 0x94D049BB133111EBull;
  return static_cast<float>(static_cast<int>(x >> 59) - 16);
}

float check_gradient(int worker, int64_t i) { return small_integer(1000 + static_cast<uint64_t>(worker), i); }

}  // namespace

// fn(worker) on a thread per worker. The first failure runs `on_failure` at once (so the other
// workers are not left waiting for the failed one at the sync server) and is rethrown at the end.
void run_workers(int workers, const std::function<void(int)>& fn, const std::function<void()>& on_failure) {
  std::mutex mutex;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  for (int worker = 0; worker < workers; ++worker) {
    threads.emplace_back([&, worker] {
      try {
        fn(worker);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (first) return;
        first = std::current_exception();
        on_failure();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  if (first) std::rethrow_exception(first);
}

// The workers' warm-up rounds; returns the slowest worker's mean round (the first round, which
// pays for connection set-up and page faults, left out unless it is the only one).
double warm_up(BenchWorker& worker, int rounds) {
  double timed = 0;
  int counted = 0;
  for (int round = 0; round < rounds; ++round) {
    const double seconds = worker.round().total;
    if (round > 0 || rounds == 1) {
      timed += seconds;
      ++counted;
    }
  }
  return counted > 0 ? timed / counted : 0.0;
}

// The check round: worker w pushes check_gradient(w, i), small integers, exact in float32 and
// different per worker, so a gradient lost, doubled or misplaced moves a value by a multiple of
// 1/N. The sync server sums them in worker order, scales by 1/N and applies SGD at lr 1, so every
// worker must pull old − sum · (1/N). The tolerance admits only another rounding of that mean.
int64_t check_round(std::vector<std::unique_ptr<BenchWorker>>& workers, int world, const std::function<void()>& on_failure) {
  const int here = static_cast<int>(workers.size());
  const std::vector<float>& old = workers[0]->initial_values();
  run_workers(here, [&](int w) {
    BenchWorker& worker = *workers[static_cast<size_t>(w)];
    std::vector<float>& grads = worker.grads();
    for (size_t i = 0; i < grads.size(); ++i) grads[i] = check_gradient(worker.id(), static_cast<int64_t>(i));
    worker.round();
    worker.settle();
    std::fill(grads.begin(), grads.end(), 0.0f);
  }, on_failure);
  const float scale = 1.0f / static_cast<float>(world);
  // Async rounds each of the world's shares apart: a rounding per worker.
  const float slack = workers[0]->async() ? 2.0f + 2.0f * static_cast<float>(world) : 4.0f;
  int64_t wrong = 0;
  for (size_t i = 0; i < old.size(); ++i) {
    float sum = 0.0f;
    for (int w = 0; w < world; ++w) sum += check_gradient(w, static_cast<int64_t>(i));
    const float expected = old[i] - (world > 1 ? sum * scale : sum);
    const float tolerance = slack * FLT_EPSILON * std::max(1.0f, std::fabs(expected));
    for (int w = 0; w < here; ++w) {
      const float got = workers[static_cast<size_t>(w)]->values()[i];
      if (std::fabs(got - expected) <= tolerance) continue;
      if (wrong++ == 0) {
        spdlog::error("worker {} pulled {} at element {} of {}, expected {} (old value {} minus the mean gradient; "
                      "external servers must run SGD at lr 1 without momentum or weight decay)",
                      workers[static_cast<size_t>(w)]->id(), got, i, old.size(), expected, old[i]);
      }
    }
  }
  return wrong;
}

LocalServers::LocalServers(int64_t float_count, const PsBenchOptions& options) {
  Param payload{.name = "payload", .shape = {float_count}};
  ParamArena arena;
  arena.bind({&payload});
  std::span<float> values = arena.values();
  for (size_t i = 0; i < values.size(); ++i) values[i] = small_integer(0, static_cast<int64_t>(i));
  // Keys no larger than a shard's share, so every shard holds part of even the smallest payload.
  const int64_t share = (float_count + options.shards - 1) / options.shards;
  for (int shard = 0; shard < options.shards; ++shard) {
    ParameterServerOptions server;  // listens on 127.0.0.1:0
    server.shard = shard;
    server.worker_count = options.workers;
    server.mode = PsMode::Sync;
    server.run_id = options.run_id;
    server.timeout_seconds = options.timeout_s;
    server.security.auth_token = options.auth_token;
    server.placement = {options.shards, std::min(kKeyFloatCount, share), PlacementPolicy::Balanced};
    shards_.push_back(std::make_unique<ParameterServer>(
        arena, OptimizerConfig{.name = "sgd", .learning_rate = 1.0f}, std::move(server)));
  }
}

std::vector<std::string> LocalServers::addresses() const {
  std::vector<std::string> list;
  for (const auto& shard : shards_) list.push_back(shard->address());
  return list;
}

// Fails every pending push: called when a worker failed, so the others get an error at once.
void LocalServers::stop() {
  for (auto& shard : shards_) shard->stop();
}

BenchWorker::BenchWorker(int worker, const PsBenchOptions& options, const std::vector<std::string>& servers)
    : worker_(worker), world_(options.world > 0 ? options.world : options.workers), run_id_(options.run_id),
      timeout_s_(options.timeout_s) {
  PsClientOptions client;
  client.servers = servers;
  client.run_id = options.run_id;
  client.worker = worker;
  client.world = world_;
  client.timeout_seconds = options.timeout_s;
  client.security.auth_token = options.auth_token;
  client.retries = 2;
  client.backoff_seconds = 0.05;
  for (int shard = 0; shard < static_cast<int>(servers.size()); ++shard) {
    lines_.push_back(std::make_unique<PsConnection>(connection_options(client, shard)));
  }
  shard_threads_ = std::make_unique<ShardThreads>(lines_.size());
  control_ = connection_options(client, 0);
}

// Registers with every shard, lays out the buffers and pulls the current values.
void BenchWorker::connect() {
  const auto replies = shard_threads_->run([&](int shard) {
    return lines_[static_cast<size_t>(shard)]->register_worker(run_id_, worker_, world_);
  });
  int64_t offset = 0;
  indexes_.clear();
  for (int shard = 0; shard < shard_count(); ++shard) {
    const ps::RegisterReply& reply = replies[static_cast<size_t>(shard)];
    const std::string& address = lines_[static_cast<size_t>(shard)]->address();
    if (reply.shard() != shard || reply.shard_count() != shard_count()) {
      fail_input("parameter server {} is shard {} of {}, but --servers lists it as shard {} of {}", address,
                 reply.shard(), reply.shard_count(), shard, shard_count());
    }
    if (shard > 0 && (reply.mode() == ps::ASYNC) != async_) {
      fail_input("parameter server {} runs in {} mode, shard 0 in the other", address,
                 reply.mode() == ps::ASYNC ? "async" : "sync");
    }
    async_ = reply.mode() == ps::ASYNC;
    KeyIndex index;
    for (const ps::KeyInfo& key : reply.keys()) {
      index.position[key.key()] = index.keys.size();
      index.keys.push_back(key.key());
      index.float_counts.push_back(key.float_count());
      index.offsets.push_back(offset);
      index.float_count += key.float_count();
      offset += key.float_count();
    }
    indexes_.push_back(std::move(index));
  }
  grads_.assign(static_cast<size_t>(offset), 0.0f);
  values_.assign(static_cast<size_t>(offset), 0.0f);
  const auto pulls = shard_threads_->run([&](int shard) { return pull(shard); });
  versions_.clear();
  for (const PullResult& result : pulls) versions_.push_back(result.version);
  initial_values_ = values_;
  rounds_ = 0;
  // Async servers let a worker push as soon as it has connected; one that connected late could
  // find another's check push already in its first values. Every worker waits here for all to
  // have connected (a gather through shard 0 ends only once worker 0 has heard from all).
  if (async_) PsControlChannel(control_, run_id_, worker_, world_, timeout_s_).gather("connected");
}

// One step, as a ps worker takes it: a PushPull to every shard at once, the gradient out and the
// new values back in the same call.
RoundTimes BenchWorker::round() {
  const auto start = Clock::now();
  const auto results = shard_threads_->run([&](int shard) {
    const auto s = static_cast<size_t>(shard);
    return lines_[s]->push_pull(worker_, versions_[s], indexes_[s], grads_.data(), values_.data());
  });
  RoundTimes times{.total = seconds_since(start)};
  ++rounds_;
  for (size_t shard = 0; shard < results.size(); ++shard) {
    // Sync: the step's version, the next; async: at least the next, other workers' pushes may be in.
    const int64_t version = results[shard].version, next = versions_[shard] + 1;
    if (async_ ? version < next : version != next) {
      throw IoError(fmt::format("parameter server {} answered worker {}'s push at version {} with the values of "
                                "version {}, not {}the next",
                                lines_[shard]->address(), worker_, versions_[shard], version, async_ ? "at least " : ""));
    }
    versions_[shard] = results[shard].version;
    times.push = std::max(times.push, results[shard].written_seconds);
    times.pull = std::max(times.pull, results[shard].seconds - results[shard].answered_seconds);
  }
  times.pull = std::min(times.pull, times.total - times.push);
  times.wait = std::max(times.total - times.push - times.pull, 0.0);
  return times;
}

void BenchWorker::settle() {
  if (!async_) return;
  const auto start = Clock::now();
  for (int shard = 0; shard < shard_count(); ++shard) {
    const auto s = static_cast<size_t>(shard);
    const int64_t all_in = world_ * rounds_;  // async servers count every gradient from version 0
    while (versions_[s] < all_in) {
      if (seconds_since(start) > timeout_s_) {
        throw IoError(fmt::format("parameter server {} is at version {} after {:.0f} s; worker {} waited for {} (every "
                                  "worker's {} rounds): were the servers fresh, and did every bench process make "
                                  "the same rounds?",
                                  lines_[s]->address(), versions_[s], timeout_s_, worker_, all_in, rounds_));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      versions_[s] = pull(shard).version;
    }
  }
}

// Tells every shard this worker is done (a server stops once all its workers are).
void BenchWorker::goodbye() {
  shard_threads_->run([&](int shard) {
    try {
      lines_[static_cast<size_t>(shard)]->shutdown(worker_);
    } catch (const std::exception& error) {
      spdlog::warn("worker {}: saying goodbye: {}", worker_, error.what());
    }
    return 0;
  });
}

std::vector<ServerTimes> BenchWorker::server_times() {
  return shard_threads_->run([&](int shard) {
    const nlohmann::json updates =
        nlohmann::json::parse(lines_[static_cast<size_t>(shard)]->stats().json()).at("updates");
    const auto seconds = [&](const char* what) { return updates.at(what).at("total_seconds").get<double>(); };
    return ServerTimes{.updates = updates.at("updates_applied").get<int64_t>(),
                       .update_seconds = seconds("aggregation") + seconds("apply"),
                       .straggler_seconds = seconds("straggler_wait"),
                       .queueing_seconds = seconds("queueing")};
  });
}

PullResult BenchWorker::pull(int shard) {
  return lines_[static_cast<size_t>(shard)]->pull(worker_, indexes_[static_cast<size_t>(shard)], values_.data());
}

}  // namespace dtbench
