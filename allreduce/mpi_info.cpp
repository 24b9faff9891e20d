#include "allreduce/mpi_info.h"

#include <mpi.h>
#include <unistd.h>

#include "allreduce/mpi_check.h"

namespace dtbench {

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  check_mpi(MPI_Get_library_version(text, &length), "MPI_Get_library_version");
  std::string version(text);  // the length MPI gives may count the terminating NUL
  version = version.substr(0, version.find('\n'));
  return version.substr(0, version.find_last_not_of(" \t\r") + 1);
}

std::string mpi_thread_level() {
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  switch (provided) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
  }
  return fmt::format("unknown thread level {}", provided);
}

std::optional<bool> mpi_yield_when_idle() {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return std::nullopt;
  std::optional<bool> yields;
  int index = 0;
  if (MPI_T_cvar_get_index("mpi_yield_when_idle", &index) == MPI_SUCCESS) {
    MPI_T_cvar_handle handle{};
    int count = 0;
    if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
      int value = 0;  // an MCA bool: Open MPI writes it as an int or a C bool (one byte), zero-initialised either way
      if (count == 1 && MPI_T_cvar_read(handle, &value) == MPI_SUCCESS) yields = value != 0;
      MPI_T_cvar_handle_free(&handle);
    }
  }
  MPI_T_finalize();
  return yields;
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

}  // namespace dtbench
