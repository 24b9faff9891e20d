// NCCL's bootstrap without NCCL: rank 0's unique id (opaque bytes) reaches every rank over MPI,
// at every world size CTest runs (1 to 5), and only rank 0 creates one.
#include <gtest/gtest.h>
#include <mpi.h>

#include "allreduce/nccl_bootstrap.h"

namespace dtbench {
namespace {

TEST(NcclBootstrap, EveryRankReceivesRankZerosIdAndOnlyRankZeroMakesOne) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int created = 0;
  const auto create = [&created] {
    ++created;
    NcclUniqueIdBytes id{};
    for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<char>(i * 7 + 3);
    return id;
  };
  // Every other rank starts from different garbage, so a copy that did not happen shows.
  const NcclUniqueIdBytes id = bootstrap_unique_id(MPI_COMM_WORLD, create, {.timeout_seconds = 30});
  EXPECT_EQ(created, rank == 0 ? 1 : 0);
  for (size_t i = 0; i < id.size(); ++i) ASSERT_EQ(id[i], static_cast<char>(i * 7 + 3)) << "byte " << i;
  int total_created = 0;
  MPI_Allreduce(&created, &total_created, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total_created, 1) << "at world size " << world;
}

}  // namespace
}  // namespace dtbench
