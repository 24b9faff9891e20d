// NCCL's bootstrap without NCCL: rank 0's unique id (opaque bytes) reaches every rank over MPI,
// at every world size CTest runs (1 to 5), and only rank 0 creates one.
#include <gtest/gtest.h>
#include <mpi.h>

#include <fmt/format.h>

#include <string>

#include "allreduce/nccl_bootstrap.h"
#include "core/util/error.h"

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

TEST(NcclBootstrap, FirstSharedGpuNamesTheFirstTwoRanksThatShareOne) {
  EXPECT_EQ(first_shared_gpu({}), (std::array<int, 2>{-1, -1}));
  EXPECT_EQ(first_shared_gpu({"a/0:1b", "a/0:1c", "b/0:1b"}), (std::array<int, 2>{-1, -1}));
  EXPECT_EQ(first_shared_gpu({"a/0:1b", "a/0:1c", "a/0:1c", "a/0:1b"}), (std::array<int, 2>{1, 2}));
  EXPECT_EQ(first_shared_gpu({"a/0:1b", "b/0:1b", "a/0:1b"}), (std::array<int, 2>{0, 2}));
}

// Every rank on its own GPU passes; from two ranks on, a GPU named by two ranks fails every rank
// with the error that names them, before NCCL would refuse them less clearly.
TEST(NcclBootstrap, RanksSharingAGpuAreRefusedByEveryRankNamingThem) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const WaitPolicy wait{.timeout_seconds = 30};
  EXPECT_NO_THROW(require_a_gpu_per_rank(MPI_COMM_WORLD, "host/gpu-" + std::to_string(rank), wait));
  if (world < 2) return;
  // The last rank drives rank 0's GPU.
  const std::string gpu = "host/gpu-" + std::to_string(rank == world - 1 ? 0 : rank);
  try {
    require_a_gpu_per_rank(MPI_COMM_WORLD, gpu, wait);
    ADD_FAILURE() << "two ranks on one GPU were let through";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find(fmt::format("ranks 0 and {} both use GPU host/gpu-0", world - 1)),
              std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("transport ring"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace dtbench
