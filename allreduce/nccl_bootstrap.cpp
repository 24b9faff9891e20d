#include "allreduce/nccl_bootstrap.h"

#include "allreduce/mpi_check.h"

namespace dtbench {

NcclUniqueIdBytes bootstrap_unique_id(MPI_Comm comm, const std::function<NcclUniqueIdBytes()>& create,
                                      const WaitPolicy& wait) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  NcclUniqueIdBytes id{};
  if (rank == 0) id = create();
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibcast(id.data(), static_cast<int>(id.size()), MPI_BYTE, 0, comm, &request), "MPI_Ibcast (NCCL id)");
  wait_all({&request, 1}, wait);
  return id;
}

}  // namespace dtbench
