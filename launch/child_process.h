#pragma once
// A program the sweep runner starts (mpirun with its workers, a parameter server, a report): in a
// process group of its own, so that stopping it stops everything it started (mpirun's ranks), with
// stdout and stderr appended to a log file and stdin from /dev/null.
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
  // SIGTERM to the group; after `grace_seconds` without an exit, SIGKILL. Returns the exit status.
  int terminate(double grace_seconds);

  pid_t pid() const { return pid_; }
  const std::string& program() const { return program_; }

 private:
  void signal_group(int signal);

  pid_t pid_ = -1;
  std::string program_;
  std::optional<int> status_;
};

// Where `program` would be started from (PATH searched); empty if nowhere.
std::filesystem::path find_program(const std::string& program);

}  // namespace dtbench
