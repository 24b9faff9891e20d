#pragma once
// dtbench bench ps: push + pull round time of sync parameter servers over a range of payload sizes,
// to set beside `bench allreduce` of the same sizes (ps.cpp).
#include <CLI/CLI.hpp>

namespace dtbench {

// Registers `ps` under `bench`.
void add_ps_bench(CLI::App& bench);

}  // namespace dtbench
