// The register of communicators (allreduce/mpi_comm.h), at every world size CTest runs: a handle
// frees its communicator when it goes, and free_owned_communicators frees what handles still hold
// (as MpiSession does before MPI_Finalize), after which those handles do nothing.
#include <gtest/gtest.h>
#include <mpi.h>

#include <utility>

#include "allreduce/mpi_comm.h"
#include "tests/allreduce/mpi_world.h"

namespace dtbench {
namespace {

MpiComm duplicate_world() {
  MPI_Comm copy = MPI_COMM_NULL;
  EXPECT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &copy), MPI_SUCCESS);
  return MpiComm(copy);
}

// The communicator works: every rank's rank summed over it.
int sum_of_ranks(MPI_Comm comm) {
  const int rank = testing::world_rank();
  int sum = -1;
  EXPECT_EQ(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
  return sum;
}

int expected_sum() {
  const int world = testing::world_size();
  return world * (world - 1) / 2;
}

TEST(MpiComm, AHandleFreesItsCommunicatorWhenItGoes) {
  const int before = owned_communicator_count();
  {
    const MpiComm comm = duplicate_world();
    EXPECT_EQ(owned_communicator_count(), before + 1);
    EXPECT_EQ(sum_of_ranks(comm), expected_sum());
  }
  EXPECT_EQ(owned_communicator_count(), before);
  MpiComm moved_from = duplicate_world();
  MpiComm moved_to = std::move(moved_from);
  EXPECT_EQ(moved_from.get(), MPI_COMM_NULL);  // NOLINT(bugprone-use-after-move): what a move leaves
  EXPECT_EQ(owned_communicator_count(), before + 1);
  EXPECT_EQ(sum_of_ranks(moved_to), expected_sum());
  moved_to.reset();
  EXPECT_EQ(moved_to.get(), MPI_COMM_NULL);
  EXPECT_EQ(owned_communicator_count(), before);
}

TEST(MpiComm, FreeingWhatHandlesHoldLeavesThemEmptyAndTheirEndHarmless) {
  // Earlier tests may keep communicators (a control channel whose gather timed out is kept for
  // late deliveries): they are freed here too, as the session's end frees whatever is held.
  const int kept = owned_communicator_count();
  MpiComm first = duplicate_world();
  MpiComm second = duplicate_world();
  MpiComm gone = duplicate_world();
  gone.reset();
  EXPECT_EQ(owned_communicator_count(), kept + 2);
  EXPECT_EQ(free_owned_communicators(), kept + 2);
  EXPECT_EQ(first.get(), MPI_COMM_NULL);
  EXPECT_EQ(second.get(), MPI_COMM_NULL);
  EXPECT_EQ(owned_communicator_count(), 0);
  EXPECT_EQ(free_owned_communicators(), 0);
  // A new handle after that is freed by the next round, not lost.
  MpiComm later = duplicate_world();
  EXPECT_EQ(sum_of_ranks(later), expected_sum());
  EXPECT_EQ(free_owned_communicators(), 1);
}  // the four handles go here, each freeing nothing

}  // namespace
}  // namespace dtbench
