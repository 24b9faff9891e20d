#include "allreduce/nccl_bootstrap.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "allreduce/mpi_check.h"
#include "core/util/error.h"

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

std::array<int, 2> first_shared_gpu(const std::vector<std::string>& gpu_of_rank) {
  std::map<std::string, int> first_rank_of;
  for (int rank = 0; rank < static_cast<int>(gpu_of_rank.size()); ++rank) {
    const auto [at, inserted] = first_rank_of.emplace(gpu_of_rank[static_cast<size_t>(rank)], rank);
    if (!inserted) return {at->second, rank};
  }
  return {-1, -1};
}

void require_a_gpu_per_rank(MPI_Comm comm, const std::string& gpu, const WaitPolicy& wait) {
  constexpr size_t kNameBytes = 256;  // a host name (at most 64) and a PCI bus id, with room to spare
  int world = 1;
  MPI_Comm_size(comm, &world);
  std::array<char, kNameBytes> own{};
  std::copy_n(gpu.begin(), std::min(gpu.size(), kNameBytes - 1), own.begin());
  std::vector<char> all(kNameBytes * static_cast<size_t>(world));
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(own.data(), static_cast<int>(kNameBytes), MPI_CHAR, all.data(), static_cast<int>(kNameBytes),
                           MPI_CHAR, comm, &request),
            "MPI_Iallgather (the ranks' GPUs)");
  wait_all({&request, 1}, wait);
  std::vector<std::string> gpu_of_rank;
  for (int rank = 0; rank < world; ++rank)
    gpu_of_rank.emplace_back(all.data() + kNameBytes * static_cast<size_t>(rank));
  const auto [first, second] = first_shared_gpu(gpu_of_rank);
  if (first < 0) return;
  fail_input("transport nccl: ranks {} and {} both use GPU {}, and NCCL needs a GPU of its own per rank: start at "
             "most as many ranks per host as it has GPUs (nvidia-smi -L), or use transport ring, which stages the "
             "device's gradients through the host",
             first, second, gpu_of_rank[static_cast<size_t>(first)]);
}

}  // namespace dtbench
