#pragma once
// dtbench bench allreduce: our ring against the MPI library's allreduce over a range of message
// sizes, under mpirun (bench_allreduce.cpp).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dtbench {

// Registers `allreduce` under `bench`.
void add_allreduce_bench(CLI::App& bench);

// "4B", "64KiB", "1MiB", "2GiB" or a plain byte count -> bytes; InputError otherwise.
int64_t parse_byte_size(const std::string& text);
// "4B:256MiB" -> 4, 8, 16, ..., 256 MiB (doubling from the first); "1MiB" -> just that size.
// Every size must be a whole number of float32 elements.
std::vector<int64_t> parse_size_range(const std::string& text);

}  // namespace dtbench
