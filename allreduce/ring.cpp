// Ring allreduce over MPI point-to-point (Patarasuk & Yuan 2009; the schedule Baidu's and Gloo's
// rings use). With N ranks the buffer is cut into N segments; rank r sends to its right
// neighbour r+1 and receives from its left neighbour r-1.
//
//   reduce-scatter, step s = 0 .. N-2:  send segment (r - s) mod N, receive segment (r - s - 1)
//                                       mod N and add it into ours.
//     after N-1 steps rank r holds the complete sum of segment (r + 1) mod N.
//   allgather, step s = 0 .. N-2:       send segment (r + 1 - s) mod N, receive segment (r - s)
//                                       mod N straight into the buffer.
//
//        N = 3, after reduce-scatter          after allgather
//        rank 0: [ .  ,Σ1 , .  ]              [Σ0 ,Σ1 ,Σ2 ]
//        rank 1: [ .  , .  ,Σ2 ]              [Σ0 ,Σ1 ,Σ2 ]
//        rank 2: [Σ0 , .  , .  ]              [Σ0 ,Σ1 ,Σ2 ]
//
// Each rank sends and receives 2·K·(N−1)/N bytes for a K-byte buffer, whatever N is: that is why
// bus bandwidth (nccl-tests' algbw × 2(N−1)/N) compares rings of different sizes. Within a step
// the segment goes as chunks, all posted at once (non-blocking sends and receives), and each
// received chunk is reduced as soon as it lands, so reducing overlaps with the transfer of the
// rest. Segments differ in length by at most one element, so any count works, including counts
// smaller than N (some segments are then empty and nothing is sent for them).
#include <algorithm>

#include <fmt/format.h>

#include "allreduce/allreduce.h"
#include "allreduce/mpi_check.h"
#include "allreduce/ring_segments.h"

namespace dtbench {

namespace {

using Segment = RingSegment;

Segment segment(int64_t count, int world, int index) { return ring_segment(count, world, index); }

int chunks_in(int64_t count, int64_t chunk) { return static_cast<int>((count + chunk - 1) / chunk); }

// One ring step: send `out` to the right, receive the left neighbour's segment. With `reduce`,
// the received values are added into `in` chunk by chunk as they land; otherwise they are
// received straight into `in`.
void ring_step(const AllreduceOptions& o, int left, int right, const float* out, int64_t out_count,
               float* in, int64_t in_count, bool reduce, std::vector<float>& scratch,
               std::vector<MPI_Request>& receives, std::vector<MPI_Request>& sends, const WaitPolicy& wait,
               bool& sending) {
  const int64_t chunk = std::max<int64_t>(o.chunk_bytes / static_cast<int64_t>(sizeof(float)), 1);
  const int receive_chunks = chunks_in(in_count, chunk);
  const int send_chunks = chunks_in(out_count, chunk);
  receives.assign(static_cast<size_t>(receive_chunks), MPI_REQUEST_NULL);
  sends.assign(static_cast<size_t>(send_chunks), MPI_REQUEST_NULL);
  const PendingRequests pending_receives(receives), pending_sends(sends);
  float* landing = reduce ? scratch.data() : in;
  for (int c = 0; c < receive_chunks; ++c) {
    const int64_t begin = c * chunk;
    const int length = static_cast<int>(std::min(chunk, in_count - begin));
    check_mpi(MPI_Irecv(landing + begin, length, MPI_FLOAT, left, o.tag, o.comm, &receives[static_cast<size_t>(c)]),
              "MPI_Irecv");
  }
  for (int c = 0; c < send_chunks; ++c) {
    const int64_t begin = c * chunk;
    const int length = static_cast<int>(std::min(chunk, out_count - begin));
    check_mpi(MPI_Isend(out + begin, length, MPI_FLOAT, right, o.tag, o.comm, &sends[static_cast<size_t>(c)]),
              "MPI_Isend");
  }
  if (o.traffic != nullptr) {
    o.traffic->bytes_sent += out_count * static_cast<int64_t>(sizeof(float));
    o.traffic->bytes_received += in_count * static_cast<int64_t>(sizeof(float));
  }
  sending = false;  // for the error message: first the left neighbour's data is awaited
  if (reduce) {
    for (int done = 0; done < receive_chunks; ++done) {
      const int c = wait_any(receives, wait);
      const int64_t begin = c * chunk;
      const int64_t length = std::min(chunk, in_count - begin);
      const float* arrived = landing + begin;
      float* into = in + begin;
      for (int64_t i = 0; i < length; ++i) into[i] += arrived[i];
    }
  } else {
    wait_all(receives, wait);
  }
  sending = true;
  wait_all(sends, wait);
}

}  // namespace

void ring_allreduce(const AllreduceOptions& o) {
  int rank = 0, world = 1;
  check_mpi(MPI_Comm_rank(o.comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(o.comm, &world), "MPI_Comm_size");
  if (world == 1 || o.count == 0) return;  // the sum of one is itself, and so is its average
  if (o.shared != nullptr) {
    o.shared->allreduce(o);
    return;
  }
  const int left = (rank + world - 1) % world;
  const int right = (rank + 1) % world;

  std::vector<float> local_scratch;
  std::vector<float>& scratch = o.scratch != nullptr ? *o.scratch : local_scratch;
  scratch.resize(static_cast<size_t>(segment(o.count, world, world - 1).count + 1));
  // Called for every bucket of every step: the request lists are kept per thread (the training
  // thread, or the overlap thread) rather than allocated each call.
  thread_local std::vector<MPI_Request> receives, sends;

  // Where the ring is, for a timeout's message. The message is built only on failure; the
  // closure holds one pointer, so std::function keeps it without allocating.
  struct Where {
    const AllreduceOptions& o;
    const char* phase;
    int step, rank, left, right;
    bool sending;
  } where{o, "", 0, rank, left, right, false};
  int& step = where.step;
  const char*& phase = where.phase;
  WaitPolicy wait = o.wait;
  // Names the neighbour this rank is waiting on; which rank is silent, the roll call (peer_watch.h)
  // says: the left neighbour may itself be waiting for its own left.
  wait.describe = [w = &where] {
    return fmt::format("ring allreduce of {} floats, {} step {}: rank {} waiting for {}{}", w->o.count, w->phase,
                       w->step, w->rank,
                       w->sending ? fmt::format("rank {} (right) to take its segment", w->right)
                                  : fmt::format("rank {}'s segment (left)", w->left),
                       w->o.wait.describe ? "; " + w->o.wait.describe() : std::string());
  };

  phase = "reduce-scatter";
  for (step = 0; step < world - 1; ++step) {
    const Segment out = segment(o.count, world, (rank - step + world) % world);
    const Segment in = segment(o.count, world, (rank - step - 1 + 2 * world) % world);
    ring_step(o, left, right, o.buffer + out.offset, out.count, o.buffer + in.offset, in.count, true, scratch,
              receives, sends, wait, where.sending);
  }
  if (o.average) {
    const Segment owned = segment(o.count, world, (rank + 1) % world);
    const float scale = 1.0f / static_cast<float>(world);
    for (int64_t i = 0; i < owned.count; ++i) o.buffer[owned.offset + i] *= scale;
  }
  phase = "allgather";
  for (step = 0; step < world - 1; ++step) {
    const Segment out = segment(o.count, world, (rank + 1 - step + world) % world);
    const Segment in = segment(o.count, world, (rank - step + world) % world);
    ring_step(o, left, right, o.buffer + out.offset, out.count, o.buffer + in.offset, in.count, false, scratch,
              receives, sends, wait, where.sending);
  }
}

}  // namespace dtbench
