#pragma once
// Runs a program with an argument vector (fork + execvp: never a shell line built from input),
// with a deadline, collecting stdout and stderr together. Every ip/tc call of the cluster goes
// through here, so a stuck command ends the operation with an error instead of hanging it.
#include <string>
#include <vector>

namespace dtbench::cluster {

struct CommandResult {
  int exit_code = -1;  // the program's exit code, or 128 + the signal that ended it
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (searched in PATH). Throws IoError naming the command if it cannot be started or
// is still running after `timeout_s` (it is then killed with its process group).
CommandResult run_command(const std::vector<std::string>& argv, double timeout_s = 10);

// run_command, and IoError naming the command, its exit code and its output unless it exited 0.
std::string check_command(const std::vector<std::string>& argv, double timeout_s = 10);

// The command as a readable line, for messages and logs (arguments with spaces are quoted).
std::string command_line(const std::vector<std::string>& argv);

}  // namespace dtbench::cluster
