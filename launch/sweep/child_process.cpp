#include "launch/sweep/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/util/clock.h"
#include "core/util/error.h"

extern char** environ;

namespace dtbench {

namespace {

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// The parent pid in /proc/<pid>/stat: the field after the command, which is in parentheses and
// may itself hold spaces or parentheses, hence the last ')'.
std::optional<pid_t> parent_of(const std::filesystem::path& stat_file) {
  std::ifstream file(stat_file);
  std::string line;
  if (!std::getline(file, line)) return std::nullopt;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  char state = 0;
  pid_t parent = 0;
  if (!(rest >> state >> parent)) return std::nullopt;
  return parent;
}

// Reaps `pid` if it is our child (an adopted orphan) and has ended; harmless otherwise.
void reap_if_ours(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, WNOHANG);
}

}  // namespace

void adopt_orphaned_descendants() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

std::vector<pid_t> descendants_of(pid_t root) {
  std::multimap<pid_t, pid_t> children;  // parent -> child
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (const auto parent = parent_of(entry.path() / "stat")) children.emplace(*parent, std::stoi(name));
  }
  std::vector<pid_t> found;
  std::vector<pid_t> frontier = {root};
  while (!frontier.empty()) {
    std::vector<pid_t> next;
    for (const pid_t parent : frontier) {
      const auto [begin, end] = children.equal_range(parent);
      for (auto it = begin; it != end; ++it) {
        found.push_back(it->second);
        next.push_back(it->second);
      }
    }
    frontier = std::move(next);
  }
  return found;
}

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
  if (done < 0 && errno != EINTR) status_ = -1;  // not ours to wait for any more: its status is unknown
  return status_;
}

std::optional<int> ChildProcess::wait_until(Clock::time_point deadline, const std::function<bool()>& interrupted) {
  while (!poll()) {
    if (Clock::now() >= deadline || (interrupted && interrupted())) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return status_;
}

void ChildProcess::signal_all(int signal, const std::vector<pid_t>& descendants) {
  if (pid_ > 0) kill(-pid_, signal);
  for (const pid_t pid : descendants) kill(pid, signal);
}

int ChildProcess::terminate(double grace_seconds) {
  std::vector<pid_t> descendants = pid_ > 0 ? descendants_of(pid_) : std::vector<pid_t>{};
  if (poll() && descendants.empty()) return *status_;
  signal_all(SIGTERM, descendants);
  const auto grace = to_duration(grace_seconds);
  const auto deadline = Clock::now() + grace;
  while (Clock::now() < deadline) {
    poll();
    for (const pid_t pid : descendants) reap_if_ours(pid);
    const bool all_gone = std::all_of(descendants.begin(), descendants.end(), [](pid_t p) { return kill(p, 0) != 0; });
    if (status_ && all_gone) return *status_;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Those that outlived the grace: the ones seen at first and any started since.
  if (!status_) {
    for (const pid_t pid : descendants_of(pid_)) descendants.push_back(pid);
  }
  signal_all(SIGKILL, descendants);
  if (!status_) {
    int status = 0;
    status_ = waitpid(pid_, &status, 0) == pid_ ? decode_status(status) : -1;
  }
  for (const pid_t pid : descendants) reap_if_ours(pid);
  return *status_;
}

}  // namespace dtbench
