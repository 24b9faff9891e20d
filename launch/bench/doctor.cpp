// dtbench doctor, under mpirun: before a long run, check that every rank reaches its ring
// neighbours (neighbour_probe.h), that ranks of different hosts do not share a core
// (shared_cores.h), and report the MPI set-up that the numbers will depend on.
// Rank 0 collects one report per rank with point-to-point receives that have a deadline (not a
// gather: one silent rank must not keep the others' results from being printed), prints a line
// per rank and exits 0 when all pass. On a failure it ends the job with MPI_Abort, since a
// stalled rank would keep MPI_Finalize from returning.
#include "launch/bench/doctor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "allreduce/mpi_check.h"
#include "allreduce/mpi_info.h"
#include "allreduce/mpi_session.h"
#include "allreduce/neighbour_probe.h"
#include "launch/bench/interfaces.h"
#include "core/util/error.h"
#include "launch/bench/shared_cores.h"
#include "launch/cluster/host_cgroups.h"

namespace dtbench {

namespace {


// One rank's result as rank 0 receives it: sent as raw bytes, which holds because the ranks of
// one job run the same binary on one architecture.
struct RankReport {
  int32_t rank = 0;
  int32_t local_rank = 0;
  int32_t passed = 0;
  int32_t left = -1;
  int32_t right = -1;
  double left_rtt_us = 0;
  double right_rtt_us = 0;
  double large_gbps = 0;  // the slower of the two neighbours' 1 MiB round trips
  double quota_cores = 0;  // its cgroup's CPU quota in cores, 0: none
  char cpus[64] = {};      // the cores it may run on, a cpu list
  char host[64] = {};
  char error[448] = {};
};

constexpr int kReportTag = 201;

void copy_text(char* to, size_t capacity, const std::string& text) {
  std::strncpy(to, text.c_str(), capacity - 1);
  to[capacity - 1] = '\0';
}

RankReport probe_and_report(const MpiSession& session, MPI_Comm comm, const DoctorOptions& o,
                             const std::string& iface_problem) {
  RankReport report;
  report.rank = session.rank();
  report.local_rank = session.local_rank();
  copy_text(report.host, sizeof(report.host), host_name());
  const cluster::CpuAllowance allowance = cluster::this_process_allowance();
  copy_text(report.cpus, sizeof(report.cpus), cluster::format_cpu_list(allowance.cpus));
  report.quota_cores = allowance.quota_cores;
  NeighbourProbe probe;
  if (session.rank() == o.silent_rank) {
    probe.left.rank = (session.rank() + session.world() - 1) % session.world();
    probe.right.rank = (session.rank() + 1) % session.world();
    probe.error = "probed nothing (--test-silent-rank)";
  } else {
    NeighbourProbeOptions options;
    options.comm = comm;
    options.wait.timeout_seconds = o.timeout_s;
    probe = probe_ring_neighbours(options);
  }
  // A missing interface fails the rank even when the probe got through on another one.
  if (!iface_problem.empty()) probe.error = probe.error.empty() ? iface_problem : iface_problem + "; " + probe.error;
  report.passed = probe.passed() && iface_problem.empty() ? 1 : 0;
  report.left = probe.left.rank;
  report.right = probe.right.rank;
  report.left_rtt_us = 1e6 * probe.left.rtt_seconds;
  report.right_rtt_us = 1e6 * probe.right.rtt_seconds;
  report.large_gbps = std::min(probe.left.large_gbps, probe.right.large_gbps);
  copy_text(report.error, sizeof(report.error), probe.error);
  return report;
}

// Rank 0: everyone's report, or a FAIL naming the rank that sent none before the deadline.
std::vector<RankReport> collect_reports(MPI_Comm comm, int world, const RankReport& own, double timeout_s) {
  std::vector<RankReport> reports(static_cast<size_t>(world));
  std::vector<MPI_Request> requests(static_cast<size_t>(world), MPI_REQUEST_NULL);
  reports[0] = own;
  for (int r = 1; r < world; ++r) {
    check_mpi(MPI_Irecv(&reports[static_cast<size_t>(r)], sizeof(RankReport), MPI_BYTE, r, kReportTag, comm,
                        &requests[static_cast<size_t>(r)]),
              "MPI_Irecv");
  }
  // Another rank may still be waiting out its own probe deadline when rank 0 gets here.
  const double deadline_s = 2 * timeout_s + 5;
  WaitPolicy wait;
  wait.timeout_seconds = deadline_s;
  try {
    while (wait_any(requests, wait) >= 0) {
    }
  } catch (const IoError&) {
    for (int r = 1; r < world; ++r) {
      if (requests[static_cast<size_t>(r)] == MPI_REQUEST_NULL) continue;
      RankReport& missing = reports[static_cast<size_t>(r)];
      missing = RankReport{.rank = r, .local_rank = -1};
      copy_text(missing.host, sizeof(missing.host), "?");
      copy_text(missing.error, sizeof(missing.error), fmt::format("sent no report within {:.0f} s", deadline_s));
    }
  }
  return reports;
}

// A link that completed no round has no figure: "n/a" rather than a misleading 0.
std::string figure(double value, const char* format) {
  return value > 0 ? fmt::format(fmt::runtime(format), value) : std::string("n/a");
}

std::string report_line(const RankReport& r) {
  std::string line = fmt::format(
      "rank {} (host {}, local rank {}): {}  left {} rtt {}, right {} rtt {}, 1MiB {}, cores {} {}", r.rank, r.host,
      r.local_rank, r.passed ? "PASS" : "FAIL", r.left, figure(r.left_rtt_us, "{:.1f} us"), r.right,
      figure(r.right_rtt_us, "{:.1f} us"), figure(r.large_gbps, "{:.2f} GB/s"), r.cpus[0] != '\0' ? r.cpus : "?",
      r.quota_cores > 0 ? fmt::format("quota {:.3g}", r.quota_cores) : std::string("no quota"));
  if (r.error[0] != '\0') line += fmt::format("  [{}]", r.error);
  return line;
}

void print_setup(const MpiSession& session, const DoctorOptions& o) {
  fmt::print("dtbench doctor: {} rank(s)\n", session.world());
  fmt::print("MPI library:    {}\n", mpi_library_version());
  fmt::print("thread level:   {}\n", mpi_thread_level());
  const char* iface = std::getenv("OMPI_MCA_btl_tcp_if_include");
  fmt::print("TCP interface:  {}\n", iface != nullptr ? fmt::format("OMPI_MCA_btl_tcp_if_include={}{}", iface,
                                                                    o.iface == iface ? " (from --iface)" : "")
                                                      : std::string("OMPI_MCA_btl_tcp_if_include not set (Open MPI "
                                                                    "uses every interface it finds)"));
  if (const char* btl = std::getenv("OMPI_MCA_btl")) fmt::print("BTLs:           OMPI_MCA_btl={}\n", btl);
}

// Fails the ranks that share a core with another host's ranks (shared_cores.h).
void check_shared_cores(std::vector<RankReport>& reports) {
  std::vector<RankCores> ranks;
  for (const RankReport& r : reports) {
    std::vector<int> cpus;
    try {
      if (r.cpus[0] != '\0') cpus = cluster::parse_cpu_list(r.cpus, "cores");
    } catch (const InputError&) {
    }
    ranks.push_back({.rank = r.rank, .host = r.host, .cpus = cpus, .quota_cores = r.quota_cores});
  }
  const std::vector<std::string> problems = shared_core_problems(ranks);
  for (size_t i = 0; i < reports.size(); ++i) {
    if (problems[i].empty()) continue;
    RankReport& r = reports[i];
    r.passed = 0;
    copy_text(r.error, sizeof(r.error), r.error[0] == '\0' ? problems[i] : std::string(r.error) + "; " + problems[i]);
  }
}

// Probes, then rank 0 collects and prints. Returns normally only when every rank passed.
void check_ring(const MpiSession& session, const DoctorOptions& o, const std::string& iface_problem) {
  const int rank = session.rank(), world = session.world();
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
  const RankReport own = probe_and_report(session, comm, o, iface_problem);
  WaitPolicy wait;
  wait.timeout_seconds = 2 * o.timeout_s + 5;
  if (rank == 0) {
    std::vector<RankReport> reports = collect_reports(comm, world, own, o.timeout_s);
    check_shared_cores(reports);
    const bool all_passed =
        std::all_of(reports.begin(), reports.end(), [](const RankReport& r) { return r.passed != 0; });
    for (const RankReport& r : reports) fmt::print("{}\n", report_line(r));
    fmt::print("{}\n", all_passed ? "all ranks PASS" : "some ranks FAIL: ending the job");
    std::fflush(stdout);
    if (!all_passed) MpiSession::abort(1);
  } else {
    MPI_Request send = MPI_REQUEST_NULL;
    check_mpi(MPI_Isend(&own, sizeof(RankReport), MPI_BYTE, 0, kReportTag, comm, &send), "MPI_Isend");
    wait_all({&send, 1}, wait);
  }
  // Reached only when rank 0 found every rank passing (otherwise it has ended the job): wait for
  // it, so no rank goes into MPI_Finalize while rank 0 may still abort.
  MPI_Request barrier = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm, &barrier), "MPI_Ibarrier");
  wait_all({&barrier, 1}, wait);
  MPI_Comm_free(&comm);
}

}  // namespace

void run_doctor(const DoctorOptions& o) {
  // Open MPI reads its MCA parameters from the environment in MPI_Init: set it before. On a host
  // that lacks the interface, Open MPI would ignore it with a warning (or find no route at all):
  // leave MPI its own settings there, so the FAIL naming this host reaches rank 0.
  const std::string iface_problem = o.iface.empty() ? "" : interface_problem(o.iface, host_interfaces());
  if (!o.iface.empty() && iface_problem.empty()) setenv("OMPI_MCA_btl_tcp_if_include", o.iface.c_str(), 1);
  MpiSession session;
  if (session.rank() == 0) print_setup(session, o);
  if (session.world() == 1) {
    if (!iface_problem.empty()) throw IoError(fmt::format("host {}: FAIL: {}", host_name(), iface_problem));
    fmt::print("world size 1: no ring neighbours to check; PASS\n");
    return;
  }
  try {
    check_ring(session, o, iface_problem);
  } catch (const std::exception& error) {
    // A rank that cannot finish the check must not leave the others waiting on it, and
    // MPI_Finalize (leaving this scope) would wait for them.
    spdlog::error("rank {}: doctor: {}", session.rank(), error.what());
    MpiSession::abort(1);
  }
}

}  // namespace dtbench
