// GoogleTest under mpirun: every rank runs every test; a failure on any rank fails the job.
#include <gtest/gtest.h>
#include <mpi.h>

#include "allreduce/mpi_comm.h"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {  // one rank prints the progress; every rank's failures still print
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  dtbench::free_owned_communicators();  // as MpiSession does: none may be freed after MPI_Finalize
  MPI_Finalize();
  return any_failed;
}
