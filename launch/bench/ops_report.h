#pragma once
// What bench ops measured, as a table for the terminal and as JSON for machines.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/bench/machine_ceilings.h"
#include "launch/bench/op_cases.h"

namespace dtbench {

struct OpRow {
  std::string op;     // the family: "conv"
  std::string pass;   // "fwd"
  std::string shape;  // as the family prints it
  Bound bound = Bound::Memory;
  double work = 0;    // per run: flops or bytes (op_costs.h)
  int iterations = 0;
  double median_seconds = 0, min_seconds = 0, max_seconds = 0;
  double ceiling = 0;  // GFLOP/s or GB/s, the unit of rate()

  double rate() const { return median_seconds > 0 ? work / median_seconds / 1e9 : 0.0; }
  double percent_of_ceiling() const { return ceiling > 0 ? 100.0 * rate() / ceiling : 0.0; }
};

struct OpsReport {
  std::string sizes;  // "small" or "default"
  int iterations = 0;  // per pass, fewer where a pass reached max_pass_seconds
  int warmup = 0;
  double max_pass_seconds = 0;
  MachineCeilings ceilings;
  std::vector<OpRow> rows;
};

const char* rate_unit(Bound bound);  // "GFLOP/s" or "GB/s"

// A header of how it was measured, the ceilings, then one aligned row per pass.
std::string render_ops_text(const OpsReport& report);
nlohmann::json ops_report_json(const OpsReport& report);

}  // namespace dtbench
