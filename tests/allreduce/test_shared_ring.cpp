// The ring's shared-memory path at the world size mpirun gave (CTest runs it with 1 to 5 ranks, all
// on this host): its sums against a plain sum computed here from every rank's values, for awkward
// lengths (counts below the number of ranks, odd counts, segments smaller and larger than a chunk,
// counts that outgrow the window); bit for bit against the message path and against the ring's
// order of additions written out independently; and its waits bounded like the message ring's.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "allreduce/allreduce.h"
#include "allreduce/shared_ring.h"
#include "core/util/error.h"
#include "core/util/rng.h"
#include "tests/allreduce/mpi_world.h"

namespace dtbench {
namespace {

using testing::world_rank;
using testing::world_size;

WaitPolicy wait_for(double seconds) { return {.timeout_seconds = seconds, .stop_requested = {}, .describe = {}}; }

// Rank r's values: normal draws, whose float sums depend on the order of the additions.
std::vector<float> values_of(int rank, int64_t count, uint64_t seed) {
  Rng rng = Rng::derive(seed, static_cast<uint64_t>(rank));
  std::vector<float> values(static_cast<size_t>(count));
  for (float& x : values) x = rng.normal();
  return values;
}

// A ring on a communicator of its own, released at the end of the test.
class SharedRingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    ring_ = SharedRing::open(RingPath::Shm, comm_, 16, wait_for(30));  // for 16-byte chunks: most grow it
  }
  void TearDown() override {
    if (ring_) ring_->release(wait_for(30));
    ring_.reset();
    MPI_Comm_free(&comm_);
  }

  AllreduceOptions options(std::vector<float>& buffer, int64_t chunk_bytes, bool average, bool shared) {
    AllreduceOptions o;
    o.buffer = buffer.data();
    o.count = static_cast<int64_t>(buffer.size());
    o.comm = comm_;
    o.average = average;
    o.chunk_bytes = chunk_bytes;
    o.wait = wait_for(30);
    o.shared = shared ? ring_.get() : nullptr;
    return o;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::unique_ptr<SharedRing> ring_;
};

struct Case {
  int64_t count;
  int64_t chunk_bytes;
};

std::vector<Case> awkward_cases() {
  const int world = world_size();
  return {{0, 1 << 20},  {1, 1 << 20},     {world - 1 > 0 ? world - 1 : 1, 4}, {7, 4},
          {100, 8},     {1001, 64},       {4099, 1 << 20},                    {300007, 1 << 16}};
}

TEST_F(SharedRingTest, OneHostTakesSharedMemoryAndASingleRankNeedsNone) {
  EXPECT_EQ(ring_ != nullptr, world_size() > 1);
  EXPECT_TRUE(SharedRing::open(RingPath::Messages, comm_, 16, wait_for(30)) == nullptr);
  EXPECT_EQ(parse_ring_path("messages"), RingPath::Messages);
  EXPECT_THROW(parse_ring_path("tcp"), InputError);
}

// Against a sum in double of every rank's values, each computed here: within float rounding.
TEST_F(SharedRingTest, SumMatchesAPlainSumForAwkwardLengths) {
  const int rank = world_rank(), world = world_size();
  for (const Case& c : awkward_cases()) {
    SCOPED_TRACE(::testing::Message() << "count " << c.count << " chunk " << c.chunk_bytes << ", " << world
                                      << " ranks");
    std::vector<double> expected(static_cast<size_t>(c.count), 0.0);
    for (int r = 0; r < world; ++r) {
      const auto v = values_of(r, c.count, 7);
      for (size_t i = 0; i < v.size(); ++i) expected[i] += v[i];
    }
    std::vector<float> buffer = values_of(rank, c.count, 7);
    allreduce(options(buffer, c.chunk_bytes, false, true));
    int64_t wrong = 0;
    for (size_t i = 0; i < buffer.size(); ++i) {
      if (std::abs(buffer[i] - expected[i]) > 1e-5 * world && wrong++ < 3) {
        ADD_FAILURE() << "element " << i << ": " << buffer[i] << " != " << expected[i];
      }
    }
    EXPECT_EQ(wrong, 0);
  }
}

// The message ring adds segment j's values starting at rank j, then rank j+1, j+2, ...: written out
// here on every rank's values, then compared bit for bit with both paths, summing and averaging.
TEST_F(SharedRingTest, BothPathsAddInTheRingsOrderBitForBit) {
  const int rank = world_rank(), world = world_size();
  for (const Case& c : awkward_cases()) {
    for (const bool average : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "count " << c.count << " chunk " << c.chunk_bytes << " average "
                                        << average << ", " << world << " ranks");
      std::vector<std::vector<float>> all;
      for (int r = 0; r < world; ++r) all.push_back(values_of(r, c.count, 11));
      std::vector<float> expected(static_cast<size_t>(c.count));
      for (int j = 0; j < world; ++j) {
        const int64_t begin = c.count * j / world, end = c.count * (j + 1) / world;
        for (int64_t i = begin; i < end; ++i) {
          float sum = all[static_cast<size_t>(j)][static_cast<size_t>(i)];
          for (int k = 1; k < world; ++k) sum += all[static_cast<size_t>((j + k) % world)][static_cast<size_t>(i)];
          expected[static_cast<size_t>(i)] = average ? sum * (1.0f / static_cast<float>(world)) : sum;
        }
      }
      std::vector<float> shared = all[static_cast<size_t>(rank)], messages = shared;
      allreduce(options(shared, c.chunk_bytes, average, true));
      allreduce(options(messages, c.chunk_bytes, average, false));
      const size_t bytes = expected.size() * sizeof(float);
      EXPECT_EQ(std::memcmp(shared.data(), expected.data(), bytes), 0) << "shared memory";
      EXPECT_EQ(std::memcmp(messages.data(), expected.data(), bytes), 0) << "messages";
    }
  }
}

// Many calls in a row, with counts going up and down (the counters carry over from call to call,
// the window grows once): each result is the exact sum of small integers.
TEST_F(SharedRingTest, CallAfterCallWithChangingCountsStaysInStep) {
  const int rank = world_rank(), world = world_size();
  const float ranks_sum = static_cast<float>(world * (world + 1) / 2);
  for (int call = 0; call < 40; ++call) {
    const int64_t count = (call * 7919) % 5000 + (call % 3 == 0 ? 0 : 1);
    std::vector<float> buffer(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) buffer[static_cast<size_t>(i)] = static_cast<float>((rank + 1) * (i % 5 + call));
    allreduce(options(buffer, 256, false, true));
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(buffer[static_cast<size_t>(i)], ranks_sum * static_cast<float>(i % 5 + call))
          << "call " << call << " count " << count << " element " << i;
    }
  }
}

// What the peers read from each rank's slot is what the message ring would send: 2·(N−1)·K floats
// over all ranks.
TEST_F(SharedRingTest, CountsWhatTheMessageRingWouldSend) {
  const int world = world_size();
  std::vector<float> buffer(1001, 1.0f);
  AllreduceTraffic traffic;
  AllreduceOptions o = options(buffer, 256, false, true);
  o.traffic = &traffic;
  allreduce(o);
  int64_t totals[2] = {traffic.bytes_sent, traffic.bytes_received};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(totals[0], 2 * (world - 1) * 1001 * static_cast<int64_t>(sizeof(float)));
  EXPECT_EQ(totals[1], totals[0]);
}

// Rank 0 starts an allreduce no other rank joins: it times out naming the peer and what it waited
// for, or ends at once on a stop request; the ring then refuses further use rather than run out
// of step. The others never touch it, and the release still frees it everywhere.
TEST_F(SharedRingTest, ASilentPeerIsATimeoutNamingItAndAStopEndsTheWaitAtOnce) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  if (world_rank() == 0) {
    std::vector<float> buffer(10, 1.0f);
    AllreduceOptions o = options(buffer, 16, false, true);  // the window's chunk: no growth, which waits for all
    o.wait = wait_for(0.5);
    try {
      allreduce(o);
      ADD_FAILURE() << "no error";
    } catch (const IoError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("timed out after 0.5 s"), std::string::npos) << message;
      EXPECT_NE(message.find("ring allreduce of 10 floats over shared memory, round 1 of "), std::string::npos)
          << message;
      EXPECT_NE(message.find("rank 0 waiting for rank 1 to stage its segments"), std::string::npos) << message;
    }
    o.wait = wait_for(60);
    EXPECT_THROW(allreduce(o), IoError) << "a ring out of step is refused";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(SharedRingStop, AStopRequestEndsAWaitBeforeItsDeadline) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  auto ring = SharedRing::open(RingPath::Auto, comm, 1000, wait_for(30));
  ASSERT_NE(ring, nullptr);
  if (world_rank() == 0) {
    std::vector<float> buffer(1000, 1.0f);
    int polls = 0;
    AllreduceOptions o;
    o.buffer = buffer.data();
    o.count = 1000;
    o.comm = comm;
    o.shared = ring.get();
    o.chunk_bytes = 1000;  // the window's: no growth, which waits for every rank
    o.wait = {.timeout_seconds = 60, .stop_requested = [&] { return ++polls > 3; }, .describe = {}};
    const auto start = std::chrono::steady_clock::now();
    try {
      allreduce(o);
      ADD_FAILURE() << "no error";
    } catch (const IoError& error) {
      EXPECT_NE(std::string(error.what()).find("stopped while waiting"), std::string::npos) << error.what();
    }
    EXPECT_GE(polls, 4);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  }
  ring->release(wait_for(30));
  MPI_Comm_free(&comm);
}

}  // namespace
}  // namespace dtbench
