#pragma once
// Can this rank talk to its ring neighbours, how fast, and does data arrive intact? The ring
// allreduce only ever talks to rank−1 and rank+1, so those two links are the ones to check
// before a long run (`dtbench doctor`). Every rank probes both neighbours at once and echoes
// theirs; every wait has a deadline, so a silent neighbour is named instead of hanging the job.
#include <mpi.h>

#include <cstdint>
#include <string>

#include "allreduce/request_wait.h"

namespace dtbench {

struct NeighbourProbeOptions {
  MPI_Comm comm = MPI_COMM_NULL;
  int small_round_trips = 20;       // the round-trip time is their median
  int64_t small_bytes = 8;
  int64_t large_bytes = int64_t{1} << 20;  // one round trip, echoed back and compared
  WaitPolicy wait;                  // deadline of each round
};

struct NeighbourLink {
  int rank = -1;
  double rtt_seconds = 0;          // median of the small round trips
  double large_gbps = 0;           // 2 · large_bytes / that round trip's time (1e9 B/s)
};

struct NeighbourProbe {
  NeighbourLink left, right;
  std::string error;  // empty when both links answered in time and echoed intact data
  bool passed() const { return error.empty(); }
};

// Collective over the communicator's ranks (each must call it); with one rank it passes at once.
NeighbourProbe probe_ring_neighbours(const NeighbourProbeOptions& options);

}  // namespace dtbench
