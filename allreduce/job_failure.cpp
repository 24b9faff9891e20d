#include "allreduce/job_failure.h"

#include <mpi.h>

#include <cstdlib>
#include <exception>
#include <mutex>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "allreduce/peer_watch.h"

namespace dtbench {

namespace {

std::mutex last_words_mutex;
std::function<void(const std::string&)> last_words;
bool spoken = false;

void speak_last_words(const std::string& reason) {
  const std::lock_guard lock(last_words_mutex);
  if (spoken || !last_words) return;
  spoken = true;
  try {
    last_words(reason);
  } catch (const std::exception& error) {  // the job ends anyway; say why the report is missing
    spdlog::error("could not write the failed report: {}", error.what());
  }
}

}  // namespace

void set_last_words(std::function<void(const std::string& reason)> write_failed_report) {
  const std::lock_guard lock(last_words_mutex);
  last_words = std::move(write_failed_report);
  spoken = false;
}

void end_job(const std::string& reason, const JobEndOptions& options) {
  const int rank = options.peers != nullptr ? options.peers->rank() : -1;
  spdlog::error("rank {}: {}", rank, reason);
  speak_last_words(reason);
  if (options.peers != nullptr && !options.stopped) {
    try {
      if (options.failed_peer >= 0) {
        options.peers->say_done(options.failed_peer);
        // The rank that failed aborts once everyone is done; ending here first would cut the
        // others short. If it is gone, the grace ends the wait.
        options.peers->linger(options.grace_seconds + 1.0);
      } else {
        options.peers->announce(reason);
        const std::vector<int> missing = options.peers->await_done(options.grace_seconds);
        if (!missing.empty()) {
          spdlog::warn("rank {}: no word from rank(s) {} within {:.1f} s; ending the job without it", rank,
                       fmt::join(missing, ", "), options.grace_seconds);
        }
      }
    } catch (const std::exception& error) {
      spdlog::warn("rank {}: while telling the other ranks: {}", rank, error.what());
    }
  }
  MPI_Abort(MPI_COMM_WORLD, options.code);
  std::_Exit(options.code);
}

}  // namespace dtbench
