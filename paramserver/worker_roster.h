#pragma once
// Which run a server belongs to and which of its workers have registered and finished. A server
// started without a run id adopts the first one a worker brings; after that, a worker of another
// run is refused with FAILED_PRECONDITION.
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

 private:
  grpc::Status check_run_locked(const std::string& run_id);

  mutable std::mutex mutex_;
  std::string run_id_;
  const int worker_count_;
  std::vector<bool> registered_;
  std::vector<bool> done_;
};

}  // namespace dtbench
