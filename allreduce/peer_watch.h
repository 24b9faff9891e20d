#pragma once
// Who is still answering, and word of a rank that failed, on MPI_COMM_WORLD with tags of its own.
//
// A wait can only say what it waited for; when a collective or a ring step times out, the silent
// rank is usually not the peer this rank talks to (in a ring, rank 0 waits for rank 2, which waits
// for the frozen rank 1). So a rank that times out calls the roll: it pings every rank and names
// those that do not answer within a grace period. Every wait of the run (request_wait.h, the
// watchdog) services the watch while it waits: it answers pings, and when another rank has
// announced a failure it ends the wait with that rank's reason (PeerFailure), so every surviving
// rank writes its report before the job is aborted (job_failure.h).
#include <mpi.h>

#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/util/error.h"

namespace dtbench {

// Another rank failed and said why.
class PeerFailure : public IoError {
 public:
  PeerFailure(int rank, const std::string& reason)
      : IoError(fmt::format("rank {} failed: {}", rank, reason)), rank_(rank) {}
  int rank() const { return rank_; }

 private:
  int rank_;
};

class PeerWatch {
 public:
  PeerWatch();  // on MPI_COMM_WORLD, once MPI is initialised
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }

  // Every rank's host name, by rank, once the session has gathered them: from then on, when the
  // ranks span several hosts, ranks are named with their host ("rank 1 on c1-h1"), so that a
  // silent rank behind a cut link points at the host to look at.
  void set_host_names(std::vector<std::string> hosts);
  // "rank 1", or "rank 1 on HOST" when the ranks span several hosts.
  std::string name_of(int rank) const;

  // Answers pings; throws PeerFailure once another rank has announced a failure (again at every
  // call after that). Cheap when nothing arrived: two MPI_Iprobe calls. Any thread.
  void service();
  // Pings every other rank; returns those that did not answer within `grace_seconds`.
  std::vector<int> roll_call(double grace_seconds);
  // Tells every other rank that this one failed, and why.
  void announce(const std::string& reason);
  // Tells `rank` (the one that announced a failure) that this rank's report is written.
  void say_done(int rank);
  // Waits until every other rank has said it is done (or announced a failure of its own, which
  // means the same) or `grace_seconds` pass, answering pings meanwhile; ranks the last roll call
  // found silent are not waited for. Returns the ranks that said nothing.
  std::vector<int> await_done(double grace_seconds);
  // Answers pings for `seconds` (or until the process is ended).
  void linger(double seconds);

 private:
  void answer_pings();
  void read_notices();
  void send(int to, int tag, std::vector<char> payload);
  void reap_sends();
  bool take(int tag, int& from, std::vector<char>& payload);

  int rank_ = 0;
  int world_ = 1;
  int roll_id_ = 0;
  std::recursive_mutex mutex_;
  std::optional<PeerFailure> failure_;  // the first failure another rank announced
  std::set<int> announced_;             // ranks that announced a failure of their own, or said done
  std::set<int> silent_;                // found silent by the last roll call
  std::vector<std::string> hosts_;      // by rank; empty, or all equal: names leave hosts out
  struct Outgoing {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<char> payload;
  };
  std::deque<Outgoing> sends_;
};

// "rank 1 did not answer a roll call within 0.3 s (ranks 0, 2 did)", or that every rank did.
std::string roll_call_text(PeerWatch& peers, double grace_seconds);

// The grace a roll call waits for answers: long enough for a rank that is itself waiting (it
// answers within milliseconds, but with 3 ranks and a build on 2 cores 0.3 s once missed a rank
// that was waiting), short beside the run's timeout: a fifth of it, 0.5 to 2 s.
double roll_call_grace(double timeout_seconds);

}  // namespace dtbench
