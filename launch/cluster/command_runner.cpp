#include "launch/cluster/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench::cluster {

namespace {

using Clock = std::chrono::steady_clock;

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// In the child: stdout and stderr into the pipe, stdin from /dev/null, a process group of its own
// (so a timeout kills whatever it started too). Only async-signal-safe calls until exec.
[[noreturn]] void exec_child(const std::vector<char*>& args, int write_end) {
  setpgid(0, 0);
  const int null = open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, STDIN_FILENO);
  dup2(write_end, STDOUT_FILENO);
  dup2(write_end, STDERR_FILENO);
  execvp(args[0], args.data());
  const char message[] = "cannot execute the program\n";
  (void)!write(STDERR_FILENO, message, sizeof(message) - 1);
  _exit(127);
}

// Reads the child's output until it closes the pipe or the deadline passes; true if closed.
bool read_until(int fd, Clock::time_point deadline, std::string& output) {
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd item{fd, POLLIN, 0};
    const int ready = poll(&item, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    output.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv) {
    if (!line.empty()) line += ' ';
    line += arg.find_first_of(" \t'\"") == std::string::npos ? arg : "'" + arg + "'";
  }
  return line;
}

CommandResult run_command(const std::vector<std::string>& argv, double timeout_s) {
  if (argv.empty()) throw LogicError("run_command: no program given");
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  int pipe_ends[2];
  if (pipe2(pipe_ends, O_CLOEXEC) != 0) throw IoError(fmt::format("pipe for {}: {}", argv[0], std::strerror(errno)));
  const pid_t pid = fork();
  if (pid < 0) {
    close(pipe_ends[0]);
    close(pipe_ends[1]);
    throw IoError(fmt::format("cannot start {}: {}", command_line(argv), std::strerror(errno)));
  }
  if (pid == 0) exec_child(args, pipe_ends[1]);
  close(pipe_ends[1]);
  CommandResult result;
  const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  const bool finished = read_until(pipe_ends[0], deadline, result.output);
  close(pipe_ends[0]);
  if (!finished) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!finished) throw IoError(fmt::format("{} did not finish within {} s", command_line(argv), timeout_s));
  result.exit_code = decode_status(status);
  return result;
}

std::string check_command(const std::vector<std::string>& argv, double timeout_s) {
  CommandResult result = run_command(argv, timeout_s);
  if (result.exit_code != 0) {
    while (!result.output.empty() && result.output.back() == '\n') result.output.pop_back();
    throw IoError(fmt::format("{} failed (exit {}): {}", command_line(argv), result.exit_code, result.output));
  }
  return std::move(result.output);
}

}  // namespace dtbench::cluster
