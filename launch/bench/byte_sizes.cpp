#include "launch/bench/byte_sizes.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench {

int64_t parse_byte_size(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0) ++digits;
  const std::string unit = text.substr(digits);
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  if (unit == "KiB") shift = 10;
  if (unit == "MiB") shift = 20;
  if (unit == "GiB") shift = 30;
  if (digits == 0 || digits > 12 || shift < 0) {
    fail_input("size '{}' is not understood: write a whole number with B, KiB, MiB or GiB (4B, 64KiB, 256MiB)", text);
  }
  const int64_t value = std::stoll(text.substr(0, digits));
  if (value > (int64_t{1} << 40) >> shift) fail_input("size '{}' is above 1 TiB", text);
  return value << shift;
}

namespace {

std::vector<int64_t> one_range(const std::string& text) {
  const auto colon = text.find(':');
  const int64_t smallest = parse_byte_size(text.substr(0, colon));
  const int64_t largest = colon == std::string::npos ? smallest : parse_byte_size(text.substr(colon + 1));
  if (smallest < 4 || smallest % 4 != 0 || largest % 4 != 0) {
    fail_input("sizes '{}': every size must be a positive multiple of 4 bytes (one float32 element)", text);
  }
  if (largest < smallest) fail_input("sizes '{}': the largest size is below the smallest", text);
  std::vector<int64_t> sizes;
  for (int64_t bytes = smallest; bytes <= largest; bytes *= 2) sizes.push_back(bytes);
  return sizes;
}

}  // namespace

std::vector<int64_t> parse_size_range(const std::string& text) {
  std::vector<int64_t> sizes;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::vector<int64_t> part = one_range(text.substr(start, comma - start));
    sizes.insert(sizes.end(), part.begin(), part.end());
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::string size_text(int64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (unit < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", bytes, kUnits[unit]);
}

}  // namespace dtbench
