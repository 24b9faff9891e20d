// The ring and MPI_Allreduce against a straightforward sum, at the world size mpirun gave (CTest
// runs this with 1 to 5 ranks), for awkward lengths: 0, 1, 7, fewer elements than ranks, lengths
// that do not divide by the world size, segments smaller than a chunk and larger ones.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cmath>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "allreduce/allreduce.h"
#include "allreduce/mpi_session.h"
#include "allreduce/peer_watch.h"
#include "core/util/error.h"
#include "core/util/rng.h"
#include "tests/allreduce/mpi_world.h"

namespace dtbench {
namespace {

using testing::world_rank;
using testing::world_size;

// `call` must throw an IoError whose message holds every one of `expected`.
template <typename Call>
void expect_io_error(Call call, std::initializer_list<std::string_view> expected) {
  try {
    call();
    ADD_FAILURE() << "no error";
  } catch (const IoError& error) {
    const std::string message = error.what();
    for (const std::string_view part : expected) EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

// Small integers: their sums are exact in float, so the check can be exact.
float exact_value(int rank, int64_t i) { return static_cast<float>((rank + 1) * ((i % 13) + 1)); }

struct Case {
  int64_t count;
  int64_t chunk_bytes;
};

class Allreduce : public ::testing::TestWithParam<AllreduceAlgorithm> {};

TEST_P(Allreduce, SumMatchesAStraightforwardSumForAwkwardLengths) {
  const int rank = world_rank(), world = world_size();
  const std::vector<Case> cases = {{0, 1 << 20},  {1, 1 << 20},     {7, 1 << 20},      {world - 1 > 0 ? world - 1 : 1, 4},
                                   {100, 8},      {1001, 64},       {4099, 1 << 20},   {1 << 20, 4096},
                                   {3000017, 1 << 18}};
  std::vector<float> scratch;
  for (const Case& c : cases) {
    std::vector<float> buffer(static_cast<size_t>(c.count));
    for (int64_t i = 0; i < c.count; ++i) buffer[static_cast<size_t>(i)] = exact_value(rank, i);
    AllreduceOptions options;
    options.buffer = buffer.data();
    options.count = c.count;
    options.comm = MPI_COMM_WORLD;
    options.algorithm = GetParam();
    options.average = false;
    options.chunk_bytes = c.chunk_bytes;
    options.scratch = &scratch;
    options.wait.timeout_seconds = 30;
    allreduce(options);
    const float ranks_sum = static_cast<float>(world * (world + 1) / 2);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < c.count; ++i) {
      const float expected = ranks_sum * static_cast<float>((i % 13) + 1);
      if (buffer[static_cast<size_t>(i)] != expected && mismatches++ < 3) {
        ADD_FAILURE() << "count " << c.count << " chunk " << c.chunk_bytes << " element " << i << ": "
                      << buffer[static_cast<size_t>(i)] << " != " << expected;
      }
    }
    EXPECT_EQ(mismatches, 0) << "count " << c.count << " on " << world << " ranks";
  }
}

TEST_P(Allreduce, AverageOfRandomValuesMatchesADoubleReference) {
  const int rank = world_rank(), world = world_size();
  const int64_t count = 12345;
  auto values_of = [&](int r) {
    Rng rng = Rng::derive(99, static_cast<uint64_t>(r));
    std::vector<float> v(static_cast<size_t>(count));
    for (float& x : v) x = rng.normal();
    return v;
  };
  std::vector<double> expected(static_cast<size_t>(count), 0.0);
  for (int r = 0; r < world; ++r) {
    const auto v = values_of(r);
    for (int64_t i = 0; i < count; ++i) expected[static_cast<size_t>(i)] += v[static_cast<size_t>(i)] / world;
  }
  std::vector<float> buffer = values_of(rank);
  AllreduceOptions options;
  options.buffer = buffer.data();
  options.count = count;
  options.comm = MPI_COMM_WORLD;
  options.algorithm = GetParam();
  options.chunk_bytes = 1024;
  allreduce(options);
  for (int64_t i = 0; i < count; ++i) {
    ASSERT_NEAR(buffer[static_cast<size_t>(i)], expected[static_cast<size_t>(i)], 1e-5) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, Allreduce, ::testing::Values(AllreduceAlgorithm::Ring, AllreduceAlgorithm::Mpi),
                         [](const auto& info) { return std::string(algorithm_name(info.param)); });

// Rank 0 starts a ring that no other rank joins, with this wait policy.
void ring_alone_at_rank_0(const WaitPolicy& wait, std::initializer_list<std::string_view> expected) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (world_rank() == 0) {
    std::vector<float> buffer(1000, 1.0f);
    AllreduceOptions options;
    options.buffer = buffer.data();
    options.count = 1000;
    options.comm = comm;
    options.wait = wait;
    expect_io_error([&] { ring_allreduce(options); }, expected);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_free(&comm);
}

// The bytes the ring counts against what its schedule must move: every segment but one leaves
// each rank once per phase, so over all ranks the sends total 2·(N−1)·K floats, and each rank's
// own count is the ring formula 2·K·(N−1)/N give or take the uneven segments.
TEST(RingAllreduce, CountsTheBytesItSends) {
  const int rank = world_rank(), world = world_size();
  const int64_t count = 1001;  // not a multiple of 2..5: the segments differ by one
  std::vector<float> buffer(static_cast<size_t>(count), 1.0f);
  AllreduceTraffic traffic;
  AllreduceOptions options;
  options.buffer = buffer.data();
  options.count = count;
  options.comm = MPI_COMM_WORLD;
  options.chunk_bytes = 256;
  options.traffic = &traffic;
  allreduce(options);
  int64_t totals[2] = {traffic.bytes_sent, traffic.bytes_received};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  const int64_t float_bytes = sizeof(float);
  EXPECT_EQ(totals[0], 2 * (world - 1) * count * float_bytes);
  EXPECT_EQ(totals[1], totals[0]);
  const double formula = 2.0 * static_cast<double>(count * float_bytes) * (world - 1) / world;
  EXPECT_NEAR(static_cast<double>(traffic.bytes_sent), formula, 2.0 * float_bytes) << "rank " << rank;
}

TEST(RingAllreduce, ASilentPeerIsATimeoutNamingTheRanks) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  ring_alone_at_rank_0({.timeout_seconds = 0.5, .stop_requested = {}, .describe = {}},
                       {"timed out", "rank 0 waiting for rank"});
}

// A stop request (SIGTERM from mpirun, say) ends a wait at once, long before its deadline, so the
// rank can still write its report.
TEST(RingAllreduce, AStopRequestEndsAWaitBeforeItsDeadline) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  const auto start = std::chrono::steady_clock::now();
  int polls = 0;
  ring_alone_at_rank_0({.timeout_seconds = 60, .stop_requested = [&] { return ++polls > 3; }, .describe = {}},
                       {"stopped while waiting", "rank 0 waiting for rank"});
  if (world_rank() == 0) {
    EXPECT_GE(polls, 4);  // asked again while waiting, not once at the start
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  }
}

// Rank 0's gather timed out and cannot be cancelled: the others' late contributions still arrive
// into its communicator, which must outlive the test (freeing it under a pending collective
// corrupted the heap of a later test). Never destroyed: at exit MPI is finalised already.
void channel_kept_for_late_deliveries(std::unique_ptr<ControlChannel>& channel) {
  static auto* kept = new std::vector<std::unique_ptr<ControlChannel>>;
  kept->push_back(std::move(channel));
}

// The control channel's collectives are bounded too: rank 0 gathering the reports of a rank that
// never sends its own gets a timeout naming the gather, instead of blocking until someone aborts.
TEST(ControlChannel, AGatherWithASilentRankTimesOut) {
  const int rank = world_rank(), world = world_size();
  if (world < 2) GTEST_SKIP() << "needs two ranks";
  auto channel = make_mpi_channel({.timeout_seconds = 0.5, .stop_requested = {}, .describe = {}});
  if (rank == 0) {
    expect_io_error([&] { channel->gather("rank 0's report"); },
                    {"timed out after 0.5 s", "gathering every rank's report at rank 0"});
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) channel->gather("late");  // complete rank 0's collective, so nothing is left pending
  if (rank == 0) channel_kept_for_late_deliveries(channel);
  MPI_Barrier(MPI_COMM_WORLD);
}

// A timeout names the rank that did not arrive, not only the wait: rank 0's gather times out while
// rank 1 is silent (waiting without servicing the peer watch, as a frozen rank would) and the others
// wait in a collective of their own, answering the roll call. Only rank 1 is named.
TEST(ControlChannel, AGatherTimeoutNamesTheSilentRank) {
  const int rank = world_rank(), world = world_size();
  if (world < 2) GTEST_SKIP() << "needs two ranks";
  PeerWatch peers;
  WaitPolicy policy{.timeout_seconds = 0.5, .stop_requested = {}, .describe = {}, .peers = &peers};
  auto channel = make_mpi_channel(policy);
  MPI_Request barrier = MPI_REQUEST_NULL;
  if (rank == 0) {
    expect_io_error([&] { channel->gather("rank 0's report"); },
                    {"gathering every rank's report at rank 0", "silent: rank 1 did not answer a roll call"});
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    wait_all({&barrier, 1}, {.timeout_seconds = 30, .stop_requested = {}, .describe = {}, .peers = &peers});
  } else if (rank == 1) {
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);  // silent: no servicing
  } else {
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    wait_all({&barrier, 1}, {.timeout_seconds = 30, .stop_requested = {}, .describe = {}, .peers = &peers});
  }
  if (rank != 0) channel->gather("late");  // complete rank 0's collective, so nothing is left pending
  if (rank == 0) channel_kept_for_late_deliveries(channel);
  // Rank 1 still holds rank 0's ping: answered here, so no later test reads it.
  MPI_Barrier(MPI_COMM_WORLD);
  peers.service();
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
}  // namespace dtbench
