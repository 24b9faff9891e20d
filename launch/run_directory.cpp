#include "launch/run_directory.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <fstream>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench {

namespace fs = std::filesystem;

RunDirectory RunDirectory::create(const fs::path& output, const std::string& name,
                                  const std::string& transport) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &utc);
  const std::string base = fmt::format("{}-{}-{}", name, transport, stamp);
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

void write_file_atomically(const fs::path& path, const std::string& content) {
  const fs::path temporary = path.string() + fmt::format(".tmp{}", getpid());
  std::error_code ignored;
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << content;
    file.flush();
    file.close();
    // A full disk (or a file-size limit) fails the write part way: the half-written temporary goes,
    // so nothing is left behind but the previous complete version, if any.
    if (!file) {
      fs::remove(temporary, ignored);
      throw IoError(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
    }
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, ignored);
    throw IoError(fmt::format("cannot rename {} to {}: {}", temporary.string(), path.string(), error.message()));
  }
}

}  // namespace dtbench
