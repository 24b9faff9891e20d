#pragma once
#include <string>

#include "core/tensor/tensor.h"

namespace dtbench {

// "3x32x32" -> (3, 32, 32); an InputError names the option and the text otherwise.
Shape parse_shape_option(const std::string& option, const std::string& text);
// (3, 32, 32) -> "3x32x32"
std::string shape_text(const Shape& shape);

}  // namespace dtbench
