// Who runs the updater: the update thread's loop (queue, deadlines, stopping) and, for a small
// shard, the gRPC thread that submits (shard_updater.h, "Thread model").
#include "paramserver/shard_updater.h"

#include <fmt/format.h>

#include "core/util/clock.h"

namespace dtbench {

void ShardUpdater::submit(Gradient gradient, PushDone done) {
  const bool small = float_count_ <= options_.inline_float_count;
  bool queued = false;
  PushOutcome gone;
  {
    std::lock_guard lock(queue_mutex_);
    if (!stopping_) {
      const int worker = gradient.worker;
      queue_.push_back({std::move(gradient), worker, std::move(done)});
      queued = true;
      if (!small) queue_ready_.notify_one();
    } else {
      gone = refused(stop_code_, fmt::format("shard {} stopped: {}", options_.shard, stop_reason_));
    }
  }
  if (!queued) {
    done(gone);
  } else if (small) {
    process_inline();
  }
}

void ShardUpdater::process_inline() {
  std::unique_lock work(work_mutex_, std::try_to_lock);
  std::deque<Event> events;
  {
    std::lock_guard lock(queue_mutex_);
    // Whoever updates now (the update thread, another gRPC thread) takes the event from the
    // queue once it is done; the update thread is woken only when it is not awake already.
    if (!work.owns_lock() || stopping_) {
      queue_ready_.notify_one();
      return;
    }
    events.swap(queue_);
  }
  process_then_release(events, work);
}

void ShardUpdater::process_then_release(std::deque<Event>& events, std::unique_lock<std::mutex>& work) {
  Completions completions;
  std::vector<UpdateTiming> updates;
  process(events, completions, updates);
  work.unlock();
  finish_round(completions, updates);
}

void ShardUpdater::worker_done(int worker) {
  std::lock_guard lock(queue_mutex_);
  if (stopping_) return;
  queue_.push_back({std::nullopt, worker, nullptr});
  queue_ready_.notify_one();
}

void ShardUpdater::stop(const std::string& reason, PushCode code) {
  {
    std::lock_guard lock(queue_mutex_);
    if (stopping_) return;
    stopping_ = true;
    stop_reason_ = reason;
    stop_code_ = code;
  }
  queue_ready_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ShardUpdater::run() {
  std::deque<Event> events;
  // At most a timeout apart even with nothing pending: a step or a hold begun on a gRPC thread
  // (process_inline) is then still expired on time, without waking this thread to say so.
  const auto longest_sleep = to_duration(options_.timeout_seconds);
  for (;;) {
    std::unique_lock work(work_mutex_);
    const auto wake = std::min(next_deadline(), SteadyClock::now() + longest_sleep);
    {
      std::unique_lock lock(queue_mutex_);
      work.unlock();  // a gRPC thread may update while this one sleeps
      queue_ready_.wait_until(lock, wake, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) break;
    }
    work.lock();
    {
      std::lock_guard lock(queue_mutex_);
      events.swap(queue_);
    }
    process_then_release(events, work);
  }
  // Stopping: everything still waiting or queued is told why.
  const PushOutcome gone = refused(stop_code_, fmt::format("shard {} stopped: {}", options_.shard, stop_reason_));
  std::lock_guard work(work_mutex_);  // a gRPC thread's update finishes first
  {
    std::lock_guard lock(queue_mutex_);
    events.swap(queue_);
  }
  for (Event& event : events) {
    if (event.done) event.done(gone);
  }
  for (auto& done : waiting_) {
    if (done) std::exchange(done, nullptr)(gone);
  }
  for (auto& held : held_) {
    if (held) std::exchange(held, std::nullopt)->done(gone);
  }
}

void ShardUpdater::process(std::deque<Event>& events, Completions& completions, std::vector<UpdateTiming>& updates) {
  expire(SteadyClock::now(), completions);
  for (Event& event : events) handle(event, completions);
  events.clear();
  updates.swap(updates_done_);
}

void ShardUpdater::finish_round(Completions& completions, std::vector<UpdateTiming>& updates) {
  for (auto& [done, outcome] : completions) done(outcome);
  if (options_.on_update && !updates.empty()) {
    std::lock_guard lock(report_mutex_);
    for (const UpdateTiming& update : updates) options_.on_update(update);
  }
}

}  // namespace dtbench
