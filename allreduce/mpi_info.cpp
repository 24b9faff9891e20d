#include "allreduce/mpi_info.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "allreduce/mpi_check.h"
#include "comm/open_mpi_allreduce.h"

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

namespace {

// An integer (or MCA bool) control variable of the library, read through the MPI tool interface;
// nullopt when the library has no variable of that name.
std::optional<int> mpi_int_variable(const char* name) {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return std::nullopt;
  std::optional<int> result;
  int index = 0;
  if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS) {
    MPI_T_cvar_handle handle{};
    int count = 0;
    if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) == MPI_SUCCESS) {
      int value = 0;  // an MCA bool: Open MPI writes it as an int or a C bool (one byte), zero-initialised either way
      if (count == 1 && MPI_T_cvar_read(handle, &value) == MPI_SUCCESS) result = value;
      MPI_T_cvar_handle_free(&handle);
    }
  }
  MPI_T_finalize();
  return result;
}

// "Open MPI v4.1.4, ...": whether its coll/tuned has the fixed rules of v4.1 on.
bool open_mpi_41_or_later(const std::string& library) {
  int major = 0, minor = 0;
  if (std::sscanf(library.c_str(), "Open MPI v%d.%d", &major, &minor) != 2) return false;
  return major > 4 || (major == 4 && minor >= 1);
}

}  // namespace

std::optional<bool> mpi_yield_when_idle() {
  const std::optional<int> value = mpi_int_variable("mpi_yield_when_idle");
  if (!value) return std::nullopt;
  return *value != 0;
}

std::string mpi_allreduce_algorithms(int world, const std::vector<int64_t>& bucket_bytes) {
  const std::string library = mpi_library_version();
  const std::optional<int> dynamic = mpi_int_variable("coll_tuned_use_dynamic_rules");
  const std::optional<int> forced = mpi_int_variable("coll_tuned_allreduce_algorithm");
  if (dynamic.value_or(0) != 0 && forced.value_or(0) > 0) {
    return fmt::format("algorithm {} as forced (coll_tuned_allreduce_algorithm)",
                       open_mpi_allreduce_name(static_cast<OpenMpiAllreduce>(*forced)));
  }
  if (!open_mpi_41_or_later(library) || dynamic.value_or(0) != 0) {
    return fmt::format("chosen by {}, not known here (the rules known are Open MPI 4.1's and later's fixed ones)",
                       library.substr(0, library.find(',')));
  }
  std::vector<std::string> parts;  // "rabenseifner (236672 B, 11584 B)"
  for (const OpenMpiChoice& choice : open_mpi_choices(world, bucket_bytes)) {
    parts.push_back(fmt::format("{} ({} B)", open_mpi_allreduce_name(choice.algorithm), fmt::join(choice.bucket_bytes, " B, ")));
  }
  return fmt::format("{} at {} ranks, by Open MPI's fixed rules", fmt::join(parts, ", "), world);
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

}  // namespace dtbench
