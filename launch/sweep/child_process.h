#pragma once
// A program the sweep runner starts (mpirun with its workers, a parameter server, a report), with
// stdout and stderr appended to a log file and stdin from /dev/null, in a process group of its own.
// Stopping it stops every process it started too: Open MPI puts each rank in a group of its own,
// so a signal to mpirun's group alone would leave the ranks running (and skew the next run's
// timing) — the descendants are found through /proc and signalled one by one.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dtbench {

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts argv[0] (searched in PATH if it has no '/'). Throws IoError naming the program and the
  // log if either cannot be opened or started.
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log);
  // A child still running is killed with its group: nothing is left behind.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The exit status once the child has ended: its exit code, or 128 + the signal that killed it.
  std::optional<int> poll();
  // Waits until the child ends, `deadline` passes or `interrupted()` is true (checked every 50 ms).
  std::optional<int> wait_until(Clock::time_point deadline, const std::function<bool()>& interrupted = {});
  // SIGTERM to the child, its group and its descendants; after `grace_seconds` without an exit,
  // SIGKILL to all of them. Returns the child's exit status.
  int terminate(double grace_seconds);

  pid_t pid() const { return pid_; }

 private:
  void signal_all(int signal, const std::vector<pid_t>& descendants);

  pid_t pid_ = -1;
  std::string program_;
  std::optional<int> status_;
};

// Makes this process the reaper of its orphaned descendants (ranks whose mpirun was killed), so
// that they can still be found, stopped and reaped. Call once before starting children.
void adopt_orphaned_descendants();

// Every process descended from `root`, from /proc (children before grandchildren).
std::vector<pid_t> descendants_of(pid_t root);

// Where `program` would be started from (PATH searched); empty if nowhere.
std::filesystem::path find_program(const std::string& program);

}  // namespace dtbench
