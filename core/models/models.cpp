#include "core/models/models.h"

#include "core/models/architectures.h"
#include "core/util/error.h"

namespace dtbench::models {

namespace {

using Builder = std::unique_ptr<Sequential> (*)(const Shape&, int64_t);

struct Architecture {
  ModelEntry entry;
  Builder builder;
};

const std::vector<Architecture>& architectures() {
  static const std::vector<Architecture> all{
      {{"mlp", "784-128-64-10 multilayer perceptron with ReLU (MNIST)", {1, 28, 28}},
       detail::build_mlp},
      {{"lenet5", "LeNet-5 with ReLU and max-pooling, 62,006 parameters on 3x32x32 (LeCun 1998)",
        {1, 28, 28}},
       detail::build_lenet5},
      {{"alexnet", "AlexNet for small inputs: 5 conv, 3 max-pool, 3 fc with dropout (CIFAR at 64x64)",
        {3, 64, 64}},
       detail::build_alexnet},
      {{"vgg16", "VGG-16 with batch norm, CIFAR variant: 13 conv3x3 and one linear (pytorch-cifar)",
        {3, 32, 32}},
       detail::build_vgg16},
      {{"resnet18", "ResNet-18, CIFAR variant: 3x3 stem, basic blocks [2,2,2,2] (pytorch-cifar)",
        {3, 32, 32}},
       detail::build_resnet18},
      {{"resnet50", "ResNet-50, CIFAR variant: 3x3 stem, bottlenecks [3,4,6,3] (pytorch-cifar)",
        {3, 32, 32}},
       detail::build_resnet50},
  };
  return all;
}

std::string valid_names() {
  std::string names;
  for (const Architecture& architecture : architectures()) {
    if (!names.empty()) names += ", ";
    names += architecture.entry.name;
  }
  return names;
}

}  // namespace

const std::vector<ModelEntry>& catalogue() {
  static const std::vector<ModelEntry> entries = [] {
    std::vector<ModelEntry> result;
    for (const Architecture& architecture : architectures()) result.push_back(architecture.entry);
    return result;
  }();
  return entries;
}

std::unique_ptr<Model> build(std::string_view name, const Shape& sample_input, int64_t classes,
                             DeviceBackend* device) {
  const Architecture* found = nullptr;
  for (const Architecture& architecture : architectures()) {
    if (architecture.entry.name == name) found = &architecture;
  }
  if (found == nullptr) fail_input("unknown model '{}'; valid models: {}", name, valid_names());
  if (classes < 1) fail_input("model {}: classes must be at least 1, got {}", name, classes);

  std::unique_ptr<Sequential> net = found->builder(sample_input, classes);
  try {
    return std::make_unique<Model>(std::string(name), sample_input, classes, std::move(net), device);
  } catch (const InputError& error) {
    // A layer's configure() names only itself; say which model and input it was.
    fail_input("model {} cannot take input {}: {}", name, shape_string(sample_input), error.what());
  }
}

namespace detail {

void reject_input(std::string_view model, const Shape& sample_input, std::string_view accepts) {
  fail_input("model {} cannot take input {}: it accepts {}", model, shape_string(sample_input),
             accepts);
}

void require_image(std::string_view model, const Shape& sample_input, std::string_view accepts) {
  bool ok = sample_input.size() == 3;
  for (int64_t size : sample_input) ok = ok && size > 0;
  if (!ok) reject_input(model, sample_input, accepts);
}

}  // namespace detail

}  // namespace dtbench::models
