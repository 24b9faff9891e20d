#pragma once
// Ending a job of several ranks after a failure, so that every rank still running writes its
// report first. A blocked or failed collective cannot be cancelled, so the job must end (MPI_Abort);
// but mpirun then gives each rank one second between SIGTERM and SIGKILL, too little for a rank
// in a long step, and a rank blocked in MPI_Allreduce never sees the signal at all. So the rank
// that failed first writes its own report (the last words), tells the others why (PeerWatch), and
// waits, bounded, until they have written theirs before it aborts. A rank told of another's
// failure writes its report, says so, and leaves the abort to the rank that failed.
#include <functional>
#include <string>

namespace dtbench {

class PeerWatch;

// Writes this rank's report as failed with `reason`; may be called from the watchdog's thread
// while the training thread is blocked in MPI. Empty: nothing to write. Any thread; once.
void set_last_words(std::function<void(const std::string& reason)> write_failed_report);

struct JobEndOptions {
  int code = 1;             // the exit code (2 for bad input)
  int failed_peer = -1;     // >= 0: that rank announced the failure; it aborts once all are done
  bool stopped = false;     // a signal: mpirun is ending the job already, so no waiting for others
  PeerWatch* peers = nullptr;
  double grace_seconds = 1.0;  // how long to wait for the others' reports
};

// Logs the reason, speaks the last words, tells or answers the others, and ends the job.
[[noreturn]] void end_job(const std::string& reason, const JobEndOptions& options);

}  // namespace dtbench
