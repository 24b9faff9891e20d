#pragma once
// A well-formedness check for the XML dtbench writes (report.html is XHTML, its charts inline SVG),
// in C++ so that CI needs neither Python nor xmllint. It checks what a browser would otherwise
// forgive silently:
//   - elements nest and close in order, and there is exactly one root element;
//   - names are XML names; every attribute is name="value" or name='value', separated by
//     whitespace, at most once per element, with no '<' in its value;
//   - every '&' in text or attribute values starts &amp; &lt; &gt; &quot; &apos; or a character
//     reference (&#60; &#x3c;);
//   - comments, CDATA sections, processing instructions and one doctype before the root are allowed;
//     nothing but whitespace lies outside the root.
// Not checked: DTD internal subsets, and the encoding of characters beyond ASCII.
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace dtbench::testing {

class XmlChecker {
 public:
  explicit XmlChecker(std::string_view xml) : xml_(xml) {}

  // "" when well-formed, else the first problem and its byte offset.
  std::string error() {
    while (at_ < xml_.size() && problem_.empty()) {
      if (xml_[at_] == '<') {
        markup();
      } else {
        text();
      }
    }
    if (problem_.empty() && !open_.empty()) fail("<" + open_.back() + "> is never closed");
    if (problem_.empty() && roots_ == 0) fail("no root element");
    return problem_;
  }

 private:
  static bool name_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' || static_cast<unsigned char>(c) >= 0x80;
  }
  static bool name_char(char c) {
    return name_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  }
  static bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  bool starts(std::string_view prefix) const { return xml_.substr(at_, prefix.size()) == prefix; }

  void fail(const std::string& what) {
    if (problem_.empty()) problem_ = "at byte " + std::to_string(at_) + ": " + what;
  }

  void skip_space() {
    while (at_ < xml_.size() && space(xml_[at_])) ++at_;
  }

  std::string name() {
    const size_t begin = at_;
    if (at_ >= xml_.size() || !name_start(xml_[at_])) {
      fail("expected a name");
      return "";
    }
    while (at_ < xml_.size() && name_char(xml_[at_])) ++at_;
    return std::string(xml_.substr(begin, at_ - begin));
  }

  // Skips past `end`, which must come.
  void skip_to(std::string_view end, const std::string& what) {
    const size_t found = xml_.find(end, at_);
    if (found == std::string_view::npos) return fail("unterminated " + what);
    at_ = found + end.size();
  }

  // At '&': one of the five predefined entities or a character reference.
  void entity() {
    const size_t semicolon = xml_.find(';', at_);
    const std::string_view body =
        semicolon == std::string_view::npos ? std::string_view() : xml_.substr(at_ + 1, semicolon - at_ - 1);
    static const std::set<std::string_view> kNamed = {"amp", "lt", "gt", "quot", "apos"};
    bool valid = kNamed.count(body) > 0;
    if (!valid && body.size() > 1 && body[0] == '#') {
      const bool hex = body[1] == 'x';
      const std::string_view digits = body.substr(hex ? 2 : 1);
      valid = !digits.empty();
      for (const unsigned char c : digits) valid = valid && (hex ? std::isxdigit(c) : std::isdigit(c));
    }
    if (!valid) return fail("'&' that starts no entity (write &amp;)");
    at_ = semicolon + 1;
  }

  void text() {
    const bool outside = open_.empty();
    for (; at_ < xml_.size() && xml_[at_] != '<' && problem_.empty(); ++at_) {
      if (outside && !space(xml_[at_])) return fail("text outside the root element");
      if (xml_[at_] == '&') {
        entity();
        --at_;
      }
    }
  }

  void markup() {
    if (starts("<!--")) return skip_to("-->", "comment");
    if (starts("<?")) return skip_to("?>", "processing instruction");
    if (starts("<![CDATA[")) {
      if (open_.empty()) return fail("CDATA outside the root element");
      return skip_to("]]>", "CDATA section");
    }
    if (starts("<!DOCTYPE")) {
      if (roots_ > 0 || seen_doctype_) return fail("a doctype after the root or a second one");
      seen_doctype_ = true;
      return skip_to(">", "doctype");
    }
    if (starts("</")) return end_tag();
    start_tag();
  }

  void end_tag() {
    at_ += 2;
    const std::string tag = name();
    skip_space();
    if (at_ >= xml_.size() || xml_[at_] != '>') return fail("malformed end tag </" + tag);
    ++at_;
    if (open_.empty() || open_.back() != tag) {
      return fail("</" + tag + "> closes " + (open_.empty() ? std::string("nothing") : "<" + open_.back() + ">"));
    }
    open_.pop_back();
  }

  void start_tag() {
    ++at_;
    const std::string tag = name();
    if (!problem_.empty()) return;
    if (open_.empty() && roots_++ > 0) return fail("a second root element <" + tag + ">");
    std::set<std::string> attributes;
    while (problem_.empty()) {
      const size_t before_space = at_;
      skip_space();
      if (at_ >= xml_.size()) return fail("unterminated tag <" + tag);
      if (starts("/>")) {
        at_ += 2;
        return;
      }
      if (xml_[at_] == '>') {
        ++at_;
        open_.push_back(tag);
        return;
      }
      if (at_ == before_space) return fail("no space before an attribute of <" + tag + ">");
      attribute(tag, attributes);
    }
  }

  void attribute(const std::string& tag, std::set<std::string>& seen) {
    const std::string attribute_name = name();
    if (!problem_.empty()) return;
    if (!seen.insert(attribute_name).second) return fail("attribute " + attribute_name + " twice in <" + tag + ">");
    skip_space();
    if (at_ >= xml_.size() || xml_[at_] != '=') return fail("attribute " + attribute_name + " without a value");
    ++at_;
    skip_space();
    if (at_ >= xml_.size() || (xml_[at_] != '"' && xml_[at_] != '\'')) {
      return fail("unquoted value of attribute " + attribute_name);
    }
    const char quote = xml_[at_++];
    for (; at_ < xml_.size() && xml_[at_] != quote && problem_.empty(); ++at_) {
      if (xml_[at_] == '<') return fail("'<' in the value of attribute " + attribute_name);
      if (xml_[at_] == '&') {
        entity();
        --at_;
      }
    }
    if (at_ >= xml_.size()) return fail("unterminated value of attribute " + attribute_name);
    ++at_;  // the closing quote
  }

  std::string_view xml_;
  size_t at_ = 0;
  std::vector<std::string> open_;
  int roots_ = 0;
  bool seen_doctype_ = false;
  std::string problem_;
};

// "" when `xml` is well-formed, else the first problem found.
inline std::string xml_error(std::string_view xml) { return XmlChecker(xml).error(); }

}  // namespace dtbench::testing
