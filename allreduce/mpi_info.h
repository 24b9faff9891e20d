#pragma once
// What a report needs to say about the MPI underneath: which library, which thread level it
// granted, which host a rank runs on. Two runs that differ in any of these are not comparable.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtbench {

// The first line of MPI_Get_library_version ("Open MPI v4.1.4, package: ..."); any time.
std::string mpi_library_version();
// "MPI_THREAD_MULTIPLE" etc., as MPI_Query_thread reports it; after MPI_Init.
std::string mpi_thread_level();
// Whether this rank yields its core while it waits for a message (Open MPI's MCA variable
// mpi_yield_when_idle, read through the MPI tool interface, so it holds however the variable was
// set: environment, mpirun's --mca, a parameter file); nullopt when the library has no such
// variable. After MPI_Init.
std::optional<bool> mpi_yield_when_idle();
// Which algorithm MPI_Allreduce runs for buckets of these sizes on `world` ranks, in words: Open MPI
// (4.1 or later) picks by its fixed rules (comm/open_mpi_allreduce.h) unless its coll/tuned
// variables force one; another library's choice is not known. After MPI_Init.
std::string mpi_allreduce_algorithms(int world, const std::vector<int64_t>& bucket_bytes);
// This process's host name (gethostname).
std::string host_name();

}  // namespace dtbench
