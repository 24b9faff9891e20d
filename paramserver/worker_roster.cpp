#include "paramserver/worker_roster.h"

#include <algorithm>

#include <fmt/format.h>

namespace dtbench {

WorkerRoster::WorkerRoster(std::string run_id, int worker_count)
    : run_id_(std::move(run_id)), worker_count_(worker_count),
      registered_(static_cast<size_t>(worker_count), false), done_(static_cast<size_t>(worker_count), false) {}

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
                        run_id_, run_id, run_id_)};
  }
  return grpc::Status::OK;
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
  return grpc::Status::OK;
}

bool WorkerRoster::mark_done(int worker) {
  std::lock_guard lock(mutex_);
  if (worker >= 0 && worker < worker_count_) done_[static_cast<size_t>(worker)] = true;
  return std::all_of(done_.begin(), done_.end(), [](bool done) { return done; });
}

std::string WorkerRoster::run_id() const {
  std::lock_guard lock(mutex_);
  return run_id_;
}

}  // namespace dtbench
