#pragma once
// A titled table of text cells, rendered three ways: fixed-width for the terminal, Markdown for
// report.md and HTML (escaped) for report.html, so every output shows the same numbers.
#include <string>
#include <vector>

namespace dtbench {

struct ReportTable {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string note;  // a line under the table, may be empty
};

inline ReportTable titled_table(std::string title, std::vector<std::string> header = {}) {
  ReportTable table;
  table.title = std::move(title);
  table.header = std::move(header);
  return table;
}

std::string render_text(const ReportTable& table);
std::string render_markdown(const ReportTable& table);
std::string render_html(const ReportTable& table);

// `text` with &, <, >, " and ' replaced by entities: safe in XML text and attribute values.
std::string escape_xml(const std::string& text);

}  // namespace dtbench
