#pragma once
// Internal to core/models: one builder per architecture. Each checks that the sample shape
// (C, H, W) is one the architecture takes (InputError naming the model, the shape and what it
// accepts) and returns the unconfigured network; models::build configures it inside a Model.
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/layers/sequential.h"

namespace dtbench::models::detail {

std::unique_ptr<Sequential> build_mlp(const Shape& sample_input, int64_t classes);
std::unique_ptr<Sequential> build_lenet5(const Shape& sample_input, int64_t classes);
std::unique_ptr<Sequential> build_alexnet(const Shape& sample_input, int64_t classes);
std::unique_ptr<Sequential> build_vgg16(const Shape& sample_input, int64_t classes);
std::unique_ptr<Sequential> build_resnet18(const Shape& sample_input, int64_t classes);
std::unique_ptr<Sequential> build_resnet50(const Shape& sample_input, int64_t classes);

// Throws InputError: "model <model> cannot take input <shape>: it accepts <accepts>".
[[noreturn]] void reject_input(std::string_view model, const Shape& sample_input,
                               std::string_view accepts);

// Requires a (C, H, W) sample with positive sizes, else reject_input(model, ..., accepts).
void require_image(std::string_view model, const Shape& sample_input, std::string_view accepts);

}  // namespace dtbench::models::detail
