#pragma once
// dtbench bench allreduce: our ring against the MPI library's allreduce over a range of message
// sizes, under mpirun (allreduce.cpp).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dtbench {

// Registers `allreduce` under `bench`.
void add_allreduce_bench(CLI::App& bench);


}  // namespace dtbench
