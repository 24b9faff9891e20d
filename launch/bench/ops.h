#pragma once
// dtbench bench ops: operator micro-benchmarks (GEMM, convolution, pooling, batch norm,
// activations, the loss, the optimizers) over a sweep of shapes, each held against a GEMM and a
// memory-bandwidth ceiling measured by the same command (ops.cpp).
#include <CLI/CLI.hpp>

namespace dtbench {

// Registers `ops` under `bench`.
void add_ops_bench(CLI::App& bench);

}  // namespace dtbench
