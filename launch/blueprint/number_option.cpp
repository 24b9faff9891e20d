#include "launch/blueprint/number_option.h"

#include <cmath>
#include <string>

namespace dtbench {

namespace {

// The option's text as a number, or NaN where it is none (the option's own type conversion then
// names it; this check only judges numbers).
double number_in(const std::string& text) {
  try {
    size_t used = 0;
    const double value = std::stod(text, &used);
    return used == text.size() ? value : std::nan("");
  } catch (const std::exception&) {
    return std::nan("");
  }
}

// A check that passes numbers for which `holds` is true (and leaves what is no number to the
// option's conversion), else says `expected`.
CLI::Validator number_check(bool (*holds)(double), const std::string& expected, const std::string& description) {
  return CLI::Validator(
      [holds, expected](std::string& text) -> std::string {
        const double value = number_in(text);
        return std::isnan(value) || holds(value) ? "" : expected + ", got " + text;
      },
      description);
}

}  // namespace

CLI::Validator positive_number() {
  return number_check([](double value) { return value > 0; }, "expected a number above 0", "POSITIVE");
}

CLI::Validator non_negative_number() {
  return number_check([](double value) { return value >= 0; }, "expected 0 or more", "NONNEGATIVE");
}

}  // namespace dtbench
