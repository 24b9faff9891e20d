// The XML checker the report tests rely on: it accepts what a well-formed report holds and names
// each kind of mistake a hand-written XML writer makes.
#include <gtest/gtest.h>

#include "support/xml_check.h"

namespace dtbench {
namespace {

using testing::xml_error;

TEST(XmlCheck, AcceptsAWellFormedPage) {
  const char* page =
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang='en'>\n<head><meta charset=\"utf-8\"/>"
      "<!-- a comment with <tags> & ampersands --></head>\n<body><p class=\"note\">a &amp; b &lt; c &#62; &#x3e; "
      "&quot;&apos;</p><svg width=\"10\"><text x=\"1\" y = \"2\">Q&amp;A</text><rect/></svg></body></html>\n";
  EXPECT_EQ(xml_error(page), "");
}

TEST(XmlCheck, NamesEachMistake) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"<a><b></a></b>", "</a> closes <b>"},
      {"<a><b></b>", "<a> is never closed"},
      {"<a></a><b></b>", "a second root element"},
      {"text<a></a>", "text outside the root"},
      {"<a x=1></a>", "unquoted value of attribute x"},
      {"<a x=\"1\"y=\"2\"></a>", "no space before an attribute"},
      {"<a x=\"1\" x=\"2\"></a>", "attribute x twice"},
      {"<a x></a>", "attribute x without a value"},
      {"<a x=\"1<2\"></a>", "'<' in the value"},
      {"<a x=\"R&D\"></a>", "'&' that starts no entity"},
      {"<a>R&D</a>", "'&' that starts no entity"},
      {"<a>&nbsp;</a>", "'&' that starts no entity"},
      {"<a>&#xZZ;</a>", "'&' that starts no entity"},
      {"<a x=\"1", "unterminated value"},
      {"<a><!-- open</a>", "unterminated comment"},
      {"<a></a><!DOCTYPE html>", "doctype after the root"},
      {"", "no root element"},
  };
  for (const auto& [xml, expected] : cases) {
    const std::string error = xml_error(xml);
    EXPECT_NE(error.find(expected), std::string::npos) << xml << " -> '" << error << "', expected '" << expected << "'";
  }
}

}  // namespace
}  // namespace dtbench
