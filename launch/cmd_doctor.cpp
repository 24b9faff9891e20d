// dtbench doctor: options and wiring; the check itself is launch/bench/doctor.h.
#include "launch/bench/bench.h"
#include "launch/blueprint/number_option.h"
#include "launch/commands.h"

namespace dtbench {

void add_doctor_command(CLI::App& app) {
  auto* command = app.add_subcommand("doctor", "Check that every rank reaches its ring neighbours (run under mpirun)");
  auto options = std::make_shared<DoctorOptions>();
  command->add_option("--iface", options->iface, "Network interface for MPI's TCP traffic (btl_tcp_if_include)");
  command->add_option("--timeout-s", options->timeout_s, "A neighbour silent this long fails its link")
      ->check(positive_number())
      ->capture_default_str();
  command->add_option("--test-silent-rank", options->silent_rank, "Testing: this rank does not answer")
      ->group("");  // hidden
  command->callback([options] { run_doctor(*options); });
}

}  // namespace dtbench
