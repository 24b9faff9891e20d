#include "launch/bench/ops_report.h"

#include <fmt/format.h>

#include "core/util/blas.h"
#include "launch/monitor/provenance.h"
#include "launch/report/table.h"

namespace dtbench {

namespace {

// "best sgemm (n x n x n), 497.2 GFLOP/s; on 2 threads: 512: 254.1, ...; one per thread: 512: 497.2, ..."
std::string gemm_line(const MachineCeilings& c) {
  std::string probes;
  bool per_thread = true;  // starts a group when it changes
  for (const GemmProbe& probe : c.gemm) {
    if (probe.per_thread != per_thread || probes.empty()) {
      per_thread = probe.per_thread;
      probes += per_thread ? "; one per thread: " : fmt::format("; on {} threads: ", c.threads);
    } else {
      probes += ", ";
    }
    probes += fmt::format("{}: {:.1f}", probe.size, probe.gflops);
  }
  return fmt::format("# compute ceiling: best sgemm (n x n x n), {:.1f} GFLOP/s{}\n", c.best_gemm().gflops, probes);
}

// "best of copy, triad and update over 3 x 128 MiB, 65.0 GB/s; 2 threads: copy 22.4, triad ..."
std::string stream_line(const MachineCeilings& c) {
  std::string probes;
  for (const StreamProbe& probe : c.stream) {
    probes += fmt::format("; {} thread{}: copy {:.1f}, triad {:.1f}, update {:.1f}", probe.threads,
                          probe.threads == 1 ? "" : "s", probe.copy_gbps, probe.triad_gbps, probe.update_gbps);
  }
  return fmt::format("# memory ceiling: best of copy, triad and update over 3 x {} MiB, {:.1f} GB/s{}\n",
                     c.stream_array_bytes >> 20, c.bandwidth_gbps(), probes);
}

}  // namespace

const char* rate_unit(Bound bound) { return bound == Bound::Compute ? "GFLOP/s" : "GB/s"; }

std::string render_ops_text(const OpsReport& report) {
  const std::string cap = report.max_pass_seconds > 0
                              ? fmt::format(" (fewer, but at least 3, where they pass {} s)", report.max_pass_seconds)
                              : "";
  std::string out = fmt::format("# dtbench bench ops: BLAS core {}, {} threads; median of {} runs{} after {} warm-up; "
                                "sizes {}\n",
                                blas::core_name(), report.ceilings.threads, report.iterations, cap, report.warmup,
                                report.sizes);
  out += gemm_line(report.ceilings) + stream_line(report.ceilings);
  out += "# GFLOP/s: 2 per multiply-add; GB/s: 1e9 B/s of compulsory traffic, each tensor read or written once "
         "(launch/op_costs.h)\n# % ceil: of the compute ceiling for GFLOP/s rows, of the memory ceiling for GB/s "
         "rows; only gemm and the convolutions run on several threads; each ceiling probe is the better of a run before and one "
         "after the operators\n";
  ReportTable table = titled_table("operator passes", {"op", "pass", "shape", "median ms", "rate", "unit", "% ceil"});
  for (const OpRow& row : report.rows) {
    table.rows.push_back({row.op, row.pass, row.shape, fmt::format("{:.3f}", 1e3 * row.median_seconds),
                          fmt::format("{:.1f}", row.rate()), rate_unit(row.bound),
                          fmt::format("{:.0f}", row.percent_of_ceiling())});
  }
  return out + render_text(table);
}

nlohmann::json ceilings_json(const MachineCeilings& c) {
  nlohmann::json gemm = nlohmann::json::array(), stream = nlohmann::json::array();
  for (const GemmProbe& probe : c.gemm) {
    gemm.push_back({{"size", probe.size}, {"per_thread", probe.per_thread}, {"gflops", probe.gflops}});
  }
  for (const StreamProbe& probe : c.stream) {
    stream.push_back({{"threads", probe.threads},
                      {"copy_gbps", probe.copy_gbps},
                      {"triad_gbps", probe.triad_gbps},
                      {"update_gbps", probe.update_gbps}});
  }
  return {{"threads", c.threads},
          {"gemm_gflops", c.best_gemm().gflops},
          {"gemm_probes", gemm},
          {"bandwidth_gbps", c.bandwidth_gbps()},
          {"stream_array_bytes", c.stream_array_bytes},
          {"stream_probes", stream}};
}

nlohmann::json ops_report_json(const OpsReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const OpRow& row : report.rows) {
    const bool compute = row.bound == Bound::Compute;
    rows.push_back({{"op", row.op},
                    {"pass", row.pass},
                    {"shape", row.shape},
                    {"bound", compute ? "compute" : "memory"},
                    {compute ? "flops" : "bytes", row.work},
                    {"iterations", row.iterations},
                    {"median_ms", 1e3 * row.median_seconds},
                    {"min_ms", 1e3 * row.min_seconds},
                    {"max_ms", 1e3 * row.max_seconds},
                    {"rate", row.rate()},
                    {"unit", rate_unit(row.bound)},
                    {"ceiling", row.ceiling},
                    {"percent_of_ceiling", row.percent_of_ceiling()}});
  }
  return {{"benchmark", "ops"},
          {"sizes", report.sizes},
          {"iterations", report.iterations},
          {"warmup", report.warmup},
          {"max_pass_seconds", report.max_pass_seconds},
          {"ceilings", ceilings_json(report.ceilings)},
          {"rows", rows},
          {"provenance", to_json(collect_provenance())}};
}

}  // namespace dtbench
