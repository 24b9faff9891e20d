#pragma once
// The numerical heart of one parameter-server shard: its keys' values (back to back, in key order),
// the optimizer over them, the version, and the rules of sync and async mode.
//
// Thread model. gRPC's callback threads decode and validate requests and never touch the values;
// they hand each complete gradient to submit(), which queues it. Whoever holds work_mutex_ owns
// the aggregation state (who has pushed for this version, held pushes, deadlines) and is the only
// writer of the values, the optimizer and the version: the shard's update thread, or — for a
// shard of at most `inline_float_count` floats, where waking another thread costs more than the
// update — the gRPC thread that submitted, when no one else holds it. The update thread enforces
// the timeouts: it sleeps until the next deadline, and never longer than timeout_seconds, so a
// step started on a gRPC thread still fails on time without waking it. Readers — pulls, stats,
// checkpoints — copy under state_mutex_, which the owner holds only while it changes the values
// and version. Completions (which finish the gRPC calls) run on the thread that handled the
// event, with no lock held.
//
//   sync:  gradients for version t are kept per worker until all `worker_count` have arrived, then
//          summed in worker order (deterministic), divided by worker_count, applied once: version
//          t+1. A push is answered only then, so a worker's push call includes its wait for the
//          others. If some worker has not pushed `timeout_seconds` after the first did, the step
//          fails: every waiting push gets ABORTED naming the missing workers; the values stay.
//          A step whose average or update is not finite is refused (INVALID_ARGUMENT to every
//          worker in it); the values stay.
//   async: each gradient is scaled by 1/worker_count and applied at once; staleness = version now
//          minus the version it was computed on, which must be 0 .. version now. A gradient whose
//          update is not finite is refused; the values stay. With max_staleness > 0, a worker more than that
//          many pushes ahead of the slowest active worker has its answer held until the others
//          catch up (or DEADLINE_EXCEEDED after timeout_seconds).
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/optim/optimizer.h"
#include "paramserver/for_each_shard.h"
#include "paramserver/ps_mode.h"
#include "paramserver/push_status.h"
#include "paramserver/server_stats.h"
#include "paramserver/update_pass.h"

namespace dtbench {

using SteadyClock = std::chrono::steady_clock;

// Everything that defines a shard's numerical state: what a checkpoint holds.
struct ShardState {
  int64_t version = 0;
  std::vector<float> values;
  std::string optimizer_name;
  int64_t optimizer_steps = 0;
  std::vector<float> optimizer_state;
};

// One worker's complete gradient for the shard (float_count floats, in the shard's layout).
struct Gradient {
  int worker = 0;
  int64_t version = 0;
  std::unique_ptr<float[]> values;
  SteadyClock::time_point arrived;
};

// The values of one version, shared by every pull of that version.
struct Snapshot {
  int64_t version = 0;
  std::vector<float> values;
};

struct PushOutcome {
  PushStatus status;
  int64_t version = 0;
  int64_t staleness = 0;
  // When accepted: the values of `version`, the update's own, for an answer that carries them
  // (PushPull); a later update makes a new snapshot and leaves this one as it is.
  std::shared_ptr<const Snapshot> snapshot;
};
using PushDone = std::function<void(const PushOutcome&)>;

inline PushOutcome refused(PushCode code, std::string message) {
  return {PushStatus(code, std::move(message)), 0, 0, nullptr};
}

// When the parts of one update happened, for the server's timeline (server_trace.h).
struct UpdateTiming {
  int64_t version = 0;  // the version the update produced
  int gradients = 0;    // gradients that went into it
  // sync: the first worker's gradient for this version arrived (the wait for the others and the
  // queue follow); async: equal to aggregate_start, nothing is gathered.
  SteadyClock::time_point gather_start{};
  SteadyClock::time_point aggregate_start{}, aggregate_end{}, apply_start{}, apply_end{};
};

struct ShardUpdaterOptions {
  int shard = 0;
  PsMode mode = PsMode::Sync;
  int worker_count = 1;
  double timeout_seconds = 60.0;
  int64_t max_staleness = 0;  // async; 0: unbounded
  // sync: a worker missing past the timeout is dropped and the step applied with those that
  // pushed (averaged over them), instead of failing the step.
  bool drop_missing_workers = false;
  // Shards of at most this many floats are updated on the gRPC thread that submits the gradient
  // completing a step (sync) or the gradient (async), when no one else is updating: no wake-up
  // of the update thread between a worker's last message and its answer. 0: always the update
  // thread. 64 Ki floats (256 KiB) take some tens of microseconds to update.
  int64_t inline_float_count = 64 * 1024;
  int64_t checkpoint_every = 0;  // updates; 0: never
  std::function<void(const ShardState&)> write_checkpoint;  // called by the updating thread
  // Called after each update, once the pushes it answers are answered; one call at a time.
  std::function<void(const UpdateTiming&)> on_update;
  // Called by the updating thread when the run cannot go on (sync: a step aborted because a worker
  // did not push), with the reason.
  std::function<void(const std::string&)> on_run_failed;
};

class ShardUpdater {
 public:
  ShardUpdater(ShardState initial, const OptimizerConfig& optimizer, ShardUpdaterOptions options);
  ~ShardUpdater();
  ShardUpdater(const ShardUpdater&) = delete;
  ShardUpdater& operator=(const ShardUpdater&) = delete;

  // Queues a gradient; `done` is called exactly once, from the updating thread (or at once when the
  // updater has stopped).
  void submit(Gradient gradient, PushDone done);
  // A buffer for one gradient of this shard. Buffers come back once their gradient is applied, so
  // a steady run allocates none: a large shard's (94 MB for ResNet-50) would otherwise be mapped
  // afresh, page fault by page fault, on every push.
  std::unique_ptr<float[]> take_gradient_buffer();
  // A worker has finished training: async mode stops holding the others back for it.
  void worker_done(int worker);
  std::shared_ptr<const Snapshot> snapshot();
  ShardState state() const;
  int64_t version() const;
  nlohmann::json stats_json() const;
  // Fails whatever is pending or queued with `code` (UNAVAILABLE: the shard is going, a worker may
  // try again; ABORTED: the run failed, no retry can help) and joins the update thread. Idempotent.
  void stop(const std::string& reason, PushCode code = PushCode::Unavailable);

 private:
  struct Event {
    std::optional<Gradient> gradient;  // empty: a worker is done
    int worker = 0;
    PushDone done;
  };
  struct Held {
    PushDone done;
    PushOutcome outcome;
    SteadyClock::time_point since;
  };
  using Completions = std::vector<std::pair<PushDone, PushOutcome>>;

  void run();
  // Under work_mutex_: expires what is due and handles `events`; returns the completions and
  // updates to report, which the caller runs with no lock held.
  void process(std::deque<Event>& events, Completions& completions, std::vector<UpdateTiming>& updates);
  // process() with `work` (work_mutex_) held, then releases it and reports the round unlocked.
  void process_then_release(std::deque<Event>& events, std::unique_lock<std::mutex>& work);
  // On a gRPC thread, inside submit(): the queue's events, when no one else is updating.
  void process_inline();
  void finish_round(Completions& completions, std::vector<UpdateTiming>& updates);
  SteadyClock::time_point next_deadline() const;
  void expire(SteadyClock::time_point now, Completions& completions);
  void handle(Event& event, Completions& completions);
  void handle_sync(Gradient& gradient, PushDone done, Completions& completions);
  void handle_async(Gradient& gradient, PushDone done, Completions& completions);
  void apply_sync_step(Completions& completions);
  // The update (update_pass.h: average, optimizer step, checks in one pass, written into the next
  // snapshot) and the version, under state_mutex_; notes the times in `timing` and queues it for
  // on_update. Unless the average, or the values or optimizer state the step makes, are not
  // finite: then values, optimizer and version stay bit for bit as they were, and the text returned
  // says what was not finite ("" when applied).
  std::string apply(const GradientAverage& average, UpdateTiming& timing);
  void refuse_sync_step(const std::string& problem, Completions& completions);
  int64_t pushes_ahead(int worker) const;
  void release_held(Completions& completions);
  void maybe_checkpoint();
  // Memory for the next version's values: retired_'s when no pull holds it any more (a large
  // shard's snapshot would otherwise be mapped afresh, page fault by page fault, each step).
  std::shared_ptr<Snapshot> next_snapshot();

  const ShardUpdaterOptions options_;
  const int64_t float_count_;
  void return_gradient_buffer(std::unique_ptr<float[]> buffer);
  std::mutex buffers_mutex_;
  std::vector<std::unique_ptr<float[]>> free_buffers_;  // applied gradients' buffers, for reuse

  // Written by the holder of work_mutex_ under state_mutex_; read by anyone under it.
  mutable std::mutex state_mutex_;
  std::unique_ptr<Optimizer> optimizer_;
  int64_t version_ = 0;
  // The values of version_, never written once published: each update writes the next version
  // into another snapshot, so pulls only take a reference, and a refused update leaves them be.
  std::shared_ptr<Snapshot> snapshot_;
  UpdateStats stats_;

  // The queue between gRPC threads and the update thread.
  std::mutex queue_mutex_;
  std::condition_variable queue_ready_;
  std::deque<Event> queue_;
  bool stopping_ = false;
  std::string stop_reason_;
  PushCode stop_code_ = PushCode::Unavailable;

  // Held by whoever handles events (the update thread, or a gRPC thread for a small shard);
  // guards the state below. Taken before queue_mutex_ and state_mutex_, never after them.
  std::mutex work_mutex_;
  std::mutex report_mutex_;  // on_update is called by one thread at a time
  std::vector<std::unique_ptr<float[]>> arrived_;  // sync: per worker, this version's gradient
  std::vector<PushDone> waiting_;                  // sync: per worker
  int arrived_count_ = 0;
  std::vector<bool> dropped_;       // sync: workers left out after missing a step
  int participants_ = 0;            // sync: workers a step waits for
  SteadyClock::time_point step_started_;
  std::vector<float> backup_state_;  // apply: the optimizer state a refused update puts back
  std::shared_ptr<Snapshot> retired_;  // the snapshot before snapshot_: reused once no pull holds it
  std::vector<int64_t> pushes_of_;  // async: per worker
  std::vector<bool> active_;        // async: not yet done
  std::vector<std::optional<Held>> held_;  // async: per worker
  std::vector<UpdateTiming> updates_done_;   // this round's updates, for on_update after the completions

  std::unique_ptr<ShardThreads> update_threads_;  // a large shard's update, range by range; null: small
  std::thread thread_;
};

}  // namespace dtbench
