#pragma once
// Message sizes as benchmarks take and print them: "4B", "64KiB", "1MiB", "2GiB".
#include <cstdint>
#include <string>
#include <vector>

namespace dtbench {

// "4B", "64KiB", "1MiB", "2GiB" or a plain byte count -> bytes; InputError otherwise.
int64_t parse_byte_size(const std::string& text);
// "4B:256MiB" -> 4, 8, 16, ..., 256 MiB (doubling from the first); "1MiB" -> just that size;
// "64KiB:1MiB,248256" -> the ranges and sizes listed, merged in ascending order (a workload's
// own message sizes beside the doubling ones).
// Every size must be a whole number of float32 elements.
std::vector<int64_t> parse_size_range(const std::string& text);
// 1048576 -> "1 MiB"; sizes that are not a whole number of a unit stay in the smaller unit.
std::string size_text(int64_t bytes);

}  // namespace dtbench
