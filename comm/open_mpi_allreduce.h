#pragma once
// Which algorithm Open MPI's MPI_Allreduce runs, and what each costs in steps and bytes.
//
// Open MPI's coll/tuned component picks an allreduce algorithm per call from the communicator's
// size and the message's bytes (its "fixed" decision rules, v4.1 and v5.0: a table measured on the
// developers' clusters). The choice is not seen from outside the library, yet it decides the time:
// on 3 ranks, a 25 MB bucket goes through Rabenseifner's algorithm, which first folds one rank into
// its neighbour and at the end sends it the whole result — about 2.25 times the bytes a ring sends
// on the same 3 ranks, while on 2 and 4 ranks the two send alike. A report says which algorithm
// ran; the cost model (launch/predict) counts its steps, so that a fit on 2 and 3 ranks predicts 4.
#include <cstdint>
#include <string>
#include <string_view>

namespace dtbench {

// coll/tuned's numbering (its MCA parameter coll_tuned_allreduce_algorithm).
enum class OpenMpiAllreduce {
  BasicLinear = 1,
  Nonoverlapping = 2,      // a reduce to one rank, then a broadcast
  RecursiveDoubling = 3,
  Ring = 4,
  SegmentedRing = 5,
  Rabenseifner = 6,        // reduce-scatter by recursive halving, allgather by recursive doubling
};

// The algorithm Open MPI 4.1's (and 5.0's) fixed rules choose for a sum of `bytes` over `ranks`
// (a commutative operation), including the fall-backs of the algorithms themselves: the ring and
// Rabenseifner's need at least as many elements (`count`) as ranks (Rabenseifner's: as the largest
// power of two not above them), else they run recursive doubling.
OpenMpiAllreduce open_mpi_allreduce_choice(int ranks, int64_t bytes, int64_t count);

std::string_view open_mpi_allreduce_name(OpenMpiAllreduce algorithm);

// What one allreduce costs the busiest rank, in sequence: `latencies` message latencies, `wire_bytes`
// sent and received (each way) over its link, `summed_bytes` of incoming data added into its own.
// Times follow as latencies·alpha + wire_bytes/beta + summed_bytes·(seconds per byte summed). The
// counts are those of Thakur, Rabenseifner and Gropp (2005), for the algorithms as Open MPI writes them.
struct AllreduceSteps {
  double latencies = 0.0;
  double wire_bytes = 0.0;
  double summed_bytes = 0.0;
};

// Our ring (and Open MPI's): 2(N-1) steps of S/N each, (N-1)/N of S summed.
AllreduceSteps ring_allreduce_steps(int ranks, double bytes);
AllreduceSteps open_mpi_allreduce_steps(OpenMpiAllreduce algorithm, int ranks, double bytes);

// "rabenseifner at 3 ranks for 26214400 B": for a report.
std::string describe_open_mpi_choice(int ranks, int64_t bytes, int64_t count);

}  // namespace dtbench
