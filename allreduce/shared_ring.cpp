#include "allreduce/shared_ring.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "allreduce/allreduce.h"
#include "allreduce/mpi_check.h"
#include "allreduce/ring_segments.h"

namespace dtbench {

// Written only by the rank whose slot holds it, read by the others: counts of chunk rounds, which
// only grow over the ring's life. A cache line of its own, so polling it disturbs no other writer.
struct alignas(64) SharedRing::Progress {
  uint64_t staged = 0;    // rounds whose segments this rank has copied into its slot
  uint64_t reduced = 0;   // rounds whose own segment it has summed into its slot
  uint64_t gathered = 0;  // rounds whose reduced segments it has copied out of the peers' slots
};

namespace {

// The counters, then the floats, from a cache-line boundary: MPI aligns a slot less strictly.
constexpr int64_t kHeaderBytes = 4096;
constexpr uintptr_t kAlignment = 64;
// Rounds a slot holds before it is reused: a rank may run this many rounds ahead of the slowest
// reader of its slot before it waits.
constexpr uint64_t kDepth = 3;

char* aligned(void* base) {
  const auto address = reinterpret_cast<uintptr_t>(base);
  return reinterpret_cast<char*>((address + kAlignment - 1) & ~(kAlignment - 1));
}

uint64_t load(uint64_t& counter) { return std::atomic_ref<uint64_t>(counter).load(std::memory_order_acquire); }
void publish(uint64_t& counter, uint64_t value) {
  std::atomic_ref<uint64_t>(counter).store(value, std::memory_order_release);
}

WaitPolicy described(const WaitPolicy& wait, std::function<std::string()> what) {
  WaitPolicy policy = wait;
  policy.describe = [what = std::move(what), outer = wait.describe] {
    return what() + (outer ? "; " + outer() : std::string());
  };
  return policy;
}

// MPI_Comm_split_type, MPI_Win_allocate_shared and MPI_Win_free block until every rank arrives: a
// bounded barrier first turns a missing rank into a timeout instead of a hang.
void bounded_barrier(MPI_Comm comm, const WaitPolicy& wait) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm, &request), "MPI_Ibarrier");
  wait_all({&request, 1}, wait);
}

// Chunk `round` of a segment: the part a round moves, empty once the segment is used up.
RingSegment chunk_of(const RingSegment& segment, int64_t round, int64_t chunk) {
  const int64_t begin = std::min(segment.count, round * chunk);
  return {segment.offset + begin, std::min(chunk, segment.count - begin)};
}

// Adds the peers' values into `sum` in the order given (the ring's), scales, and publishes the
// result. In blocks that stay in L1 while every peer's values are added to them.
void reduce_chunk(float* sum, float* published, const std::vector<const float*>& peers, int64_t count,
                  float scale) {
  constexpr int64_t kBlock = 2048;
  for (int64_t block = 0; block < count; block += kBlock) {
    const int64_t length = std::min(kBlock, count - block);
    float* __restrict acc = sum + block;
    for (const float* peer : peers) {
      const float* __restrict in = peer + block;
      for (int64_t i = 0; i < length; ++i) acc[i] += in[i];
    }
    if (scale != 1.0f) {
      for (int64_t i = 0; i < length; ++i) acc[i] *= scale;
    }
    std::memcpy(published + block, acc, static_cast<size_t>(length) * sizeof(float));
  }
}

}  // namespace

RingPath parse_ring_path(std::string_view name) {
  if (name == "auto") return RingPath::Auto;
  if (name == "shm") return RingPath::Shm;
  if (name == "messages") return RingPath::Messages;
  fail_input("ring path '{}' is not known; choose auto (shared memory when every rank is on one host), shm or "
             "messages",
             name);
}

std::string_view ring_path_name(RingPath path) {
  switch (path) {
    case RingPath::Auto:
      return "auto";
    case RingPath::Shm:
      return "shm";
    case RingPath::Messages:
      return "messages";
  }
  return "?";
}

SharedRing::SharedRing(MPI_Comm comm, MPI_Comm node) : comm_(comm), node_(node) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &world_);
}

SharedRing::~SharedRing() {
  // Not released: an error path, where a peer may be dead and MPI_Win_free would wait for it for
  // ever. The window goes with the process.
  if (window_ == MPI_WIN_NULL && node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

std::unique_ptr<SharedRing> SharedRing::open(RingPath path, MPI_Comm comm, int64_t chunk_bytes,
                                             const WaitPolicy& wait) {
  int rank = 0, world = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &world), "MPI_Comm_size");
  if (path == RingPath::Messages || world == 1) return nullptr;
  const WaitPolicy setting_up =
      described(wait, [rank] { return fmt::format("rank {}: setting up the shared-memory ring", rank); });
  bounded_barrier(comm, setting_up);
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  // Every rank must take the same path: one host only if every rank's split holds them all.
  int here = node_size == world ? 1 : 0, everywhere = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, comm, &request), "MPI_Iallreduce");
  wait_all({&request, 1}, setting_up);
  if (everywhere == 0) {
    MPI_Comm_free(&node);
    if (path == RingPath::Shm) {
      fail_input("ring path shm needs every rank on one host, but these {} ranks span several hosts: choose auto "
                 "(shared memory within a host, messages across) or messages",
                 world);
    }
    return nullptr;
  }
  std::unique_ptr<SharedRing> ring(new SharedRing(comm, node));
  ring->allocate(ring->slot_floats(std::max<int64_t>(chunk_bytes / static_cast<int64_t>(sizeof(float)), 1)),
                 setting_up);
  return ring;
}

void SharedRing::allocate(int64_t capacity, const WaitPolicy& wait) {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each slot on its owner's pages
  char* own = nullptr;
  const auto bytes =
      static_cast<MPI_Aint>(kAlignment + kHeaderBytes + capacity * static_cast<int64_t>(sizeof(float)));
  const int status = MPI_Win_allocate_shared(bytes, 1, info, node_, &own, &window_);
  MPI_Info_free(&info);
  check_mpi(status, "MPI_Win_allocate_shared");
  bases_.assign(static_cast<size_t>(world_), nullptr);
  for (int q = 0; q < world_; ++q) {
    MPI_Aint size = 0;
    int unit = 0;
    void* base = nullptr;
    check_mpi(MPI_Win_shared_query(window_, q, &size, &unit, &base), "MPI_Win_shared_query");
    bases_[static_cast<size_t>(q)] = aligned(base);
  }
  capacity_ = capacity;
  rounds_ = 0;
  new (aligned(own)) Progress{};
  bounded_barrier(comm_, wait);  // every rank's counters are zero before anyone reads them
}

void SharedRing::free_window() {
  check_mpi(MPI_Win_free(&window_), "MPI_Win_free");
  bases_.clear();
}

void SharedRing::release(const WaitPolicy& wait) {
  if (window_ == MPI_WIN_NULL) return;
  // Every rank has arrived, so none still reads a peer's slot.
  bounded_barrier(comm_, described(wait, [this] {
                    return fmt::format("rank {}: releasing the shared-memory ring", rank_);
                  }));
  free_window();
  MPI_Comm_free(&node_);
}

SharedRing::Progress& SharedRing::progress(int rank) const {
  return *std::launder(reinterpret_cast<Progress*>(bases_[static_cast<size_t>(rank)]));
}

float* SharedRing::slot(int rank) const {
  return reinterpret_cast<float*>(bases_[static_cast<size_t>(rank)] + kHeaderBytes);
}

struct SharedRing::Waiting {
  const char* what = "";  // what the peer is to do
  int64_t round = 0;
  int64_t rounds = 0;
  int peer = 0;
};

void SharedRing::allreduce(const AllreduceOptions& o) {
  if (broken_) throw IoError("the shared-memory ring is out of step after an earlier failed wait");
  if (o.count == 0) return;
  const int64_t chunk = std::max<int64_t>(o.chunk_bytes / static_cast<int64_t>(sizeof(float)), 1);
  Waiting waiting;
  // Built only on failure, like the message ring's: names the peer and what it was to do.
  const WaitPolicy wait = described(o.wait, [this, &o, w = &waiting] {
    return fmt::format("ring allreduce of {} floats over shared memory, round {} of {}: rank {} waiting for rank {} "
                       "to {}",
                       o.count, w->round + 1, w->rounds, rank_, w->peer, w->what);
  });
  try {
    if (slot_floats(chunk) > capacity_) {  // every rank has the same chunk: all grow together
      waiting.what = "arrive at the window's growth";
      bounded_barrier(comm_, wait);  // nobody reads the old window any more
      free_window();
      allocate(slot_floats(chunk), wait);
    }
    run_rounds(o, chunk, wait, waiting);
  } catch (...) {
    broken_ = true;
    throw;
  }
  count_traffic(o);
}

int64_t SharedRing::slot_floats(int64_t chunk) const { return kDepth * world_ * chunk; }

// Chunk `segment` of round `round` (counted over the ring's life) in `rank`'s slot: the slot holds
// kDepth rounds, each a chunk per segment, and is reused round after round.
float* SharedRing::staging(int rank, uint64_t round, int segment, int64_t chunk) const {
  const auto region = static_cast<int64_t>(round % kDepth);
  return slot(rank) + (region * world_ + segment) * chunk;
}

// Round c stages chunk c of every segment, reduces chunk c of this rank's own, and gathers chunk
// c - 1 of the peers' (by then, most likely reduced already: no wait). The counters count rounds
// over the ring's life, so one call's rounds follow the previous call's.
void SharedRing::run_rounds(const AllreduceOptions& o, int64_t chunk, const WaitPolicy& wait, Waiting& waiting) {
  const int64_t longest = (o.count + world_ - 1) / world_;
  const int64_t rounds = (longest + chunk - 1) / chunk;
  const uint64_t base = rounds_;
  waiting.rounds = rounds;
  if (chunk != chunk_) {  // the slot's parts move: every peer must be done with all of them
    waiting.what = "finish reading this rank's slot";
    await_peers(&Progress::gathered, base, wait, waiting);
    chunk_ = chunk;
  }
  Progress& own = progress(rank_);
  for (int64_t c = 0; c <= rounds; ++c) {
    const uint64_t round = base + static_cast<uint64_t>(c);
    if (c < rounds) {
      waiting.round = c;
      if (round >= kDepth) {  // the peers are done with this part of the slot, kDepth rounds ago
        waiting.what = "finish reading this rank's slot";
        await_peers(&Progress::gathered, round - kDepth + 1, wait, waiting);
      }
      stage(o, round, c, chunk);
      publish(own.staged, round + 1);
      waiting.what = "stage its segments";
      await_peers(&Progress::staged, round + 1, wait, waiting);
      reduce(o, round, c, chunk);
      publish(own.reduced, round + 1);
    }
    if (c == 0) continue;
    waiting.round = c - 1;
    waiting.what = "reduce its segment";
    await_peers(&Progress::reduced, round, wait, waiting);
    gather(o, round - 1, c - 1, chunk);
    publish(own.gathered, round);
  }
  rounds_ = base + static_cast<uint64_t>(rounds);
}

void SharedRing::await_peers(uint64_t Progress::*counter, uint64_t target, const WaitPolicy& wait,
                             Waiting& waiting) {
  for (int q = 0; q < world_; ++q) {
    if (q == rank_) continue;
    uint64_t& theirs = progress(q).*counter;
    if (load(theirs) >= target) continue;
    waiting.peer = q;
    // MPI makes progress only inside MPI calls: a peer may be waiting for it (a send of this rank's
    // that its receiver acknowledges, a roll call), so the probe keeps MPI moving while we poll.
    wait_until(
        [&] {
          if (load(theirs) >= target) return true;
          int flag = 0;
          MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
          return false;
        },
        wait);
  }
}

// This rank's values of the segments the peers reduce, into its slot.
void SharedRing::stage(const AllreduceOptions& o, uint64_t round, int64_t c, int64_t chunk) {
  for (int j = 0; j < world_; ++j) {
    if (j == rank_) continue;
    const RingSegment part = chunk_of(ring_segment(o.count, world_, j), c, chunk);
    std::memcpy(staging(rank_, round, j, chunk), o.buffer + part.offset,
                static_cast<size_t>(part.count) * sizeof(float));
  }
}

// Segment r starts at rank r, and ranks r+1, r+2, ... add theirs in turn, as in the message ring.
void SharedRing::reduce(const AllreduceOptions& o, uint64_t round, int64_t c, int64_t chunk) {
  const RingSegment part = chunk_of(ring_segment(o.count, world_, rank_), c, chunk);
  if (part.count == 0) return;
  thread_local std::vector<const float*> peers;
  peers.clear();
  for (int k = 1; k < world_; ++k) peers.push_back(staging((rank_ + k) % world_, round, rank_, chunk));
  const float scale = o.average ? 1.0f / static_cast<float>(world_) : 1.0f;
  reduce_chunk(o.buffer + part.offset, staging(rank_, round, rank_, chunk), peers, part.count, scale);
}

void SharedRing::gather(const AllreduceOptions& o, uint64_t round, int64_t c, int64_t chunk) {
  for (int q = 0; q < world_; ++q) {
    if (q == rank_) continue;
    const RingSegment part = chunk_of(ring_segment(o.count, world_, q), c, chunk);
    std::memcpy(o.buffer + part.offset, staging(q, round, q, chunk), static_cast<size_t>(part.count) * sizeof(float));
  }
}

// What the peers read out of this slot (sent) and this rank out of theirs (received): over all
// ranks, the 2·(N−1)·K floats the message ring moves, and 2·K·(N−1)/N per rank give or take the
// uneven segments.
void SharedRing::count_traffic(const AllreduceOptions& o) const {
  if (o.traffic == nullptr) return;
  const int64_t own = ring_segment(o.count, world_, rank_).count;
  const int64_t floats = (o.count - own) + (world_ - 1) * own;
  o.traffic->bytes_sent += floats * static_cast<int64_t>(sizeof(float));
  o.traffic->bytes_received += floats * static_cast<int64_t>(sizeof(float));
}

}  // namespace dtbench
