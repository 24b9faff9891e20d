#include "launch/run_directory.h"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench {

namespace fs = std::filesystem;

RunDirectory RunDirectory::create(const fs::path& output, const std::string& name) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &utc);
  const std::string base = fmt::format("{}-{}", name, stamp);
  std::error_code error;
  fs::create_directories(output, error);
  if (error) throw IoError(fmt::format("cannot create output directory {}: {}", output.string(), error.message()));
  for (int attempt = 1;; ++attempt) {
    fs::path candidate = output / (attempt == 1 ? base : fmt::format("{}-{}", base, attempt));
    if (fs::create_directory(candidate, error)) return RunDirectory(candidate);
    if (error) throw IoError(fmt::format("cannot create run directory {}: {}", candidate.string(), error.message()));
  }
}

RunDirectory RunDirectory::open(const fs::path& path) {
  std::error_code error;
  fs::create_directories(path, error);
  if (error) throw IoError(fmt::format("cannot create run directory {}: {}", path.string(), error.message()));
  return RunDirectory(path);
}

void RunDirectory::write(const std::string& file_name, const std::string& content) const {
  write_file_atomically(path_ / file_name, content);
}

}  // namespace dtbench
