#pragma once
// Reading a whole file: one helper, each caller deciding what a missing file means to it (an
// input error naming the blueprint, a skipped trace, an empty /proc reading).
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

}  // namespace dtbench
