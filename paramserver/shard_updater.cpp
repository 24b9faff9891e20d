#include "paramserver/shard_updater.h"

#include <algorithm>
#include <atomic>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "core/util/clock.h"
#include "paramserver/checkpoint.h"
#include "paramserver/finite_check.h"

namespace dtbench {

namespace {
#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif
}  // namespace

ShardUpdater::ShardUpdater(ShardState initial, const OptimizerConfig& optimizer, ShardUpdaterOptions options)
    : options_(std::move(options)), float_count_(static_cast<int64_t>(initial.values.size())) {
  if (options_.worker_count < 1) fail_input("a parameter server needs at least one worker, got {}", options_.worker_count);
  if (!(options_.timeout_seconds > 0)) fail_input("the parameter server's timeout must be > 0 s");
  if (options_.max_staleness < 0) fail_input("max_staleness must be >= 0 (0: unbounded)");
  optimizer_ = restore_optimizer(optimizer, initial);
  version_ = initial.version;
  snapshot_ = std::make_shared<Snapshot>(Snapshot{version_, std::move(initial.values)});
  if (const int threads = update_thread_count(float_count_); threads > 1) {
    update_threads_ = std::make_unique<ShardThreads>(static_cast<size_t>(threads));
  }
  const auto workers = static_cast<size_t>(options_.worker_count);
  arrived_.resize(workers);
  waiting_.resize(workers);
  pushes_of_.assign(workers, 0);
  active_.assign(workers, true);
  dropped_.assign(workers, false);
  participants_ = options_.worker_count;
  held_.resize(workers);
  updates_done_.reserve(workers);
  thread_ = std::thread([this] { run(); });
}

ShardUpdater::~ShardUpdater() {
  stop("the server is shutting down");
  std::lock_guard lock(state_mutex_);  // the last snapshot was published under it
  snapshot_.reset();
  retired_.reset();
}

std::shared_ptr<const Snapshot> ShardUpdater::snapshot() {
  std::lock_guard lock(state_mutex_);
  return snapshot_;
}

std::shared_ptr<Snapshot> ShardUpdater::next_snapshot() {
  std::shared_ptr<Snapshot> next;
  {
    std::lock_guard lock(state_mutex_);
    // Pulls, push-pull answers and gRPC's send buffers take their references from snapshot_
    // (under the lock, or on this thread) or from a holder, so a count of one, read here, stays one.
    // ThreadSanitizer does not model the fence below (GCC says so when it compiles it), so under
    // it a retired snapshot is never reused rather than reported as a race it cannot see ordered.
    if (retired_ != nullptr && retired_.use_count() == 1 && !kThreadSanitizer) {
      // The last other holder let go with a release; this acquire orders its reads before the
      // writes the update makes into it.
      std::atomic_thread_fence(std::memory_order_acquire);
      next = std::move(retired_);
    }
    retired_.reset();
  }
  if (next == nullptr) next = std::make_shared<Snapshot>();
  next->values.resize(static_cast<size_t>(float_count_));
  return next;
}

ShardState ShardUpdater::state() const {
  std::lock_guard lock(state_mutex_);
  const auto own = optimizer_->state();
  return {version_, snapshot_->values, optimizer_->name(), optimizer_->steps_taken(), {own.begin(), own.end()}};
}

int64_t ShardUpdater::version() const {
  std::lock_guard lock(state_mutex_);
  return version_;
}

nlohmann::json ShardUpdater::stats_json() const {
  std::lock_guard lock(state_mutex_);
  nlohmann::json json = stats_.to_json();
  json["version"] = version_;
  return json;
}

std::unique_ptr<float[]> ShardUpdater::take_gradient_buffer() {
  {
    std::lock_guard lock(buffers_mutex_);
    if (!free_buffers_.empty()) {
      std::unique_ptr<float[]> buffer = std::move(free_buffers_.back());
      free_buffers_.pop_back();
      return buffer;
    }
  }
  return std::unique_ptr<float[]>(new float[static_cast<size_t>(float_count_)]);
}

void ShardUpdater::return_gradient_buffer(std::unique_ptr<float[]> buffer) {
  if (buffer == nullptr) return;
  std::lock_guard lock(buffers_mutex_);
  free_buffers_.push_back(std::move(buffer));
}

SteadyClock::time_point ShardUpdater::next_deadline() const {
  auto deadline = SteadyClock::time_point::max();
  const auto timeout = to_duration(options_.timeout_seconds);
  if (arrived_count_ > 0) deadline = step_started_ + timeout;
  for (const auto& held : held_) {
    if (held) deadline = std::min(deadline, held->since + timeout);
  }
  return deadline;
}

void ShardUpdater::expire(SteadyClock::time_point now, Completions& completions) {
  const auto timeout = to_duration(options_.timeout_seconds);
  if (arrived_count_ > 0 && now >= step_started_ + timeout) {
    std::vector<int> missing, present;
    for (int w = 0; w < options_.worker_count; ++w) {
      if (dropped_[static_cast<size_t>(w)]) continue;
      (arrived_[static_cast<size_t>(w)] ? present : missing).push_back(w);
    }
    if (options_.drop_missing_workers) {
      spdlog::warn("shard {}: worker(s) {} did not push within {} s at version {}; going on with worker(s) {}",
                   options_.shard, fmt::join(missing, ", "), options_.timeout_seconds, version_,
                   fmt::join(present, ", "));
      for (int w : missing) dropped_[static_cast<size_t>(w)] = true;
      participants_ -= static_cast<int>(missing.size());
      {
        std::lock_guard lock(state_mutex_);
        stats_.workers_dropped += static_cast<int64_t>(missing.size());
      }
      apply_sync_step(completions);
    } else {
      const std::string message = fmt::format(
          "shard {}: the step at version {} was aborted: worker(s) {} did not push within {} s (worker(s) {} did)",
          options_.shard, version_, fmt::join(missing, ", "), options_.timeout_seconds, fmt::join(present, ", "));
      spdlog::error("{}", message);
      if (options_.on_run_failed) options_.on_run_failed(message);
      for (int w : present) {
        completions.emplace_back(std::exchange(waiting_[static_cast<size_t>(w)], nullptr),
                                 refused(PushCode::Aborted, message));
        return_gradient_buffer(std::move(arrived_[static_cast<size_t>(w)]));
      }
      arrived_count_ = 0;
      std::lock_guard lock(state_mutex_);
      ++stats_.steps_failed;
    }
  }
  for (int w = 0; w < options_.worker_count; ++w) {
    auto& held = held_[static_cast<size_t>(w)];
    if (!held || now < held->since + timeout) continue;
    std::vector<int> slow;
    int64_t fewest = pushes_of_[static_cast<size_t>(w)];
    for (int other = 0; other < options_.worker_count; ++other) {
      if (active_[static_cast<size_t>(other)]) fewest = std::min(fewest, pushes_of_[static_cast<size_t>(other)]);
    }
    for (int other = 0; other < options_.worker_count; ++other) {
      if (active_[static_cast<size_t>(other)] && pushes_of_[static_cast<size_t>(other)] == fewest) slow.push_back(other);
    }
    const std::string message = fmt::format(
        "shard {}: worker {} is {} pushes ahead of worker(s) {} (max_staleness {}), and they did not push within {} s",
        options_.shard, w, pushes_ahead(w), fmt::join(slow, ", "), options_.max_staleness, options_.timeout_seconds);
    completions.emplace_back(std::move(held->done), refused(PushCode::DeadlineExceeded, message));
    held.reset();
  }
}

void ShardUpdater::handle(Event& event, Completions& completions) {
  if (!event.gradient) {  // a worker is done
    if (event.worker >= 0 && event.worker < options_.worker_count) active_[static_cast<size_t>(event.worker)] = false;
    release_held(completions);
    return;
  }
  Gradient& gradient = *event.gradient;
  {
    std::lock_guard lock(state_mutex_);
    stats_.queueing.add(seconds_between(gradient.arrived, SteadyClock::now()));
  }
  if (options_.mode == PsMode::Sync) {
    handle_sync(gradient, std::move(event.done), completions);
  } else {
    handle_async(gradient, std::move(event.done), completions);
  }
}

void ShardUpdater::handle_sync(Gradient& gradient, PushDone done, Completions& completions) {
  const auto w = static_cast<size_t>(gradient.worker);
  std::string problem;
  if (gradient.version != version_) {
    problem = fmt::format("worker {} pushed a gradient for version {} but shard {} is at version {} (sync mode takes "
                          "gradients of the current version only)",
                          gradient.worker, gradient.version, options_.shard, version_);
  } else if (arrived_[w]) {
    problem = fmt::format("worker {} pushed twice for version {}", gradient.worker, version_);
  } else if (dropped_[w]) {
    problem = fmt::format("worker {} was dropped from the run after missing a step; shard {} goes on without it",
                          gradient.worker, options_.shard);
  }
  if (!problem.empty()) {
    {
      std::lock_guard lock(state_mutex_);
      ++stats_.gradients_rejected;
    }
    completions.emplace_back(std::move(done), refused(PushCode::InvalidArgument, problem));
    return;
  }
  if (arrived_count_ == 0) step_started_ = gradient.arrived;
  arrived_[w] = std::move(gradient.values);
  waiting_[w] = std::move(done);
  if (++arrived_count_ == participants_) apply_sync_step(completions);
}

void ShardUpdater::apply_sync_step(Completions& completions) {
  const auto last_arrival = SteadyClock::now();
  UpdateTiming timing{.gather_start = step_started_};
  // Summed in worker order, so the result does not depend on who arrived first; from 0.0f and
  // scaled after, element by element (update_pass.h).
  const int contributors = arrived_count_;
  GradientAverage average{.gradients = {},
                          .sum_from_zero = true,
                          .scaled = contributors > 1,
                          .scale = contributors > 1 ? 1.0f / static_cast<float>(contributors) : 1.0f};
  for (const auto& gradient : arrived_) {
    if (gradient != nullptr) average.gradients.push_back(gradient.get());  // null: dropped
  }
  timing.gradients = contributors;
  if (std::string problem = apply(average, timing); !problem.empty()) return refuse_sync_step(problem, completions);
  {
    std::lock_guard lock(state_mutex_);
    stats_.aggregation.add(seconds_between(timing.aggregate_start, timing.aggregate_end));
    stats_.straggler_wait.add(seconds_between(step_started_, last_arrival));
    stats_.gradients_accepted += contributors;
  }
  for (size_t w = 0; w < arrived_.size(); ++w) {
    if (!arrived_[w]) continue;
    return_gradient_buffer(std::move(arrived_[w]));
    completions.emplace_back(std::exchange(waiting_[w], nullptr), PushOutcome{PushStatus(), version_, 0, snapshot_});
  }
  arrived_count_ = 0;
  maybe_checkpoint();
}

void ShardUpdater::refuse_sync_step(const std::string& problem, Completions& completions) {
  std::vector<int> workers;
  for (size_t w = 0; w < arrived_.size(); ++w) {
    if (arrived_[w]) workers.push_back(static_cast<int>(w));
  }
  const std::string message =
      fmt::format("shard {}: the step at version {} was refused: the average of the gradients of worker(s) {} {}; "
                  "the values stay at version {}",
                  options_.shard, version_, fmt::join(workers, ", "), problem, version_);
  spdlog::error("{}", message);
  for (int w : workers) {
    return_gradient_buffer(std::move(arrived_[static_cast<size_t>(w)]));
    completions.emplace_back(std::exchange(waiting_[static_cast<size_t>(w)], nullptr),
                             refused(PushCode::InvalidArgument, message));
  }
  arrived_count_ = 0;
  std::lock_guard lock(state_mutex_);
  ++stats_.steps_failed;
  stats_.gradients_rejected += static_cast<int64_t>(workers.size());
}

void ShardUpdater::handle_async(Gradient& gradient, PushDone done, Completions& completions) {
  const auto w = static_cast<size_t>(gradient.worker);
  std::string problem;
  if (gradient.version < 0 || gradient.version > version_) {
    problem = fmt::format("worker {} pushed a gradient for version {} but shard {} is at version {} (async mode "
                          "takes versions 0 .. {})",
                          gradient.worker, gradient.version, options_.shard, version_, version_);
  }
  const int64_t staleness = problem.empty() ? version_ - gradient.version : 0;
  UpdateTiming timing{.gradients = 1};
  const GradientAverage average{.gradients = {gradient.values.get()},
                                .sum_from_zero = false,
                                .scaled = options_.worker_count > 1,
                                .scale = 1.0f / static_cast<float>(options_.worker_count)};
  if (problem.empty()) {
    if (std::string unfit = apply(average, timing); !unfit.empty()) {
      problem = fmt::format("shard {}: the gradient of worker {} for version {} was refused: it {}; the values stay "
                            "at version {}",
                            options_.shard, gradient.worker, gradient.version, unfit, version_);
    }
  }
  return_gradient_buffer(std::move(gradient.values));
  if (!problem.empty()) {
    std::lock_guard lock(state_mutex_);
    ++stats_.gradients_rejected;
    completions.emplace_back(std::move(done), refused(PushCode::InvalidArgument, problem));
    return;
  }
  {
    std::lock_guard lock(state_mutex_);
    stats_.aggregation.add(seconds_between(timing.aggregate_start, timing.aggregate_end));
    ++stats_.gradients_accepted;
    ++stats_.staleness_counts[staleness];
  }
  ++pushes_of_[w];
  PushOutcome outcome{PushStatus(), version_, staleness, snapshot_};
  if (options_.max_staleness > 0 && pushes_ahead(gradient.worker) > options_.max_staleness) {
    held_[w] = Held{std::move(done), outcome, SteadyClock::now()};
  } else {
    completions.emplace_back(std::move(done), outcome);
  }
  release_held(completions);
  maybe_checkpoint();
}

std::string ShardUpdater::apply(const GradientAverage& average, UpdateTiming& timing) {
  const auto start = SteadyClock::now();
  // A refused update puts the optimizer's state back from this copy (only the holder of
  // work_mutex_ writes it, so it is read outside the lock); the values it leaves untouched.
  const std::span<const float> state = optimizer_->state();
  backup_state_.assign(state.begin(), state.end());
  const int64_t steps = optimizer_->steps_taken();
  std::shared_ptr<Snapshot> next = next_snapshot();
  {
    std::lock_guard lock(state_mutex_);
    optimizer_->begin_step();
    const UpdatePassResult pass =
        run_update_pass(*optimizer_, average, snapshot_->values, next->values, update_threads_.get());
    if (!pass.problem.empty()) {
      optimizer_->restore(backup_state_, steps);
      retired_ = std::move(next);  // no one else holds it: reused by the next update
      return pass.problem;
    }
    next->version = ++version_;
    ++stats_.updates_applied;
    retired_ = std::exchange(snapshot_, std::move(next));
    // The pass interleaves averaging and stepping; the timeline shows each one's share of it.
    timing.aggregate_start = start;
    timing.aggregate_end = start + to_duration(pass.averaging_seconds);
    timing.apply_start = timing.aggregate_end;
    timing.apply_end = SteadyClock::now();
    if (options_.mode == PsMode::Async) timing.gather_start = start;  // nothing is gathered
    stats_.apply.add(seconds_between(timing.apply_start, timing.apply_end));
  }
  timing.version = version_;  // only the holder of work_mutex_ writes it
  if (options_.on_update) updates_done_.push_back(timing);
  return "";
}

// How many more pushes `worker` has made than the slowest worker still training.
int64_t ShardUpdater::pushes_ahead(int worker) const {
  int64_t fewest = pushes_of_[static_cast<size_t>(worker)];
  for (size_t other = 0; other < pushes_of_.size(); ++other) {
    if (active_[other]) fewest = std::min(fewest, pushes_of_[other]);
  }
  return pushes_of_[static_cast<size_t>(worker)] - fewest;
}

void ShardUpdater::release_held(Completions& completions) {
  for (int w = 0; w < options_.worker_count; ++w) {
    auto& held = held_[static_cast<size_t>(w)];
    if (!held || pushes_ahead(w) > options_.max_staleness) continue;
    {
      std::lock_guard lock(state_mutex_);
      stats_.held.add(seconds_between(held->since, SteadyClock::now()));
    }
    completions.emplace_back(std::move(held->done), held->outcome);
    held.reset();
  }
}

void ShardUpdater::maybe_checkpoint() {
  if (options_.checkpoint_every <= 0 || !options_.write_checkpoint) return;
  if (version_ % options_.checkpoint_every != 0) return;
  try {
    options_.write_checkpoint(state());
  } catch (const std::exception& error) {
    spdlog::error("shard {}: checkpoint at version {} failed: {}", options_.shard, version_, error.what());
  }
}

}  // namespace dtbench
