// dtbench data synth: writes a seeded synthetic data set in a real format (CIFAR-10/100 binary,
// IDX), so benchmarks run at full size without a download and still exercise the real readers.
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/data/synthetic.h"
#include "launch/blueprint/number_option.h"
#include "launch/commands.h"
#include "core/util/files.h"

namespace dtbench {

void add_data_command(CLI::App& app) {
  auto* data = app.add_subcommand("data", "Data sets: synth");
  data->require_subcommand(1);
  auto* synth = data->add_subcommand("synth", "Write a synthetic data set in a real format");
  auto options = std::make_shared<SynthOptions>();
  options->format = "cifar10";
  synth->add_option("--format", options->format, "idx | cifar10 | cifar100")
      ->check(CLI::IsMember({"idx", "cifar10", "cifar100"}));
  synth->add_option("--out", options->path, "Directory to write into")->required();
  synth->add_option("--train", options->train_samples, "Training samples")->check(positive_number());
  synth->add_option("--test", options->test_samples, "Test samples")->check(positive_number());
  synth->add_option("--seed", options->seed, "Seed: the same seed writes the same bytes");
  synth->add_flag("--gzip", options->gzip, "idx: write .gz files");
  synth->callback([options] {
    const auto written = write_synthetic(*options);
    // Marks the directory so training reports say the data is synthetic.
    write_file_atomically(std::filesystem::path(options->path) / "SYNTHETIC",
                          fmt::format("format: {}\ntrain: {}\ntest: {}\nseed: {}\n", options->format,
                                      options->train_samples, options->test_samples, options->seed));
    fmt::print("wrote {} {} train / {} test samples:\n  {}\n", options->format, options->train_samples,
               options->test_samples, fmt::join(written, "\n  "));
  });
}

}  // namespace dtbench
