#pragma once
// Which algorithm Open MPI's MPI_Allreduce runs, and what each costs in steps and bytes.
//
// Open MPI's coll/tuned component picks an allreduce algorithm per call from the communicator's
// size and the message's bytes (its "fixed" decision rules, v4.1 and v5.0: a table measured on the
// developers' clusters). The choice is not seen from outside the library, yet it decides the time:
// on 3 ranks, a 25 MB bucket goes through Rabenseifner's algorithm, which first folds one rank into
// its neighbour and at the end sends it the whole result — 4.5 times the bytes through the busiest
// connection, where a ring on the same 3 ranks sends 4/3. A report says which algorithm ran; the
// cost model (launch/predict) counts its steps, so that a fit on 2 and 3 ranks predicts 4.
#include <cstdint>
#include <string_view>
#include <vector>

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
// (a commutative operation), including the fall-backs of the algorithms themselves: the ring needs
// at least as many elements (`count`) as ranks, else it runs recursive doubling; Rabenseifner's as
// the largest power of two not above them, else the basic linear one.
OpenMpiAllreduce open_mpi_allreduce_choice(int ranks, int64_t bytes, int64_t count);

std::string_view open_mpi_allreduce_name(OpenMpiAllreduce algorithm);

// What one allreduce costs the busiest rank, in sequence: `latencies` message latencies, `wire_bytes`
// through the busiest of its connections (each way at once where the two directions do not wait on
// each other), `summed_bytes` of incoming data added into its own. Times follow as
// latencies·alpha + wire_bytes/beta + summed_bytes·(seconds per byte summed). The steps are those
// of Thakur, Rabenseifner and Gropp (2005), for the algorithms as Open MPI writes them.
struct AllreduceSteps {
  double latencies = 0.0;
  double wire_bytes = 0.0;
  double summed_bytes = 0.0;
};

// Our ring: 2(N-1) steps of S/N each way, (N-1)/N of S summed. (Between two ranks it sends eager
// messages, which need no acknowledgement, so both directions move at once: docs/cluster.md.)
AllreduceSteps ring_allreduce_steps(int ranks, double bytes);
// The largest message Open MPI's TCP transport sends eagerly: its default btl_tcp_eager_limit (64 KiB,
// which the emulated cluster keeps) less room for the match header that the limit counts.
inline constexpr double kOpenMpiEagerBytes = 65536 - 64;

// Open MPI's algorithms over its TCP transport, which carries both directions between two ranks on
// one connection and sends a large message by rendezvous, each acknowledgement queued behind the
// other direction's data: an exchange of m bytes each way with one peer moves as 2m, one after the
// other (docs/cluster.md: two ranks reach half the link each way). A message of at most
// `eager_bytes` goes eagerly, with no acknowledgement to wait for, and an exchange of such moves
// both ways at once, as m: Rabenseifner's later halving steps on 4 ranks or more (LeNet-5's 248 KB
// on 4: 124 KB in turn, then 62 KB at once) — where the link sets the rate; where the hosts' CPU
// does, it copies both directions either way, and `eager_bytes` 0 counts every exchange in turn
// (the cost model decides which from the benches). Open MPI's ring on 3 ranks or more sends to one
// neighbour and receives from the other, as ours.
AllreduceSteps open_mpi_allreduce_steps(OpenMpiAllreduce algorithm, int ranks, double bytes,
                                        double eager_bytes = kOpenMpiEagerBytes);

// The algorithms MPI_Allreduce takes for float32 buckets of these sizes on `ranks`, each once with
// the sizes it takes (each size once), in the buckets' order: what a report or a prediction names.
struct OpenMpiChoice {
  OpenMpiAllreduce algorithm = OpenMpiAllreduce::Ring;
  std::vector<int64_t> bucket_bytes{};
};
std::vector<OpenMpiChoice> open_mpi_choices(int ranks, const std::vector<int64_t>& bucket_bytes);

}  // namespace dtbench
