#pragma once
// What the collective tests under mpirun share: this rank and the world's size.
#include <mpi.h>

namespace dtbench::testing {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace dtbench::testing
