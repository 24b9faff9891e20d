#pragma once
// Models built from a name, as blueprints and the command line ask for them.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/models/model.h"

namespace dtbench::models {

struct ModelEntry {
  std::string name;         // "resnet18"
  std::string description;  // one line: the architecture and where it comes from
  Shape default_input;      // the input shape it is usually trained on, e.g. (3, 32, 32)
};

// All models, in a stable order.
const std::vector<ModelEntry>& catalogue();

// Builds `name` for one sample of shape `sample_input` (C, H, W) and `classes` outputs.
// An unknown name, or an input the architecture cannot take, is an InputError naming the model,
// the shape and what it accepts.
// With a `device` (core/device/device.h) the model runs there; null: on the host.
std::unique_ptr<Model> build(std::string_view name, const Shape& sample_input, int64_t classes,
                             DeviceBackend* device = nullptr);

}  // namespace dtbench::models
