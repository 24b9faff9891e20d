#pragma once
// Reading and writing a whole file. Reading: each caller decides what a missing file means to it
// (an input error naming the blueprint, a skipped trace, an empty /proc reading). Writing: through
// a temporary name and a rename, so that a crash never leaves half a file.
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace dtbench {

// The file's bytes, or nullopt if it cannot be opened.
inline std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return std::move(text).str();
}

// Writes `content` to `path` through a temporary file in the same directory and a rename; IoError
// naming the file if either fails.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace dtbench
