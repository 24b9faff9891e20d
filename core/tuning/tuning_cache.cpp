#include "core/tuning/tuning_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <mutex>

#include <spdlog/spdlog.h>

#include "core/util/blas.h"

namespace dtbench {

namespace {

constexpr int kFormat = 1;  // raised when what is stored changes meaning: older files are ignored

// An exclusive lock on `path` for this object's life; none (and a warning) where it cannot be had.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

std::filesystem::path default_folder() {
  if (const char* dir = std::getenv("DTBENCH_CACHE_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::filesystem::path(xdg) / "dtbench";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr && *home != '\0' ? home : "/tmp") / ".cache" / "dtbench";
}

void warn_once(const std::filesystem::path& folder, const std::string& why) {
  static std::once_flag warned;
  std::call_once(warned, [&] {
    spdlog::warn("tuning cache {}: {}; measured choices are kept by this process only", folder.string(), why);
  });
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

}  // namespace

TuningCache::TuningCache(std::filesystem::path file) : file_(std::move(file)) {}

TuningCache TuningCache::in_default_folder(const std::string& name) { return TuningCache(default_folder() / name); }

nlohmann::json TuningCache::read() const {
  std::ifstream in(file_);
  if (!in) return nlohmann::json::object();
  const nlohmann::json whole = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  // A damaged file, or one of another format, is measured over rather than trusted.
  if (!whole.is_object() || whole.value("format", 0) != kFormat || !whole.contains("entries") ||
      !whole["entries"].is_object()) {
    return nlohmann::json::object();
  }
  return whole["entries"];
}

void TuningCache::write(const nlohmann::json& entries) const {
  const auto temporary = std::filesystem::path(file_.string() + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(temporary);
    out << nlohmann::json{{"format", kFormat}, {"entries", entries}}.dump(1) << '\n';
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      warn_once(file_.parent_path(), "cannot write " + temporary.string());
      return;
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, file_, error);  // readers see the old file or the new, never half
  if (error) warn_once(file_.parent_path(), "cannot replace " + file_.string() + ": " + error.message());
}

nlohmann::json TuningCache::find_or_measure(const std::string& key,
                                            const std::function<std::optional<nlohmann::json>()>& measure) {
  std::error_code error;
  std::filesystem::create_directories(file_.parent_path(), error);
  if (error) {
    warn_once(file_.parent_path(), error.message());
    return measure().value_or(nlohmann::json());
  }
  const FileLock lock(std::filesystem::path(file_.string() + ".lock"));
  if (!lock.held()) warn_once(file_.parent_path(), "cannot lock " + file_.string() + ".lock");
  nlohmann::json entries = read();
  if (const auto found = entries.find(key); found != entries.end()) return *found;
  std::optional<nlohmann::json> value = measure();
  if (!value) return nlohmann::json();
  entries[key] = *value;
  write(entries);
  return *value;
}

std::string machine_key() { return cpu_model() + ", OpenBLAS " + blas::core_name(); }

}  // namespace dtbench
