// Resuming a sweep: a configuration's directory remembers the settings it was run with, and a
// repetition that finished is kept while an unfinished one is moved aside and made again.
#include "launch/sweep/resume.h"

#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/util/error.h"
#include "core/util/files.h"

namespace dtbench {

namespace fs = std::filesystem;

// A configuration's directory remembers what it was run with; resuming with other settings
// under the same name would mix two experiments in one table.
void check_or_record_settings(const fs::path& dir, const SweepConfiguration& c) {
  nlohmann::json settings = {{"id", c.id}, {"base", c.base.string()}, {"overrides", c.overrides},
                             {"workers", c.workers}, {"servers", c.servers}};
  if (c.cluster) settings["cluster"] = c.cluster->label();  // absent without one: older records still match
  const fs::path file = dir / "configuration.json";
  if (fs::exists(file)) {
    const nlohmann::json recorded = nlohmann::json::parse(read_file(file).value_or(""), nullptr, false);
    if (recorded.is_discarded()) {
      fail_input("{}: unreadable or not valid JSON; it records what the runs beside it were made with. Move "
                 "that directory away, or choose another --output",
                 file.string());
    }
    if (recorded != settings) {
      fail_input("{} holds runs of configuration {} made with other settings ({}); now: {}. Choose another --output "
                 "or move that directory away",
                 dir.string(), c.id, recorded.dump(), settings.dump());
    }
    return;
  }
  fs::create_directories(dir);
  write_file_atomically(file, settings.dump(2) + "\n");
}

// The run kept from an earlier start of the sweep, if it finished; otherwise its directory is
// moved aside so the run can be made again.
std::optional<SweepRun> kept_run(const fs::path& dir) {
  if (!fs::exists(dir)) return std::nullopt;
  const fs::path record = dir / "run.json";
  if (fs::exists(record)) {
    std::ifstream in(record);
    const nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
    try {
      SweepRun run = sweep_run_from_json(json, dir);
      if (run.final()) return run;
    } catch (const nlohmann::json::exception& error) {
      spdlog::warn("{}: unreadable ({}); the run is made again", record.string(), error.what());
    }
  }
  for (int attempt = 1;; ++attempt) {
    const fs::path aside = dir.string() + fmt::format(".attempt-{}", attempt);
    if (fs::exists(aside)) continue;
    fs::rename(dir, aside);
    spdlog::info("{}: an unfinished earlier attempt, kept as {}", dir.string(), aside.string());
    return std::nullopt;
  }
}

}  // namespace dtbench
