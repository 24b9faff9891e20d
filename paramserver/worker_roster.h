#pragma once
// Which run a server belongs to and which of its workers have registered and finished. A server
// started without a run id adopts the first one a worker brings; after that, a worker of another
// run is refused with FAILED_PRECONDITION. Every call that passes its checks (a worker's) counts
// as hearing from the workers, for the server's idle timeout.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

namespace dtbench {

class WorkerRoster {
 public:
  WorkerRoster(std::string run_id, int worker_count);
  ~WorkerRoster();  // takes the lock: the last calls' writes are then visible (and to TSan)

  grpc::Status check_run(const std::string& run_id);
  grpc::Status register_worker(const std::string& run_id, int worker, int world);
  grpc::Status check_worker(int worker) const;  // in range and registered
  // Marks `worker` done; true once every worker is.
  bool mark_done(int worker);
  std::string run_id() const;
  int worker_count() const { return worker_count_; }
  // When a worker's call last passed its checks (the roster's creation before any did).
  std::chrono::steady_clock::time_point last_heard() const;
  // Who registered and who is done, for messages: "worker(s) 0, 1 registered, worker(s) 1 done, of 3".
  std::string describe() const;

 private:
  grpc::Status check_run_locked(const std::string& run_id);
  void heard() const;

  mutable std::mutex mutex_;
  std::string run_id_;
  const int worker_count_;
  std::vector<bool> registered_;
  std::vector<bool> done_;
  mutable std::atomic<std::chrono::steady_clock::rep> last_heard_;
};

}  // namespace dtbench
