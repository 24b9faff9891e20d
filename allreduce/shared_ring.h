#pragma once
// The ring allreduce over shared memory, for ranks that all live on one host: instead of copying
// each chunk through MPI messages (Open MPI's shared-memory transport copies every one through the
// kernel), every rank stages what the others need in an MPI-3 shared window (MPI_Win_allocate_shared
// on the communicator's shared-memory split) and reads the peers' values straight out of it.
//
// Per allreduce, with N ranks and the message ring's N segments, rank r, chunk by chunk (a round
// moves one chunk of every segment):
//   stage:   copy its chunks of the segments j != r into its own window slot;
//   reduce:  sum segment r in the message ring's order — segment j starts at rank j and rank j+1,
//            j+2, ... add in turn, so ((v_j + v_j+1) + v_j+2) + ... — from its own buffer and the
//            peers' slots, into its buffer and its slot;
//   gather:  copy each peer's reduced segment out of that peer's slot into its buffer.
// A slot holds the chunks of the last few rounds only and is reused round after round (a rank
// waits before reusing a part until every peer has read it): it stays in cache, while the data
// itself streams once through each rank's buffer, and it is small whatever the buffer's size.
// Every element is summed in exactly the order the message ring sums it, and the result
// is bit for bit the message ring's (tests/allreduce/test_shared_ring.cpp checks it): a run on one
// host and the same run across hosts (messages) end with identical weights.
//
// The ranks tell each other how far they are with counters in their slots; every wait on a peer's
// counter is bounded like any other wait of the run (request_wait.h: deadline, stop flag, peer
// watch, roll call), so a dead or frozen peer ends the run with an error naming it. A wait that
// failed leaves the counters out of step: the ring refuses further use (the run is ending anyway).
//
// Setting up and releasing are collective (MPI_Comm_split_type, MPI_Win_allocate_shared and
// MPI_Win_free block until every rank arrives): each is preceded by a bounded non-blocking barrier,
// and a ring never released (an error path, a peer possibly dead) leaves its window to the end of
// the process rather than block in MPI_Win_free.
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "allreduce/request_wait.h"

namespace dtbench {

struct AllreduceOptions;

// Which path the ring takes: shared memory when every rank is on one host (auto), or always
// messages, or shared memory and an error when the ranks span hosts. `comm.ring_path` in a
// blueprint, `--ring-path` in `bench allreduce`.
enum class RingPath { Auto, Shm, Messages };

RingPath parse_ring_path(std::string_view name);  // "auto" | "shm" | "messages"
std::string_view ring_path_name(RingPath path);

class SharedRing {
 public:
  // Collective over `comm`, bounded by `wait`. The ring for `path`: nullptr for messages, for a
  // single rank, and under auto when the ranks span several hosts; InputError under shm then.
  // `chunk_bytes`: the chunk the allreduces will use (a larger one grows the window, collectively).
  static std::unique_ptr<SharedRing> open(RingPath path, MPI_Comm comm, int64_t chunk_bytes,
                                          const WaitPolicy& wait);
  ~SharedRing();
  SharedRing(const SharedRing&) = delete;
  SharedRing& operator=(const SharedRing&) = delete;

  // The ring allreduce of `o` (o.comm must be the communicator the ring was opened on).
  void allreduce(const AllreduceOptions& o);
  // Collective: frees the window once every rank has arrived (bounded by `wait`).
  void release(const WaitPolicy& wait);

 private:
  struct Progress;  // one rank's counters, at the start of its slot
  SharedRing(MPI_Comm comm, MPI_Comm node);
  void allocate(int64_t capacity, const WaitPolicy& wait);
  void free_window();
  Progress& progress(int rank) const;
  float* slot(int rank) const;
  int64_t slot_floats(int64_t chunk) const;
  float* staging(int rank, uint64_t round, int segment, int64_t chunk) const;
  // One allreduce, chunk round by chunk round; `waiting` names what a wait is for, for its error.
  struct Waiting;
  void run_rounds(const AllreduceOptions& o, int64_t chunk, const WaitPolicy& wait, Waiting& waiting);
  // Waits until every peer's `counter` reaches `target`.
  void await_peers(uint64_t Progress::*counter, uint64_t target, const WaitPolicy& wait, Waiting& waiting);
  // Chunk c of the call, which is round `round` of the ring's life.
  void stage(const AllreduceOptions& o, uint64_t round, int64_t c, int64_t chunk);
  void reduce(const AllreduceOptions& o, uint64_t round, int64_t c, int64_t chunk);
  void gather(const AllreduceOptions& o, uint64_t round, int64_t c, int64_t chunk);
  void count_traffic(const AllreduceOptions& o) const;

  MPI_Comm comm_ = MPI_COMM_NULL;  // the caller's; ranks numbered as in it
  MPI_Comm node_ = MPI_COMM_NULL;  // its shared-memory split: the same ranks, in the same order
  MPI_Win window_ = MPI_WIN_NULL;
  int rank_ = 0;
  int world_ = 1;
  int64_t capacity_ = 0;          // floats per slot
  std::vector<char*> bases_;      // every rank's slot, mapped here
  uint64_t rounds_ = 0;           // chunk rounds completed, the same count on every rank
  int64_t chunk_ = 0;             // floats per chunk of the last allreduce: how the slot is cut
  bool broken_ = false;           // a wait failed: the counters are out of step
};

}  // namespace dtbench
