#include "paramserver/worker_roster.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "paramserver/echo.h"

namespace dtbench {

WorkerRoster::WorkerRoster(std::string run_id, int worker_count)
    : run_id_(std::move(run_id)), worker_count_(worker_count),
      registered_(static_cast<size_t>(worker_count), false), done_(static_cast<size_t>(worker_count), false),
      last_heard_(std::chrono::steady_clock::now().time_since_epoch().count()) {}

WorkerRoster::~WorkerRoster() {
  std::lock_guard lock(mutex_);
  registered_.clear();
  done_.clear();
}

grpc::Status WorkerRoster::check_run_locked(const std::string& run_id) {
  if (run_id.empty()) return {grpc::StatusCode::INVALID_ARGUMENT, "the call carries no run id"};
  if (run_id_.empty()) run_id_ = run_id;
  if (run_id != run_id_) {
    return {grpc::StatusCode::FAILED_PRECONDITION,
            fmt::format("this parameter server serves run '{}', not run '{}' (start a server per run, or use "
                        "--set ps.run_id={})",
                        echo(run_id_), echo(run_id), echo(run_id_))};
  }
  heard();
  return grpc::Status::OK;
}

void WorkerRoster::heard() const {
  last_heard_.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
}

std::chrono::steady_clock::time_point WorkerRoster::last_heard() const {
  return std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(last_heard_.load(std::memory_order_relaxed)));
}

std::string WorkerRoster::describe() const {
  std::lock_guard lock(mutex_);
  std::vector<int> registered, done;
  for (int w = 0; w < worker_count_; ++w) {
    if (registered_[static_cast<size_t>(w)]) registered.push_back(w);
    if (done_[static_cast<size_t>(w)]) done.push_back(w);
  }
  const auto list = [](const std::vector<int>& workers) {
    return workers.empty() ? std::string("none") : fmt::format("worker(s) {}", fmt::join(workers, ", "));
  };
  return fmt::format("{} registered, {} done, of {}", list(registered), list(done), worker_count_);
}

grpc::Status WorkerRoster::check_run(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  return check_run_locked(run_id);
}

grpc::Status WorkerRoster::register_worker(const std::string& run_id, int worker, int world) {
  std::lock_guard lock(mutex_);
  if (grpc::Status status = check_run_locked(run_id); !status.ok()) return status;
  if (world != worker_count_) {
    return {grpc::StatusCode::FAILED_PRECONDITION,
            fmt::format("this parameter server was started for {} workers but worker {} says the run has {} "
                        "(dtbench ps --workers {})",
                        worker_count_, worker, world, world)};
  }
  if (worker < 0 || worker >= worker_count_) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            fmt::format("worker id {} is out of range: this run has workers 0..{}", worker, worker_count_ - 1)};
  }
  registered_[static_cast<size_t>(worker)] = true;
  done_[static_cast<size_t>(worker)] = false;
  return grpc::Status::OK;
}

grpc::Status WorkerRoster::check_worker(int worker) const {
  if (worker < 0 || worker >= worker_count_) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            fmt::format("worker id {} is out of range: this run has workers 0..{}", worker, worker_count_ - 1)};
  }
  std::lock_guard lock(mutex_);
  if (!registered_[static_cast<size_t>(worker)]) {
    return {grpc::StatusCode::FAILED_PRECONDITION, fmt::format("worker {} has not registered", worker)};
  }
  heard();
  return grpc::Status::OK;
}

bool WorkerRoster::mark_done(int worker) {
  std::lock_guard lock(mutex_);
  if (worker >= 0 && worker < worker_count_) done_[static_cast<size_t>(worker)] = true;
  heard();
  return std::all_of(done_.begin(), done_.end(), [](bool done) { return done; });
}

std::string WorkerRoster::run_id() const {
  std::lock_guard lock(mutex_);
  return run_id_;
}

}  // namespace dtbench
