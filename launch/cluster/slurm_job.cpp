#include "launch/cluster/slurm_job.h"

#include <cstdio>
#include <cstdlib>
#include <exception>

#include <fmt/format.h>

#include "launch/cluster/command_runner.h"

namespace dtbench::cluster {

std::string slurm_job_field(const std::string& scontrol_line, std::string_view key) {
  const std::string needle = " " + std::string(key) + "=";
  const auto at = (" " + scontrol_line).find(needle);
  if (at == std::string::npos) return "";
  const auto start = at + needle.size() - 1;  // in scontrol_line, past the '='
  const auto end = scontrol_line.find_first_of(" \n", start);
  return scontrol_line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::optional<double> slurm_duration_seconds(const std::string& text) {
  // [days-][hours:]minutes:seconds; "UNLIMITED" and the like are no duration
  int days = 0, a = 0, b = 0, c = 0;
  if (std::sscanf(text.c_str(), "%d-%d:%d:%d", &days, &a, &b, &c) == 4) return ((days * 24.0 + a) * 60 + b) * 60 + c;
  if (std::sscanf(text.c_str(), "%d:%d:%d", &a, &b, &c) == 3) return (a * 60.0 + b) * 60 + c;
  if (std::sscanf(text.c_str(), "%d:%d", &a, &b) == 2) return a * 60.0 + b;
  return std::nullopt;
}

std::optional<std::string> slurm_stop_cause(int signal) {
  const char* job = std::getenv("SLURM_JOB_ID");
  if (job == nullptr || *job == '\0') return std::nullopt;
  std::string line;
  try {
    const CommandResult shown = run_command({"scontrol", "show", "job", "-o", job}, 5);
    if (shown.exit_code == 0) line = shown.output;
  } catch (const std::exception&) {
    // No scontrol, or no answer in time: the signal is reported as it came.
  }
  const std::string state = slurm_job_field(line, "JobState");
  // While its steps are being stopped a job shows COMPLETING, whether it was cancelled or ran out of
  // time; its run time against its limit tells which.
  const auto run_time = slurm_duration_seconds(slurm_job_field(line, "RunTime"));
  const auto limit = slurm_duration_seconds(slurm_job_field(line, "TimeLimit"));
  const bool out_of_time = state == "TIMEOUT" || (state == "COMPLETING" && run_time && limit && *run_time >= *limit);
  if (out_of_time) return fmt::format("stopped by Slurm: job {} reached its time limit", job);
  if (state == "CANCELLED" || state == "COMPLETING") return fmt::format("cancelled by Slurm (scancel of job {})", job);
  return fmt::format("signal {} under Slurm job {} (state {})", signal, job, state.empty() ? "unknown" : state);
}

}  // namespace dtbench::cluster
