#include "launch/bench/step_dump.h"

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/util/files.h"

namespace dtbench {

namespace {

template <typename T>
void write_values(const std::filesystem::path& path, std::span<const T> values) {
  write_file_atomically(path, std::string(reinterpret_cast<const char*>(values.data()), values.size_bytes()));
}

}  // namespace

void dump_step(Model& model, const Tensor& images, std::span<const int32_t> labels, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  nlohmann::json parameters = nlohmann::json::array();
  for (const Param* p : model.arena().params()) {
    parameters.push_back({{"name", p->name}, {"shape", p->shape}, {"offset", p->offset}, {"count", p->numel()}});
  }
  write_file_atomically(dir / "parameters.json", parameters.dump(1) + "\n");
  write_values<float>(dir / "weights.bin", model.arena().values());
  write_values<float>(dir / "input.bin", images.span());
  write_values<int32_t>(dir / "labels.bin", labels);

  Tensor grad_logits;
  const LossResult loss = model.loss(model.forward(images, Mode::Train), labels, &grad_logits);
  model.backward(grad_logits);
  write_values<float>(dir / "grads.bin", model.arena().grads());
  const nlohmann::json step = {{"model", model.name()},
                               {"input", model.sample_input_shape()},
                               {"batch", images.dim(0)},
                               {"classes", model.classes()},
                               {"loss", loss.loss}};
  write_file_atomically(dir / "step.json", step.dump(1) + "\n");
}

}  // namespace dtbench
