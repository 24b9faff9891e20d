#include "launch/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/util/error.h"

extern char** environ;

namespace dtbench {

namespace {

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::filesystem::path find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    return access(program.c_str(), X_OK) == 0 ? std::filesystem::path(program) : std::filesystem::path();
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log)
    : program_(argv.empty() ? "" : argv.front()) {
  if (argv.empty()) throw LogicError("ChildProcess: no program given");
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);  // a new group led by the child

  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int error = posix_spawnp(&pid_, args[0], &files, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) {
    throw IoError(fmt::format("cannot start {} (log {}): {}", program_, log.string(), std::strerror(error)));
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !poll()) terminate(0.0);
}

std::optional<int> ChildProcess::poll() {
  if (status_ || pid_ <= 0) return status_;
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == pid_) status_ = decode_status(status);
  return status_;
}

std::optional<int> ChildProcess::wait_until(Clock::time_point deadline, const std::function<bool()>& interrupted) {
  while (!poll()) {
    if (Clock::now() >= deadline || (interrupted && interrupted())) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return status_;
}

void ChildProcess::signal_group(int signal) {
  if (pid_ > 0) kill(-pid_, signal);
}

int ChildProcess::terminate(double grace_seconds) {
  if (poll()) return *status_;
  signal_group(SIGTERM);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_seconds));
  if (wait_until(deadline)) return *status_;
  signal_group(SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  status_ = decode_status(status);
  return *status_;
}

}  // namespace dtbench
