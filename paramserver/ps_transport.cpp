#include "paramserver/ps_transport.h"

#include <algorithm>
#include <chrono>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "core/device/device.h"
#include "core/optim/optimizer_settings.h"
#include "core/util/clock.h"
#include "core/util/error.h"
#include "paramserver/server_clock.h"
#include "paramserver/server_stats.h"

namespace dtbench {

namespace {
// How long a roll call of the servers waits, after a failure: far beyond a round trip, and short
// beside the second mpirun allows a stopped rank before SIGKILL.
constexpr double kRollCallSeconds = 0.5;
// How long a worker that failed gives each server to hear of it: far beyond a round trip, and the
// failure report is the last thing the worker does.
constexpr double kFailureReportSeconds = 1.0;

using Clock = std::chrono::steady_clock;

}  // namespace

PsTransport::PsTransport(PsTransportOptions options) : options_(std::move(options)) {
  if (options_.servers.empty()) fail_input("transport {} needs parameter servers: set ps.servers=host:port[,...]", name());
  if (options_.rank < 0 || options_.rank >= options_.world) {
    fail_input("worker rank {} is out of range for {} workers", options_.rank, options_.world);
  }
}

PsTransport::~PsTransport() {
  pipeline_.reset();  // its thread may be pushing a shard through the client
  if (model_ != nullptr) model_->set_gradient_ready_hook({});
}

PsClientOptions client_options(const PsTransportOptions& options, int rank, int world) {
  return {.servers = options.servers,
          .run_id = options.run_id,
          .worker = rank,
          .world = world,
          .timeout_seconds = options.timeout_seconds,
          .retries = options.retries,
          .backoff_seconds = options.backoff_seconds,
          .security = options.security,
          .max_message_bytes = options.max_message_bytes};
}

void PsTransport::begin(Model& model) {
  ParamArena& arena = model.arena();
  placement_ = std::make_unique<KeyPlacement>(
      arena, PlacementOptions{static_cast<int>(options_.servers.size()), options_.key_float_count, options_.placement});
  client_ = std::make_unique<PsClient>(client_options(options_, options_.rank, options_.world), *placement_);
  const auto replies = client_->register_all();
  const ps::Mode wanted = options_.mode == PsMode::Sync ? ps::SYNC : ps::ASYNC;
  for (const auto& reply : replies) {
    const std::string& address = client_->connection(reply.shard()).address();
    if (reply.mode() != wanted) {
      fail_input("parameter server {} runs in {} mode but this worker's transport is {}", address,
                 reply.mode() == ps::SYNC ? "sync" : "async", name());
    }
    // The servers update: a learning rate set on the workers alone would be silently ignored.
    if (!options_.optimizer.empty() && reply.optimizer() != options_.optimizer) {
      fail_input("parameter server {} updates with another optimizer than this worker's blueprint asks for ({}): "
                 "the servers apply the updates, so start them with the workers' blueprint (dtbench ps --config, "
                 "--set) or set the same optimizer here",
                 address, optimizer_settings_difference(reply.optimizer(), "on the server", options_.optimizer, "here"));
    }
  }
  clock_ = align_with_server(client_->connection(0));
  const auto pulls = client_->for_each_shard([&](int shard) { return client_->pull(shard, arena.values()); });
  versions_.clear();
  for (const auto& pull : pulls) versions_.push_back(pull.version);
  if (options_.mode == PsMode::Sync && std::adjacent_find(versions_.begin(), versions_.end(), std::not_equal_to<>()) !=
                                           versions_.end()) {
    fail_input("the parameter servers are at different versions ({}): sync mode needs them restored from the same "
               "step",
               fmt::join(versions_, ", "));
  }
  if (options_.bucket_bytes > 0 && options_.overlap) start_pipeline(model);
}

void PsTransport::start_pipeline(Model& model) {
  model_ = &model;
  // A bucket per shard: the parameters with a key on it (a large parameter's keys may lie on
  // several shards, and with hash placement a shard's keys are scattered over the model).
  const auto& params = model.arena().params();
  std::vector<std::vector<int>> shards_of_param(params.size());
  for (const Key& key : placement_->keys()) {
    auto& shards = shards_of_param[static_cast<size_t>(key.param)];
    if (std::find(shards.begin(), shards.end(), key.shard) == shards.end()) shards.push_back(key.shard);
  }
  const int shards = client_->shard_count();
  results_.assign(static_cast<size_t>(shards), PushPullResult{});
  BucketPipeline::Handler prepare;
  if (DeviceBackend* device = model.device()) {
    prepare = [this, device](int shard) {
      const auto start = Clock::now();
      const KeyIndex& index = client_->index(shard);
      const std::span<float> grads = model_->arena().grads();
      for (size_t k = 0; k < index.keys.size(); ++k) {
        device->move_to_host(grads.subspan(static_cast<size_t>(index.offsets[k]),
                                           static_cast<size_t>(index.float_counts[k])));
      }
      bucket_d2h_seconds_ += seconds_since(start);
    };
  }
  pipeline_ = std::make_unique<BucketPipeline>(
      BucketPlan::from_membership(model.arena(), std::move(shards_of_param), shards),
      [this](int shard) {
        ParamArena& arena = model_->arena();
        const auto s = static_cast<size_t>(shard);
        results_[s] = client_->push_pull(shard, versions_[s], arena.grads(), arena.values());
      },
      std::move(prepare), /*lanes=*/shards);
  model.set_gradient_ready_hook([this](const Param& param) { pipeline_->gradient_ready(param); });
}

void PsTransport::synchronize(Model& model, int64_t, SyncTimes& times) {
  DTB_CHECK(client_ != nullptr, "{}: synchronize before start", name());
  try {
    if (pipeline_ != nullptr) {
      push_and_pull_buckets(times);
    } else {
      push_and_pull(model, times);
    }
  } catch (const IoError& error) {
    // Which servers still answer: the one this worker waited on may only wait for another.
    throw IoError(fmt::format("{}; {}", error.what(), client_->roll_call_text(kRollCallSeconds)));
  }
}

// One PushPull per shard, all at once: the gradient goes out and the values of the version it
// made come back in the same call.
void PsTransport::push_and_pull(Model& model, SyncTimes& times) {
  ParamArena& arena = model.arena();
  const auto start = Clock::now();
  const auto results = client_->for_each_shard([&](int shard) {
    return client_->push_pull(shard, versions_[static_cast<size_t>(shard)], arena.grads(), arena.values());
  });
  const double total = seconds_since(start);
  double written = 0.0, reading = 0.0;
  for (size_t shard = 0; shard < results.size(); ++shard) {
    const PushPullResult& result = results[shard];
    written = std::max(written, result.written_seconds);
    reading = std::max(reading, result.seconds - result.answered_seconds);
    times.bytes_sent += result.bytes_sent;
    times.bytes_received += result.bytes_received;
    if (options_.mode == PsMode::Async) ++staleness_counts_[result.staleness];
    versions_[shard] = result.version;
  }
  times.push = written;
  times.pull = std::min(reading, total - written);
  times.wait = std::max(total - written - times.pull, 0.0);  // transfer: the rest, push and pull among it
  // On the timeline: writing the gradients (the slowest shard's), waiting for the servers'
  // answers (in sync mode, for the other workers), reading the new values (the slowest shard's).
  const auto push_end = start + to_duration(written);
  const auto end = start + to_duration(total);
  const auto pull_start = end - to_duration(times.pull);
  spans_.assign(3, CommSpan{});
  spans_[0] = {.what = "push", .index = -1, .bytes = times.bytes_sent, .ready = start, .start = start, .end = push_end};
  spans_[1] = {.what = "wait for servers", .index = -1, .bytes = 0, .ready = push_end, .start = push_end, .end = pull_start};
  spans_[2] = {.what = "pull", .index = -1, .bytes = times.bytes_received, .ready = pull_start, .start = pull_start, .end = end};
  times.spans = spans_;
  ++steps_;
}

namespace {

// How long any of `spans` ran before `until`: overlapping spans count once. Sorts `spans`.
double busy_before(std::span<PsTransport::TimeSpan> spans, Clock::time_point until) {
  std::sort(spans.begin(), spans.end());
  double busy = 0.0;
  Clock::time_point covered = Clock::time_point::min();
  for (const auto& [start, end] : spans) {
    const Clock::time_point from = std::max(start, covered), to = std::min(end, until);
    if (to > from) busy += seconds_between(from, to);
    covered = std::max(covered, end);
  }
  return busy;
}

}  // namespace

// The shards went at once, each as soon as backward had finished it, so the step's comm split is
// read as push_and_pull's is for shards begun together: push until the last shard had all its
// gradient bytes, pull the slowest shard's reading of the new values, wait the rest of the time
// from the first shard's start to the last one's end. What ran before this worker reached the end
// of backward is the hidden part.
void PsTransport::push_and_pull_buckets(SyncTimes& times) {
  const auto arrival = Clock::now();
  const std::span<const BucketTimes> done = pipeline_->wait_all();
  spans_.clear();
  busy_.clear();
  Clock::time_point first_start = Clock::time_point::max(), last_written = Clock::time_point::min(),
                    last_end = Clock::time_point::min();
  double reading = 0.0;
  for (const BucketTimes& bucket : done) {
    const auto shard = static_cast<size_t>(bucket.bucket);
    const PushPullResult& result = results_[shard];
    const double pull = std::min(result.seconds - result.answered_seconds, result.seconds - result.written_seconds);
    times.bytes_sent += result.bytes_sent;
    times.bytes_received += result.bytes_received;
    if (options_.mode == PsMode::Async) ++staleness_counts_[result.staleness];
    versions_[shard] = result.version;
    const auto push_end = bucket.start + to_duration(result.written_seconds);
    const auto pull_start = bucket.end - to_duration(pull);
    first_start = std::min(first_start, bucket.start);
    last_written = std::max(last_written, push_end);
    last_end = std::max(last_end, bucket.end);
    reading = std::max(reading, pull);
    busy_.emplace_back(bucket.start, bucket.end);
    const int index = bucket.bucket;
    spans_.push_back({.what = "push", .index = index, .bytes = result.bytes_sent, .ready = bucket.ready,
                      .start = bucket.start, .end = push_end});
    spans_.push_back({.what = "wait for servers", .index = index, .bytes = 0, .ready = push_end, .start = push_end,
                      .end = std::max(push_end, pull_start)});
    spans_.push_back({.what = "pull", .index = index, .bytes = result.bytes_received, .ready = pull_start,
                      .start = pull_start, .end = bucket.end});
  }
  if (!done.empty()) {
    const double total = seconds_between(first_start, last_end);
    times.push = seconds_between(first_start, last_written);
    times.pull = std::min(reading, total - times.push);
    times.wait = std::max(total - times.push - times.pull, 0.0);
    times.hidden = busy_before(busy_, arrival);
  }
  times.d2h += std::exchange(bucket_d2h_seconds_, 0.0);
  times.spans = spans_;
  ++steps_;
}

void PsTransport::end(Model& model) {
  pipeline_.reset();
  model.set_gradient_ready_hook({});
  weights_checksum_ = fmt::format("{:016x}", weights_checksum(model.arena().values()));
  if (client_ == nullptr) return;
  // Tell every server this worker is done (a server stops once all its workers are).
  client_->for_each_shard([&](int shard) {
    try {
      client_->connection(shard).shutdown(options_.rank);
    } catch (const std::exception& error) {
      spdlog::warn("worker {}: saying goodbye to {}: {}", options_.rank, client_->connection(shard).address(),
                   error.what());
    }
    return 0;
  });
}

void PsTransport::abandon(const std::string& reason) noexcept {
  if (client_ == nullptr) return;
  try {
    client_->for_each_shard([&](int shard) {
      PsConnection& connection = client_->connection(shard);
      const grpc::Status status = connection.report_failure(options_.rank, reason, kFailureReportSeconds);
      if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
        // Most often the server ended first, for the failure this worker is ending for.
        spdlog::info("worker {}: {} is gone; it need not hear of this worker's failure", options_.rank,
                     connection.address());
      } else if (!status.ok()) {
        spdlog::warn("worker {}: could not tell {} that this worker failed: {}", options_.rank,
                     connection.address(), status.error_message());
      }
      return 0;
    });
  } catch (const std::exception& error) {
    spdlog::warn("worker {}: telling the servers of the failure: {}", options_.rank, error.what());
  }
}

nlohmann::json PsTransport::summary() const {
  nlohmann::json json = {{"transport", name()},
                         {"servers", options_.servers},
                         {"mode", mode_name(options_.mode)},
                         {"rank", options_.rank},
                         {"world", options_.world},
                         {"run_id", options_.run_id},
                         {"placement", placement_name(options_.placement)},
                         {"key_float_count", options_.key_float_count},
                         {"timeout_seconds", options_.timeout_seconds},
                         {"tls", !options_.security.tls_ca_file.empty()},
                         {"auth_token", !options_.security.auth_token.empty()},
                         {"buffers", "local: batch-norm running statistics are not synchronised"},
                         {"steps", steps_},
                         {"bucket_bytes", options_.bucket_bytes},
                         {"overlap", pipeline_ != nullptr || (options_.bucket_bytes > 0 && options_.overlap)},
                         {"buckets", options_.bucket_bytes > 0 && options_.overlap
                                         ? "one per shard, each pushed and pulled as soon as backward finishes it, "
                                           "the shards at once"
                                         : "none: every shard at once after backward"}};
  if (placement_ != nullptr) {
    std::vector<size_t> keys;
    std::vector<int64_t> floats;
    for (int shard = 0; shard < placement_->options().shard_count; ++shard) {
      keys.push_back(placement_->keys_of(shard).size());
      floats.push_back(placement_->float_count_of(shard));
    }
    json["keys_per_shard"] = keys;
    json["floats_per_shard"] = floats;
    json["versions"] = versions_;
  }
  if (options_.mode == PsMode::Async) json["staleness"] = staleness_json(staleness_counts_);
  if (clock_) {
    json["clock_offset_to_server_0_seconds"] = clock_->offset_seconds;
    json["clock_uncertainty_seconds"] = clock_->uncertainty_seconds;
  }
  if (!weights_checksum_.empty()) json["weights_checksum"] = weights_checksum_;
  return json;
}

}  // namespace dtbench
