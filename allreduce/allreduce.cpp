#include "allreduce/allreduce.h"

#include <climits>

#include "allreduce/mpi_check.h"
#include "comm/transport_catalogue.h"

namespace dtbench {

namespace {

// The library's tuned allreduce. Blocking MPI_Allreduce is the one users call and the fastest
// (Open MPI 4.1's MPI_Iallreduce runs at about half its speed), so it is the baseline; a watchdog
// keeps the deadline. MPI counts are ints: larger buffers go in int-sized pieces.
void mpi_allreduce(const AllreduceOptions& o) {
  int world = 1;
  check_mpi(MPI_Comm_size(o.comm, &world), "MPI_Comm_size");
  constexpr int64_t kMaxPiece = INT_MAX / 2;
  auto describe = [&] {
    return fmt::format("MPI_Allreduce of {} floats{}", o.count, o.wait.describe ? "; " + o.wait.describe() : std::string());
  };
  for (int64_t offset = 0; offset < o.count; offset += kMaxPiece) {
    const int length = static_cast<int>(std::min(kMaxPiece, o.count - offset));
    if (o.watchdog != nullptr) {
      const WatchdogGuard guard(*o.watchdog, o.wait.timeout_seconds, describe);
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, o.buffer + offset, length, MPI_FLOAT, MPI_SUM, o.comm), "MPI_Allreduce");
      continue;
    }
    // A collective cannot be cancelled: after a timeout here the run must end (the caller aborts).
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, o.buffer + offset, length, MPI_FLOAT, MPI_SUM, o.comm, &request),
              "MPI_Iallreduce");
    WaitPolicy wait = o.wait;
    wait.describe = describe;
    wait_all({&request, 1}, wait);
  }
  if (o.average && world > 1) {
    const float scale = 1.0f / static_cast<float>(world);
    for (int64_t i = 0; i < o.count; ++i) o.buffer[i] *= scale;
  }
}

}  // namespace

AllreduceAlgorithm parse_allreduce_algorithm(std::string_view name) {
  if (name == kRingTransport) return AllreduceAlgorithm::Ring;
  if (name == kMpiTransport) return AllreduceAlgorithm::Mpi;
  fail_input("allreduce algorithm '{}' is not known; choose ring or mpi", name);
}

std::string_view algorithm_name(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::Ring:
      return kRingTransport;
    case AllreduceAlgorithm::Mpi:
      return kMpiTransport;
  }
  return "?";
}

void allreduce(const AllreduceOptions& options) {
  DTB_CHECK(options.count == 0 || options.buffer != nullptr, "allreduce of {} floats without a buffer", options.count);
  DTB_CHECK(options.comm != MPI_COMM_NULL, "allreduce without a communicator");
  switch (options.algorithm) {
    case AllreduceAlgorithm::Ring:
      ring_allreduce(options);
      return;
    case AllreduceAlgorithm::Mpi:
      mpi_allreduce(options);
      return;
  }
}

}  // namespace dtbench
