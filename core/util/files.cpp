#include "core/util/files.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench {

namespace fs = std::filesystem;

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
