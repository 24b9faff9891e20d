#pragma once
// Checks for numeric command-line options that say in words what was expected: CLI11's own
// PositiveNumber and NonNegativeNumber print their range out to the largest double ("--batch:
// Value 0 not in range 0.000000 to 17976931348623157...") and name 0 where they mean above it.
#include <CLI/CLI.hpp>

namespace dtbench {

// "--batch 0" -> "--batch: expected a number above 0, got 0". Help shows it as POSITIVE.
CLI::Validator positive_number();
// "--iters -3" -> "--iters: expected 0 or more, got -3". Help shows it as NONNEGATIVE.
CLI::Validator non_negative_number();

}  // namespace dtbench
