#pragma once
// Each subcommand of `dtbench` registers its options and its action here.
#include <CLI/CLI.hpp>

namespace dtbench {

void add_train_command(CLI::App& app);
void add_models_command(CLI::App& app);
void add_data_command(CLI::App& app);
void add_bench_command(CLI::App& app);

}  // namespace dtbench
