// dtbench: a benchmark for distributed deep-learning training. Errors inside the program are
// exceptions with context; they are caught here, once, logged, and turned into a non-zero exit.
#include <unistd.h>

#include <cstdlib>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "core/cuda/register.h"
#include "core/util/blas.h"
#include "core/util/error.h"
#include "launch/commands.h"
#include "launch/monitor/provenance.h"

namespace {

// Colour only for a person at a terminal. Under a launcher (mpirun, Slurm) a rank's stdout can be
// a pseudo-terminal although it ends up in a log file, so the launcher's variables turn it off;
// NO_COLOR (no-color.org) does too.
bool colour_wanted() {
  for (const char* launcher_variable : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "NO_COLOR"}) {
    if (std::getenv(launcher_variable) != nullptr) return false;
  }
  return isatty(STDOUT_FILENO) != 0;
}

void set_up_logging() {
  const auto mode = colour_wanted() ? spdlog::color_mode::automatic : spdlog::color_mode::never;
  spdlog::set_default_logger(spdlog::stdout_color_mt("dtbench", mode));
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
}

std::vector<const CLI::App*> commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

bool is_command(const CLI::App& app, const std::string& word) {
  for (const CLI::App* command : commands(app)) {
    if (command->check_name(word)) return true;
  }
  return false;
}

// A first word that is no subcommand is named as such, with the commands there are (CLI11 would
// only say that a subcommand is required).
int unknown_command(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* command : commands(app)) names.push_back(command->get_name());
  spdlog::error("unknown command '{}'; the commands are: {}", word, fmt::join(names, ", "));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything else: OpenBLAS fixes its kernel when it loads, so this may re-execute us.
  dtbench::blas::select_core(argv);
  set_up_logging();
  dtbench::register_device_backends();  // `device: cuda`, when this binary was built with it

  CLI::App app{"dtbench: measure distributed deep-learning training, phase by phase"};
  app.set_version_flag("--version", dtbench::version_text());
  app.require_subcommand(1);
  dtbench::add_train_command(app);
  dtbench::add_models_command(app);
  dtbench::add_data_command(app);
  dtbench::add_bench_command(app);
  dtbench::add_ps_command(app);
  dtbench::add_report_command(app);
  dtbench::add_sweep_command(app);
  dtbench::add_doctor_command(app);
  dtbench::add_cluster_command(app);
  dtbench::add_predict_command(app);
  if (argc > 1 && argv[1][0] != '-' && !is_command(app, argv[1])) {
    return unknown_command(app, argv[1]);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const dtbench::InputError& error) {
    spdlog::error("{}", error.what());
    return 2;
  } catch (const std::exception& error) {
    spdlog::error("{}", error.what());
    return 1;
  }
  return 0;
}
