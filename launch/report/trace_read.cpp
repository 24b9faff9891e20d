#include "launch/report/trace_read.h"

#include <fmt/format.h>

#include "core/util/files.h"

namespace dtbench {

namespace {

// `text` without trailing whitespace and at most one trailing comma: what precedes a closing "]".
std::string without_tail(std::string text) {
  const auto end = text.find_last_not_of(" \t\r\n");
  text.erase(end == std::string::npos ? 0 : end + 1);
  if (!text.empty() && text.back() == ',') text.pop_back();
  return text;
}

std::optional<nlohmann::json> events_of(const nlohmann::json& document) {
  if (document.is_array()) return document;
  if (document.is_object() && document.contains("traceEvents") && document["traceEvents"].is_array()) {
    return document["traceEvents"];
  }
  return std::nullopt;
}

}  // namespace

std::optional<nlohmann::json> parse_trace_events(const std::string& text, const std::string& name,
                                                 std::vector<std::string>& warnings) {
  auto parse = [](const std::string& candidate) { return nlohmann::json::parse(candidate, nullptr, false); };
  nlohmann::json document = parse(text);
  if (!document.is_discarded()) {
    auto events = events_of(document);
    if (!events) warnings.push_back(fmt::format("{}: JSON, but not a trace (no array of events); skipped", name));
    return events;
  }
  // Streamed and never closed: the process stopped before finishing the file.
  document = parse(without_tail(text) + "]");
  if (!document.is_discarded() && document.is_array()) {
    warnings.push_back(fmt::format("{}: no closing ']' (its process did not finish); read what it wrote", name));
    return document;
  }
  // Cut off in the middle of its last event: one event per line, so drop the last line.
  const auto last_line = text.rfind("\n{");
  if (last_line != std::string::npos) {
    document = parse(without_tail(text.substr(0, last_line)) + "]");
    if (!document.is_discarded() && document.is_array()) {
      warnings.push_back(fmt::format("{}: its last event was cut off (its process died while writing); dropped it",
                                     name));
      return document;
    }
  }
  warnings.push_back(fmt::format("{}: not a trace file dtbench can read, nor repair; skipped", name));
  return std::nullopt;
}

std::optional<nlohmann::json> read_trace_events(const std::filesystem::path& path, std::vector<std::string>& warnings) {
  const std::optional<std::string> text = read_file(path);
  if (!text) {
    warnings.push_back(fmt::format("{}: cannot be read; skipped", path.string()));
    return std::nullopt;
  }
  return parse_trace_events(*text, path.string(), warnings);
}

}  // namespace dtbench
