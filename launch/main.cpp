// dtbench: a benchmark for distributed deep-learning training. Errors inside the program are
// exceptions with context; they are caught here, once, logged, and turned into a non-zero exit.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "core/util/blas.h"
#include "core/util/error.h"
#include "launch/commands.h"

int main(int argc, char** argv) {
  // Before anything else: OpenBLAS fixes its kernel when it loads, so this may re-execute us.
  dtbench::blas::select_core(argv);
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");

  CLI::App app{"dtbench: measure distributed deep-learning training, phase by phase"};
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
