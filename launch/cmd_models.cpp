// dtbench models: every model with its parameters and forward MACs per image.
#include <fmt/format.h>

#include "core/models/models.h"
#include "core/util/error.h"
#include "launch/commands.h"
#include "launch/blueprint/number_option.h"
#include "launch/blueprint/shape_option.h"

namespace dtbench {

void add_models_command(CLI::App& app) {
  auto* command = app.add_subcommand("models", "List the models with parameters and forward MACs per image");
  struct Options {
    int64_t classes = 10;
    std::string input;
  };
  auto options = std::make_shared<Options>();
  command->add_option("--classes", options->classes, "Number of classes")->check(positive_number());
  command->add_option("--input", options->input, "Input shape CxHxW (default: each model's own)");
  command->callback([options] {
    fmt::print("{:<10} {:<10} {:>14} {:>16}  {}\n", "model", "input", "parameters", "MACs/image", "architecture");
    for (const auto& entry : models::catalogue()) {
      const Shape input = options->input.empty() ? entry.default_input : parse_shape_option("--input", options->input);
      std::unique_ptr<Model> model;
      try {
        model = models::build(entry.name, input, options->classes);
      } catch (const InputError& error) {
        // A shape one model cannot take (too small for its pooling, say) leaves the others listed.
        fmt::print("{:<10} {:<10} {:>14} {:>16}  skipped: {}\n", entry.name, shape_text(input), "-", "-", error.what());
        continue;
      }
      fmt::print("{:<10} {:<10} {:>14} {:>16}  {}\n", entry.name, shape_text(input),
                 model->parameter_count(), model->macs_per_sample(), entry.description);
    }
  });
}

}  // namespace dtbench
