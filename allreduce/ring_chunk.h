#pragma once
// The ring's pipelining chunk: what each point-to-point message of a ring step carries.
//
// Between two ranks over TCP the chunk must be an *eager* message. Open MPI sends a larger one by
// rendezvous: the receiver answers the first fragment with an acknowledgement before the rest may
// follow. With two ranks the ring's left and right neighbour are one peer, and Open MPI's TCP BTL
// carries both directions between a pair over one connection, so that acknowledgement queues behind
// the receiver's own outgoing chunks — in its socket buffer and on the wire. Each direction then
// waits for the other and the pair moves half the link (2 hosts at 1 Gbit, 16–64 MiB: 1 MiB chunks
// 49–59 % of the link, eager chunks 94–95 %). Eager chunks need no answer; TCP paces them.
//
// With three or more ranks each connection carries one direction, acknowledgements pass freely,
// and 1 MiB chunks cost less per byte than eager ones (3 hosts at 10 Gbit, 64 MiB: 0.35 GB/s busbw
// against 0.28). In shared memory (shared_ring.h) the chunk is the slot each rank publishes
// through; there larger is better and no rendezvous exists.
#include <mpi.h>

#include <cstdint>
#include <string>

#include "allreduce/request_wait.h"

namespace dtbench {

inline constexpr int64_t kSharedMemoryChunkBytes = int64_t{1} << 20;
// Over messages between three or more ranks, and between two when the MPI library names no TCP
// eager limit (no TCP BTL loaded, or another PML, whose large messages go by RDMA).
inline constexpr int64_t kLargeMessageChunkBytes = int64_t{1} << 20;

struct RingChunk {
  int64_t bytes = 0;
  std::string source;  // why this size, for run summaries and the bench's header
};

// Open MPI's btl_tcp_eager_limit in bytes, read through the MPI tool interface (so an --mca
// setting counts); 0 when the library names no such limit (no TCP BTL, another MPI). After MPI_Init.
int64_t tcp_eager_limit();

// The largest ring chunk under an eager limit: less room for the PML's match header, which the
// limit counts, in whole floats.
int64_t eager_chunk_bytes(int64_t eager_limit);

// `requested` > 0 is the user's choice and is kept; 0 picks by path and world size as above. Every rank of
// `comm` must call it: ranks receive in chunks of their own size, so all take the smallest any
// rank picked (an MCA file that differs between hosts would otherwise truncate messages).
RingChunk resolve_ring_chunk(int64_t requested, bool shared_memory, MPI_Comm comm, const WaitPolicy& wait);

}  // namespace dtbench
