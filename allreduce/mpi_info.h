#pragma once
// What a report needs to say about the MPI underneath: which library, which thread level it
// granted, which host a rank runs on. Two runs that differ in any of these are not comparable.
#include <optional>
#include <string>

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
// This process's host name (gethostname).
std::string host_name();

}  // namespace dtbench
