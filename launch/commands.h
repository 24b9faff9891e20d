#pragma once
// Each subcommand of `dtbench` registers its options and its action here.
#include <CLI/CLI.hpp>

#include "launch/blueprint/blueprint.h"
#include "paramserver/ps_transport.h"

namespace dtbench {

void add_train_command(CLI::App& app);
void add_models_command(CLI::App& app);
void add_data_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_doctor_command(CLI::App& app);
void add_ps_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_cluster_command(CLI::App& app);
void add_predict_command(CLI::App& app);

// The ps-sync / ps-async transport settings of a blueprint's `ps:` section for worker `rank` of
// `world` (reads ps.auth_token_file). For register_ps_transports and make_ps_channel.
PsTransportOptions ps_transport_options(const Blueprint& bp, int rank, int world);

}  // namespace dtbench
