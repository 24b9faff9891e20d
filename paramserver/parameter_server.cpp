#include "paramserver/parameter_server.h"

#include <filesystem>
#include <fstream>

#include <grpc/grpc.h>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>

#include "core/optim/optimizer_settings.h"
#include "core/util/clock.h"
#include "core/util/error.h"
#include "paramserver/memory_reuse.h"

namespace dtbench {

namespace {

std::string host_of(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) fail_input("--listen '{}': expected host:port, e.g. 127.0.0.1:50051", listen);
  return listen.substr(0, colon);
}

// Runs of consecutive key ids (one run per shard with balanced placement), with the payload bytes
// that crossed the wire for them.
nlohmann::json key_ranges(const KeyIndex& index, int64_t gradients, int64_t pulls) {
  nlohmann::json ranges = nlohmann::json::array();
  for (size_t k = 0; k < index.keys.size();) {
    size_t end = k;
    int64_t floats = 0;
    while (end < index.keys.size() && index.keys[end] == index.keys[k] + static_cast<int64_t>(end - k)) {
      floats += index.float_counts[end];
      ++end;
    }
    const int64_t bytes = floats * static_cast<int64_t>(sizeof(float));
    ranges.push_back({{"first_key", index.keys[k]},
                      {"last_key", index.keys[end - 1]},
                      {"float_count", floats},
                      {"payload_bytes_in", gradients * bytes},
                      {"payload_bytes_out", pulls * bytes}});
    k = end;
  }
  return ranges;
}

}  // namespace

ParameterServer::ParameterServer(const ParamArena& arena, const OptimizerConfig& optimizer,
                                 ParameterServerOptions options)
    : options_(std::move(options)), placement_(arena, options_.placement),
      index_(KeyIndex::in_shard(placement_, options_.shard)), roster_(options_.run_id, options_.worker_count),
      started_(SteadyClock::now()) {
  const int shards = options_.placement.shard_count;
  if (options_.shard < 0 || options_.shard >= shards) {
    fail_input("--shard {} is out of range for {} shard(s) (0..{})", options_.shard, shards, shards - 1);
  }
  if (options_.worker_count < 1) fail_input("--workers must be at least 1, got {}", options_.worker_count);
  if (!(options_.idle_timeout_seconds > 0)) {
    fail_input("--idle-timeout-s must be > 0 s, got {}", options_.idle_timeout_seconds);
  }
  resolve_token();
  checkpoint_path_ = options_.checkpoints ? options_.checkpoint_path : "";
  if (options_.checkpoints && checkpoint_path_.empty() && !options_.output_dir.empty()) {
    checkpoint_path_ = (std::filesystem::path(options_.output_dir) / fmt::format("server-{}.ckpt", options_.shard)).string();
  }
  if (options_.trace_updates > 0 && !options_.output_dir.empty()) {
    std::filesystem::create_directories(options_.output_dir);
    trace_ = std::make_unique<ServerTrace>(server_trace_path(options_.output_dir, options_.shard), options_.shard,
                                           options_.trace_updates);
  }
  ShardUpdaterOptions updater_options{.shard = options_.shard,
                                      .mode = options_.mode,
                                      .worker_count = options_.worker_count,
                                      .timeout_seconds = options_.timeout_seconds,
                                      .max_staleness = options_.max_staleness,
                                      .drop_missing_workers = options_.drop_missing_workers,
                                      .checkpoint_every = checkpoint_path_.empty() ? 0 : options_.checkpoint_every,
                                      .write_checkpoint = [this](const ShardState& state) {
                                        save_checkpoint(state);
                                      },
                                      .on_update = nullptr,
                                      .on_run_failed = [this](const std::string& reason) { fail(reason); }};
  if (trace_) updater_options.on_update = [trace = trace_.get()](const UpdateTiming& update) { trace->record(update); };
  updater_ = std::make_unique<ShardUpdater>(initial_state(arena), optimizer, std::move(updater_options));

  ServiceParts parts{.shard = options_.shard,
                     .shard_count = shards,
                     .mode = options_.mode,
                     .optimizer = optimizer_settings(optimizer),
                     .index = &index_,
                     .updater = updater_.get(),
                     .roster = &roster_,
                     .control = &control_,
                     .traffic = &traffic_,
                     .auth_token = options_.security.auth_token,
                     .max_message_bytes = options_.max_message_bytes,
                     .stats_json = [this] { return stats_json().dump(2); },
                     .checkpoint = [this] { return checkpoint_now(); },
                     .shutdown = [this](int worker, const std::string& failure) { return on_shutdown(worker, failure); }};
  service_ = std::make_unique<PsService>(std::move(parts));
  start_serving();
  spdlog::info("parameter server shard {}/{} ({} mode, {} workers) on {}: {} keys, {} floats, version {}",
               options_.shard, shards, mode_name(options_.mode), options_.worker_count, address_,
               index_.keys.size(), index_.float_count, updater_->version());
  idle_watch_ = std::thread([this] { watch_idle(); });
}

void ParameterServer::resolve_token() {
  ServerSecurity& security = options_.security;
  if (security.insecure) {
    if (!security.auth_token.empty()) fail_input("--insecure contradicts an auth token: give one or the other");
    spdlog::warn("parameter server shard {}: --insecure: serving without an auth token, so any process that can "
                 "reach it can push, overwrite values, checkpoint or shut it down",
                 options_.shard);
    return;
  }
  if (!security.auth_token.empty()) return;
  if (options_.output_dir.empty()) {
    security.auth_token = generate_token();  // in-process: its workers take auth_token()
    return;
  }
  token_file_ = (std::filesystem::path(options_.output_dir) / "ps.token").string();
  security.auth_token = create_token_file(token_file_);
  spdlog::info("parameter server shard {}: workers need the token in {} (ps.auth_token_file)", options_.shard,
               token_file_);
}

void ParameterServer::start_serving() {
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default: a second server on a port in use would then start and take
  // part of the run's connections instead of failing.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  reuse_freed_memory();
  builder.AddListeningPort(options_.listen, make_server_credentials(options_.security), &port_);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    updater_->stop("the server could not start");
    throw IoError(fmt::format("parameter server shard {}: cannot listen on {}: the address is in use (another "
                              "server?) or not an address of this host",
                              options_.shard, options_.listen));
  }
  address_ = fmt::format("{}:{}", host_of(options_.listen), port_);
}

// Ends the run when no worker has been heard from for idle_timeout_seconds: its workers died or
// never came, and nothing else would stop the server.
void ParameterServer::watch_idle() {
  const auto idle = to_duration(options_.idle_timeout_seconds);
  const auto poll = std::min<SteadyClock::duration>(idle / 4, std::chrono::seconds(1));
  std::unique_lock lock(stop_mutex_);
  while (!stop_requested_) {
    if (stop_requested_cv_.wait_for(lock, poll, [&] { return stop_requested_; })) return;
    if (SteadyClock::now() - roster_.last_heard() < idle) continue;
    lock.unlock();
    fail(fmt::format("shard {}: no worker has been heard from for {} s ({}): ending the run", options_.shard,
                     options_.idle_timeout_seconds, roster_.describe()));
    return;
  }
}

ParameterServer::~ParameterServer() {
  try {
    stop();
  } catch (const std::exception& error) {
    spdlog::error("parameter server shard {}: stopping: {}", options_.shard, error.what());
  }
}

ShardState ParameterServer::initial_state(const ParamArena& arena) {
  if (!options_.restore_path.empty()) {
    auto [header, state] = read_checkpoint(options_.restore_path);
    const CheckpointHeader expected = checkpoint_header();
    if (header.shard != expected.shard || header.shard_count != expected.shard_count || header.keys != expected.keys) {
      fail_input("checkpoint {} holds shard {} of {} with {} keys; this server is shard {} of {} with {} keys of this "
                 "model (a different model, ps.key_kb or ps.placement?)",
                 options_.restore_path, header.shard, header.shard_count, header.keys.size(), expected.shard,
                 expected.shard_count, expected.keys.size());
    }
    if (header.mode != options_.mode) {
      spdlog::warn("checkpoint {} was written in {} mode; continuing in {} mode", options_.restore_path,
                   mode_name(header.mode), mode_name(options_.mode));
    }
    spdlog::info("shard {}: restored {} at version {}", options_.shard, options_.restore_path, state.version);
    return std::move(state);
  }
  ShardState state;
  state.values.resize(static_cast<size_t>(index_.float_count));
  const auto values = arena.values();
  for (int64_t id : placement_.keys_of(options_.shard)) {
    const Key& key = placement_.keys()[static_cast<size_t>(id)];
    std::copy_n(values.data() + key.arena_offset, key.float_count, state.values.data() + key.shard_offset);
  }
  return state;
}

CheckpointHeader ParameterServer::checkpoint_header() const {
  CheckpointHeader header{options_.shard, options_.placement.shard_count, options_.mode, {}};
  for (size_t k = 0; k < index_.keys.size(); ++k) header.keys.emplace_back(index_.keys[k], index_.float_counts[k]);
  return header;
}

bool ParameterServer::on_shutdown(int worker, const std::string& failure) {
  if (!failure.empty()) {
    // A worker's reason, in this server's log and report: bounded, whatever the caller sent.
    constexpr size_t kLongest = 512;
    const std::string reason = failure.size() > kLongest ? failure.substr(0, kLongest) + " [...]" : failure;
    fail(worker >= 0 ? fmt::format("shard {}: worker {} failed: {}", options_.shard, worker, reason)
                     : fmt::format("shard {}: the run failed: {}", options_.shard, reason));
    return true;
  }
  bool stopping = worker < 0;
  if (worker >= 0) {
    updater_->worker_done(worker);
    stopping = roster_.mark_done(worker);
  }
  if (stopping) request_stop();
  return stopping;
}

bool ParameterServer::wait_for(double seconds) {
  std::unique_lock lock(stop_mutex_);
  return stop_requested_cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return stop_requested_; });
}

void ParameterServer::fail(const std::string& reason) {
  {
    std::lock_guard lock(stop_mutex_);
    if (!failure_.empty() || stopped_) return;
    failure_ = reason;
  }
  spdlog::error("parameter server shard {}: {}", options_.shard, reason);
  request_stop();
}

std::string ParameterServer::failure() const {
  std::lock_guard lock(stop_mutex_);
  return failure_;
}

void ParameterServer::request_stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stop_requested_ = true;
  }
  stop_requested_cv_.notify_all();
}

void ParameterServer::stop() {
  {
    std::lock_guard lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    stop_requested_ = true;
  }
  stop_requested_cv_.notify_all();
  if (idle_watch_.joinable()) idle_watch_.join();
  // Pending pushes first (their calls then finish), then the server, which waits for its calls.
  const std::string failed = failure();
  // A failed run's pending pushes are aborted with the reason: a retry cannot help them.
  if (failed.empty()) {
    updater_->stop("the server is shutting down");
  } else {
    updater_->stop(failed, PushCode::Aborted);
  }
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
  if (trace_) trace_->finish();  // the update thread, its only writer, has stopped
  write_stats(failed);
  if (!checkpoint_path_.empty()) {
    save_checkpoint(updater_->state());
    spdlog::info("shard {}: checkpoint at version {} -> {}", options_.shard, updater_->version(), checkpoint_path_);
  }
}

nlohmann::json ParameterServer::stats_json() const {
  nlohmann::json updates = updater_->stats_json();
  const int64_t gradients = updates["gradients_accepted"].get<int64_t>();
  return {{"shard", options_.shard},
          {"shard_count", options_.placement.shard_count},
          {"address", address_},
          {"mode", mode_name(options_.mode)},
          {"workers", options_.worker_count},
          {"run_id", roster_.run_id()},
          {"timeout_seconds", options_.timeout_seconds},
          {"idle_timeout_seconds", options_.idle_timeout_seconds},
          {"max_staleness", options_.max_staleness},
          {"drop_missing_workers", options_.drop_missing_workers},
          {"placement", placement_name(options_.placement.policy)},
          {"key_float_count", options_.placement.key_float_count},
          {"keys", index_.keys.size()},
          {"float_count", index_.float_count},
          {"uptime_seconds", seconds_since(started_)},
          {"updates", updates},
          {"traffic", traffic_.to_json()},
          {"key_ranges", key_ranges(index_, gradients, traffic_.pull_calls.load())}};
}

std::string ParameterServer::checkpoint_now() {
  if (checkpoint_path_.empty()) {
    fail_input("shard {} has no checkpoint path (start it with --checkpoint FILE or --output DIR)", options_.shard);
  }
  save_checkpoint(updater_->state());
  return checkpoint_path_;
}

void ParameterServer::save_checkpoint(const ShardState& state) {
  std::lock_guard lock(checkpoint_mutex_);
  write_checkpoint(checkpoint_path_, checkpoint_header(), state);
}

void ParameterServer::write_stats(const std::string& failure) {
  if (options_.output_dir.empty()) return;
  nlohmann::json stats = stats_json();
  stats["status"] = failure.empty() ? "stopped" : "failed";
  if (!failure.empty()) stats["error"] = failure;
  const std::filesystem::path dir(options_.output_dir);
  std::filesystem::create_directories(dir);
  const auto target = dir / fmt::format("server-{}.json", options_.shard);
  const auto temporary = dir / fmt::format(".server-{}.json.tmp", options_.shard);
  {
    std::ofstream out(temporary);
    out << stats.dump(2) << "\n";
    if (!out) throw IoError(fmt::format("cannot write {}", temporary.string()));
  }
  std::filesystem::rename(temporary, target);
}

}  // namespace dtbench
