// dtbench bench: the benchmarks (not tests) — step, allreduce, ps and ops — each registered by its
// own file in launch/bench/.
#include "launch/bench/bench.h"
#include "launch/commands.h"

namespace dtbench {

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Benchmarks (not tests): step, allreduce, ps, ops");
  bench->require_subcommand(1);
  add_step_bench(*bench);
  add_allreduce_bench(*bench);
  add_ps_bench(*bench);
  add_ops_bench(*bench);
}

}  // namespace dtbench
