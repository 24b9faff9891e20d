#pragma once
// Measured choices kept per machine, so that they are measured once — not once per run or rank —
// and every later run on the machine computes the same way (two runs that differ only in their
// transport also share their convolution algorithms). One JSON file, keyed by what the
// measurement depended on (the caller's key names the CPU, the BLAS core, the threads and the
// shape). Processes that tune at once take turns: a lock file is held while one measures, so the
// others wait and then read its result rather than measure beside it on the same cores.
//
// Where: $DTBENCH_CACHE_DIR, else $XDG_CACHE_HOME/dtbench, else ~/.cache/dtbench. A folder that
// cannot be written is warned about once; choices are then measured in each process.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace dtbench {

class TuningCache {
 public:
  // The cache in `file` (created on first store).
  explicit TuningCache(std::filesystem::path file);
  // `name` ("conv-algorithms.json") in the folder named above.
  static TuningCache in_default_folder(const std::string& name);

  // The value stored under `key`, or, when there is none, `measure`'s (stored before returning).
  // A measurement that should not be kept (a machine too busy to believe it) returns nullopt:
  // then nothing is stored and find_or_measure returns null.
  nlohmann::json find_or_measure(const std::string& key,
                                 const std::function<std::optional<nlohmann::json>()>& measure);

  const std::filesystem::path& file() const { return file_; }

 private:
  nlohmann::json read() const;
  void write(const nlohmann::json& entries) const;

  std::filesystem::path file_;
};

// This machine as a cache key names it: the CPU's model name (/proc/cpuinfo) and OpenBLAS's core.
std::string machine_key();

}  // namespace dtbench
