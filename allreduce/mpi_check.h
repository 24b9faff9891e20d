#pragma once
// Every MPI return code is checked; a failure is an IoError naming the call and MPI's message.
#include <mpi.h>

#include <string>

#include "core/util/error.h"

namespace dtbench {

inline void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, message, &length);
  throw IoError(fmt::format("{} failed: {}", call, std::string(message, static_cast<size_t>(length))));
}

}  // namespace dtbench
