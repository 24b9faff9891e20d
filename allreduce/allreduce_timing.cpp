#include "allreduce/allreduce_timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "allreduce/mpi_check.h"
#include "core/profile/profiler.h"
#include "core/util/clock.h"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

// Collectives of the benchmark itself are non-blocking too, so a rank that has gone silent ends
// the run at the deadline with a message instead of a hang.
void wait_one(MPI_Request& request, const WaitPolicy& policy, const char* what) {
  WaitPolicy wait = policy;
  wait.describe = [what, &policy] {
    return fmt::format("{}{}", what, policy.describe ? "; " + policy.describe() : std::string());
  };
  wait_all({&request, 1}, wait);
}

// Rank 0 decides and broadcasts: ranks that each derived a count from their own clock could
// disagree by one, and an allreduce that one rank does not join never completes.
int agree_on_iterations(const AllreduceTimingOptions& o, double warmup_seconds_per_iteration, int rank) {
  const AllreduceOptions& a = o.allreduce;
  int iterations = o.iterations;
  if (iterations <= 0) {
    double slowest = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ireduce(&warmup_seconds_per_iteration, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, a.comm, &request),
              "MPI_Ireduce");
    wait_one(request, a.wait, "reducing warm-up times");
    if (rank == 0) {
      const double wanted = o.target_seconds / std::max(slowest, 1e-9);
      iterations = static_cast<int>(std::clamp<double>(std::ceil(wanted), o.min_iterations, o.max_iterations));
    }
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibcast(&iterations, 1, MPI_INT, 0, a.comm, &request), "MPI_Ibcast");
  wait_one(request, a.wait, "broadcasting the iteration count");
  return iterations;
}

void run_iteration(const AllreduceTimingOptions& o) {
  if (o.iteration) {
    o.iteration();
  } else {
    allreduce(o.allreduce);
  }
}

double warm_up(const AllreduceTimingOptions& o) {
  const int warmup = o.iterations > 0 ? o.warmup_iterations : std::max(o.warmup_iterations, 1);
  double timed = 0;
  int counted = 0;
  for (int i = 0; i < warmup; ++i) {
    const auto start = Clock::now();
    run_iteration(o);
    // The first iteration pays for connection set-up and page faults: left out of the estimate
    // unless it is the only one.
    if (i > 0 || warmup == 1) {
      timed += seconds_since(start);
      ++counted;
    }
  }
  return counted > 0 ? timed / counted : 0.0;
}

}  // namespace

AllreduceTiming time_allreduce(const AllreduceTimingOptions& o) {
  const AllreduceOptions& a = o.allreduce;
  int rank = 0;
  check_mpi(MPI_Comm_rank(a.comm, &rank), "MPI_Comm_rank");

  const double estimate = warm_up(o);
  AllreduceTiming result;
  result.iterations = agree_on_iterations(o, estimate, rank);

  MPI_Request barrier = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(a.comm, &barrier), "MPI_Ibarrier");
  wait_one(barrier, a.wait, "barrier before the timed loop");

  // Each iteration timed on its own (a clock read costs tens of nanoseconds, far below one
  // allreduce), so the tail shows as p99 instead of vanishing into a mean.
  std::vector<double> seconds(static_cast<size_t>(result.iterations));
  for (double& s : seconds) {
    const auto start = Clock::now();
    run_iteration(o);
    s = seconds_since(start);
  }

  // An allreduce is as slow as its slowest rank: the maximum over ranks, of the mean and of
  // every iteration.
  double mean = 0;
  for (double s : seconds) mean += s;
  mean /= static_cast<double>(seconds.size());
  std::vector<double> slowest(seconds.size());
  MPI_Request reduces[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  check_mpi(MPI_Ireduce(&mean, &result.mean_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, a.comm, &reduces[0]), "MPI_Ireduce");
  check_mpi(MPI_Ireduce(seconds.data(), slowest.data(), static_cast<int>(seconds.size()), MPI_DOUBLE, MPI_MAX, 0,
                        a.comm, &reduces[1]),
            "MPI_Ireduce");
  WaitPolicy wait = a.wait;
  wait.describe = [&a] {
    return fmt::format("reducing iteration times{}", a.wait.describe ? "; " + a.wait.describe() : std::string());
  };
  wait_all(reduces, wait);
  if (rank != 0) return {.iterations = result.iterations};

  std::sort(slowest.begin(), slowest.end());
  result.p50_seconds = percentile(slowest, 0.50);
  result.p99_seconds = percentile(slowest, 0.99);
  result.min_seconds = slowest.front();
  return result;
}

}  // namespace dtbench
