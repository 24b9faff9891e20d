#include "launch/report/table.h"

#include <algorithm>

#include <fmt/format.h>

namespace dtbench {

std::string escape_xml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // XML 1.0 allows no control characters but tab, newline and carriage return (an error
        // message with terminal colour codes would make the page ill-formed).
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += "&#xFFFD;";
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string render_text(const ReportTable& table) {
  // Widths in bytes; the cells are ASCII apart from run names.
  std::vector<size_t> width(table.header.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  };
  widen(table.header);
  for (const auto& row : table.rows) widen(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out = " ";
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < row.size() ? row[c] : "";
      out += c == 0 ? fmt::format(" {:<{}}", cell, width[c]) : fmt::format("  {:>{}}", cell, width[c]);
    }
    return out + "\n";
  };
  std::string out = table.title + "\n" + line(table.header);
  for (const auto& row : table.rows) out += line(row);
  if (!table.note.empty()) out += "  " + table.note + "\n";
  return out;
}

std::string render_markdown(const ReportTable& table) {
  auto cell = [](std::string text) {
    std::string out;
    for (const char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  std::string out = "### " + table.title + "\n\n|";
  for (const auto& h : table.header) out.append(" ").append(cell(h)).append(" |");
  out += "\n|";
  for (size_t c = 0; c < table.header.size(); ++c) out += c == 0 ? " --- |" : " ---: |";
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const auto& value : row) out.append(" ").append(cell(value)).append(" |");
    out += "\n";
  }
  if (!table.note.empty()) out += "\n" + table.note + "\n";
  return out + "\n";
}

std::string render_html(const ReportTable& table) {
  std::string out = "<h3>" + escape_xml(table.title) + "</h3>\n<table>\n<tr>";
  for (const auto& h : table.header) out += "<th>" + escape_xml(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (const auto& value : row) out += "<td>" + escape_xml(value) + "</td>";
    out += "</tr>\n";
  }
  out += "</table>\n";
  if (!table.note.empty()) out += "<p class=\"note\">" + escape_xml(table.note) + "</p>\n";
  return out;
}

}  // namespace dtbench
