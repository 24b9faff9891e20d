// What ended `bench allreduce --transport nccl` on a GPU: a communicator whose owner outlives the
// MPI session (the bench's NCCL buffer held one) was freed after MPI_Finalize, and Open MPI ended
// the process with "The MPI_Comm_free() function was called after MPI_FINALIZE was invoked". Here
// the same order without a GPU: communicators made inside a session, one through
// duplicate_communicator and one plain MPI_Comm_dup, held by an owner made before the session, so
// they go after it. CTest runs this under mpirun at 1 and 2 ranks; it passes when every rank exits
// 0 and nothing says MPI_FINALIZE.
#include <mpi.h>

#include <cstdio>

#include "allreduce/mpi_comm.h"
#include "allreduce/mpi_session.h"

namespace {

struct OutlivesTheSession {
  dtbench::MpiComm duplicated;
  dtbench::MpiComm plain;
};

int sum_of_ranks(MPI_Comm comm, int rank) {
  int sum = -1;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
  return sum;
}

}  // namespace

int main() {
  OutlivesTheSession owner;
  int rank = 0, world = 1, sums_right = 0;
  {
    const dtbench::MpiSession session(dtbench::WaitPolicy{.timeout_seconds = 30});
    rank = session.rank();
    world = session.world();
    owner.duplicated = dtbench::duplicate_communicator(MPI_COMM_WORLD, {.timeout_seconds = 30}, "the test");
    MPI_Comm copy = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &copy);
    owner.plain = dtbench::MpiComm(copy);
    const int expected = world * (world - 1) / 2;
    sums_right = sum_of_ranks(owner.duplicated, rank) == expected && sum_of_ranks(owner.plain, rank) == expected;
  }
  const bool freed = owner.duplicated.get() == MPI_COMM_NULL && owner.plain.get() == MPI_COMM_NULL;
  std::printf("rank %d of %d: communicators %s, %s by the session's end\n", rank, world,
              sums_right != 0 ? "worked" : "gave wrong sums", freed ? "freed" : "NOT freed");
  return sums_right != 0 && freed ? 0 : 1;
}  // `owner` goes here, after MPI_Finalize
