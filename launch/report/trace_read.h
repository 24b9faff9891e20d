#pragma once
// Reading the Chrome trace files dtbench's processes stream (core/profile/trace_file.h), including
// those of a process that died while writing: a missing closing "]" is added, and a last event cut
// off mid-line is dropped — each with a warning, never a failure, since a trace is most wanted
// after a crash.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench {

// The events of `path` (a JSON array, or an object holding "traceEvents"); nullopt, with a warning
// saying why, when the file cannot be read or repaired. Repairs are reported in `warnings`.
std::optional<nlohmann::json> read_trace_events(const std::filesystem::path& path, std::vector<std::string>& warnings);

// The same, from text already read; `name` is what warnings call it.
std::optional<nlohmann::json> parse_trace_events(const std::string& text, const std::string& name,
                                                 std::vector<std::string>& warnings);

}  // namespace dtbench
