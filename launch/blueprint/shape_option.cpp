#include "launch/blueprint/shape_option.h"

#include <charconv>

#include <fmt/ranges.h>

#include "core/util/error.h"

namespace dtbench {

Shape parse_shape_option(const std::string& option, const std::string& text) {
  Shape shape;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('x', start), text.size());
    int64_t extent = 0;
    const auto [rest, error] = std::from_chars(text.data() + start, text.data() + end, extent);
    if (error != std::errc() || rest != text.data() + end || extent <= 0) {
      fail_input("{} '{}': expected positive extents joined by 'x', e.g. 3x32x32", option, text);
    }
    shape.push_back(extent);
    start = end + 1;
  }
  return shape;
}

std::string shape_text(const Shape& shape) { return fmt::format("{}", fmt::join(shape, "x")); }

}  // namespace dtbench
