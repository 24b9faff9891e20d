#pragma once
// MPI for the life of a run: initialised with MPI_THREAD_MULTIPLE (the overlap thread sends while
// the main thread exchanges control messages), finalised on normal exit. Creating a session also
// makes the control channel, the topology (rank, world, local rank) MPI knows, and the peer watch
// every wait of the run services (peer_watch.h).
//
// Every communicator the run makes is an MpiComm (mpi_comm.h): the session frees those still held
// just before MPI_Finalize, so an owner that outlives the session (a bench's buffers, say) cannot
// free one after it.
//
// Start-up and shut-down are bounded like every other wait: MPI_Init and MPI_Finalize (each a
// barrier of the whole job inside Open MPI, which no rank can leave early) run under a timer that
// ends this process when a rank does not arrive in time, and the exchange of host names that gives
// the local rank is a non-blocking collective with the run's deadline.
#include <mpi.h>

#include <memory>
#include <string>

#include "allreduce/mpi_comm.h"
#include "allreduce/peer_watch.h"
#include "allreduce/request_wait.h"
#include "comm/control_channel.h"

namespace dtbench {

class MpiSession {
 public:
  // `start_up`: the deadline (and stop flag) of start-up and shut-down.
  explicit MpiSession(const WaitPolicy& start_up = {});
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }
  int local_rank() const { return local_rank_; }
  int local_world() const { return local_world_; }  // ranks on this host
  bool thread_multiple() const { return thread_multiple_; }
  PeerWatch& peers() const { return *peers_; }
  // A control channel on a communicator of its own, its every wait bounded by `policy` (which the
  // session gives its peer watch).
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
  double timeout_seconds_ = 60.0;
  std::unique_ptr<PeerWatch> peers_;
};

// MPI_Comm_idup waited on with `policy`: MPI_Comm_dup is a blocking collective, and a rank that
// never arrives would hold the others in it for ever. Freed before MPI_Finalize (mpi_comm.h).
MpiComm duplicate_communicator(MPI_Comm comm, const WaitPolicy& policy, const char* what);

// The control channel over MPI_COMM_WORLD (duplicated) once MPI is initialised, by a session or
// by a test's own main.
std::unique_ptr<ControlChannel> make_mpi_channel(WaitPolicy policy);

}  // namespace dtbench
