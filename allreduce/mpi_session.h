#pragma once
// MPI for the life of a run: initialised with MPI_THREAD_MULTIPLE (the overlap thread sends while
// the main thread exchanges control messages), finalised on normal exit. Creating a session also
// makes the control channel and the topology (rank, world, local rank) MPI knows.
#include <mpi.h>

#include <memory>
#include <string>

#include "allreduce/request_wait.h"
#include "comm/control_channel.h"

namespace dtbench {

class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }
  int local_rank() const { return local_rank_; }
  int local_world() const { return local_world_; }  // ranks on this host
  bool thread_multiple() const { return thread_multiple_; }
  // A control channel on a communicator of its own, its every wait bounded by `policy`.
  std::unique_ptr<ControlChannel> control_channel(WaitPolicy policy) const;

  // Ends every rank of the job (after an error on one of them): MPI_Abort.
  [[noreturn]] static void abort(int code);
  // True when this process was started by mpirun / mpiexec / srun with more than one rank.
  static bool launched_by_mpi();

 private:
  int rank_ = 0;
  int world_ = 1;
  int local_rank_ = 0;
  int local_world_ = 1;
  bool thread_multiple_ = false;
};

// The control channel over MPI_COMM_WORLD (duplicated) once MPI is initialised, by a session or
// by a test's own main.
std::unique_ptr<ControlChannel> make_mpi_channel(WaitPolicy policy);

}  // namespace dtbench
