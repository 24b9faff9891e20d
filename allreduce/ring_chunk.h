#pragma once
// The ring's pipelining chunk: what each point-to-point message of a ring step carries.
//
// Between two ranks over TCP neither size wins everywhere, so both are timed at start:
//  - Eager chunks fill a link. Open MPI sends a message larger than its eager limit by rendezvous:
//    the receiver answers the first fragment with an acknowledgement before the rest may follow.
//    With two ranks the ring's left and right neighbour are one peer, and Open MPI's TCP BTL
//    carries both directions between a pair over one connection, so that acknowledgement queues
//    behind the receiver's own outgoing chunks — in its socket buffer and on the wire. Each
//    direction then waits for the other and the pair moves half the link (2 hosts at 1 Gbit,
//    16–64 MiB: 1 MiB chunks 49–59 % of the link, eager chunks 94–95 %). Eager chunks need no answer.
//  - 1 MiB chunks cost less CPU a byte: a sixteenth of the messages, and no copy out of the BTL's
//    receive buffers (ob1 unpacks every eager fragment: 15 % of a 2-host ring's CPU at 10 Gbit,
//    perf). Where the cores, not the link, bound the pair (hosts of 0.4 core at 10 Gbit) they were
//    faster from 4–9 MB up (64 MiB: 10–25 %); below, a rendezvous' round trip outweighs them (1
//    MiB: 2.3 ms against 5.5).
// So the largest eager message is the rule, and 1 MiB replaces it for each buffer size where it was
// timed faster on the run's own link and cores (resolve_ring_chunks).
//
// With three or more ranks each connection carries one direction, acknowledgements pass freely,
// and 1 MiB chunks cost less per byte than eager ones (3 hosts at 10 Gbit, 64 MiB: 0.35 GB/s busbw
// against 0.28). In shared memory (shared_ring.h) the chunk is the slot each rank publishes
// through; there larger is better and no rendezvous exists.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "allreduce/request_wait.h"

namespace dtbench {

inline constexpr int64_t kSharedMemoryChunkBytes = int64_t{1} << 20;
// Over messages between three or more ranks, and between two when the MPI library names no TCP
// eager limit (no TCP BTL loaded, or another PML, whose large messages go by RDMA).
inline constexpr int64_t kLargeMessageChunkBytes = int64_t{1} << 20;

// Both chunks' times on the run's link for one buffer size (between two ranks over TCP).
struct RingChunkTiming {
  int64_t bytes = 0;        // the buffer size the choice is for
  int64_t probe_bytes = 0;  // what was reduced to time it: the size, at most kChunkProbeMaxBytes, less on a slow link
  int64_t eager_bytes = 0;
  double eager_ms = 0;  // the median of the rounds, the slower rank's
  double large_ms = 0;  // the same with kLargeMessageChunkBytes
};

struct RingChunk {
  int64_t bytes = 0;
  std::string source;  // why this size, for run summaries and the bench's header
};

// The chunk of every buffer size a caller reduces: the rules' (agreed by the ranks), and between
// two ranks over TCP 1 MiB for the sizes where it was timed faster at start.
class RingChunks {
 public:
  RingChunks() = default;
  RingChunks(RingChunk rule, std::vector<RingChunkTiming> timings);
  const RingChunk& rule() const { return rule_; }
  int64_t bytes_for(int64_t buffer_bytes) const;  // a size not timed gets the rule's chunk
  const std::vector<RingChunkTiming>& timings() const { return timings_; }
  // The timings as the bench's JSON and a run's summary give them (with each size's chunk): null
  // where nothing was timed.
  nlohmann::json timings_json() const;

 private:
  RingChunk rule_;
  std::vector<RingChunkTiming> timings_;
};

// The largest buffer the timing reduces, and how much faster a 1 MiB chunk must have been to
// replace the eager one (which is what fills a link, the common case the rule was made for).
inline constexpr int64_t kChunkProbeMaxBytes = int64_t{64} << 20;
inline constexpr double kLargeChunkMargin = 0.05;
// A round of the probe about this long at most: where the eager chunk's first round takes longer,
// the probe shrinks in proportion (no smaller than three eager chunks a step). So slow links, where
// the link binds and the eager chunk stays anyway, cost seconds at start, not a minute (64 MiB at
// 100 Mbit: 5.6 s a round).
inline constexpr double kChunkProbeRoundSeconds = 0.25;

// Open MPI's btl_tcp_eager_limit in bytes, read through the MPI tool interface (so an --mca
// setting counts); 0 when the library names no such limit (no TCP BTL, another MPI). After MPI_Init.
int64_t tcp_eager_limit();

// The largest ring chunk under an eager limit: less room for the PML's match header, which the
// limit counts, in whole floats.
int64_t eager_chunk_bytes(int64_t eager_limit);

// `requested` > 0 is the user's choice and is kept; 0 picks by path and world size as above. Every
// rank of `comm` must call it, with the same `buffer_bytes` (the sizes it will reduce): ranks
// receive in chunks of their own size, so all take the smallest any rank picked (an MCA file that
// differs between hosts would otherwise truncate messages). Between two ranks over TCP, each size
// whose half (a ring step) spans more than one eager chunk is then timed with the eager chunk and
// with 1 MiB (on at most kChunkProbeMaxBytes), alternately, and gets 1 MiB if that was faster by
// more than kLargeChunkMargin; both ranks decide on the slower rank's medians, so they agree.
RingChunks resolve_ring_chunks(int64_t requested, bool shared_memory, MPI_Comm comm, const WaitPolicy& wait,
                               const std::vector<int64_t>& buffer_bytes);

// Which of two timed chunks to keep (the rule of resolve_ring_chunks, apart for tests).
bool large_chunk_wins(double eager_ms, double large_ms);

}  // namespace dtbench
