#pragma once
// A run directory: runs/<name>-<yyyymmdd-hhmmss>/, the name saying what ran
// (launch/blueprint/run_name.h), holding the resolved blueprint and the reports. Every file is
// written to a temporary name and renamed, so a crash never leaves half a file.
#include <filesystem>
#include <string>

#include "core/util/files.h"

namespace dtbench {

class RunDirectory {
 public:
  // Creates a fresh directory under `output` (adding -2, -3 … if the name is taken).
  static RunDirectory create(const std::filesystem::path& output, const std::string& name);
  // A directory another worker created (made here too when this host does not share its disk).
  static RunDirectory open(const std::filesystem::path& path);
  const std::filesystem::path& path() const { return path_; }
  std::string id() const { return path_.filename().string(); }
  void write(const std::string& file_name, const std::string& content) const;

 private:
  explicit RunDirectory(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace dtbench
