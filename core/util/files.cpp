#include "core/util/files.h"

#include <unistd.h>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench {

namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, const std::string& content) {
  const fs::path temporary = path.string() + fmt::format(".tmp{}", getpid());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << content;
    file.flush();
    if (!file) throw IoError(fmt::format("cannot write {}", temporary.string()));
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, error);
    throw IoError(fmt::format("cannot rename {} to {}", temporary.string(), path.string()));
  }
}

}  // namespace dtbench
