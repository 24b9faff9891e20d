#pragma once
// dtbench bench step: forward, backward and update time of one training step (step.cpp).
#include <CLI/CLI.hpp>

namespace dtbench {

// Registers `step` under `bench`.
void add_step_bench(CLI::App& bench);

}  // namespace dtbench
