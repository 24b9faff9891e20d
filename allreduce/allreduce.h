#pragma once
// Allreduce of a float buffer across the ranks of a communicator, as a free function over an
// options struct (after Gloo's collectives): adding an algorithm is one enum value, one case and
// one file-local function.
#include <mpi.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "allreduce/request_wait.h"
#include "allreduce/shared_ring.h"
#include "allreduce/watchdog.h"

namespace dtbench {

enum class AllreduceAlgorithm {
  Ring,  // ours: reduce-scatter then allgather over point-to-point, chunk-pipelined (ring.cpp), or
         // the same sums over shared memory when every rank is on one host (shared_ring.h)
  Mpi,   // the MPI library's own blocking MPI_Allreduce, its tuned baseline (under a watchdog)
};

AllreduceAlgorithm parse_allreduce_algorithm(std::string_view name);  // kRingTransport | kMpiTransport
std::string_view algorithm_name(AllreduceAlgorithm algorithm);

// What an allreduce put on the wire and took off it, counted as it goes (the ring's sends and
// receives); MPI_Allreduce leaves it untouched, since Open MPI picks its algorithm unseen.
struct AllreduceTraffic {
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
};

struct AllreduceOptions {
  float* buffer = nullptr;  // in place: each rank's input, everyone's result
  int64_t count = 0;        // elements
  MPI_Comm comm = MPI_COMM_NULL;
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::Ring;
  bool average = true;            // divide the sum by the number of ranks
  int64_t chunk_bytes = 1 << 20;  // ring: the pipelining unit of each segment
  int tag = 0;
  WaitPolicy wait;                // deadline, stop flag, description for errors
  std::vector<float>* scratch = nullptr;  // ring: receive buffer to reuse (allocated if null)
  // mpi: enforces the deadline on the blocking call (aborting the job when it passes). Without
  // one — MPI gave no MPI_THREAD_MULTIPLE — MPI_Iallreduce is polled instead, at about half the
  // speed in Open MPI 4.1.
  Watchdog* watchdog = nullptr;
  AllreduceTraffic* traffic = nullptr;  // ring: adds what each step sends and receives, if set
  // ring: the shared-memory path, opened on `comm` (SharedRing::open), or null for messages.
  SharedRing* shared = nullptr;
};

// IoError when a peer does not answer before the deadline or an MPI call fails.
void allreduce(const AllreduceOptions& options);

// The ring on its own (allreduce() dispatches here for AllreduceAlgorithm::Ring).
void ring_allreduce(const AllreduceOptions& options);

}  // namespace dtbench
