#pragma once
// Why a rank of a Slurm job was stopped by a signal. Slurm stops a job's steps with SIGTERM both
// when the job is cancelled (scancel) and when it reaches its time limit; the controller has set
// the job's state by then, so asking it (scontrol) tells the two apart for the run's report.
#include <optional>
#include <string>
#include <string_view>

namespace dtbench::cluster {

// Outside a Slurm job (no SLURM_JOB_ID): nullopt. Inside: "cancelled by Slurm (scancel of job 12)",
// "stopped by Slurm: job 12 reached its time limit", or, where the state is another or cannot be
// read within a few seconds, "signal 15 under Slurm job 12 (state ...)".
std::optional<std::string> slurm_stop_cause(int signal);

// A field of `scontrol show job -o` output ("JobId=12 JobName=x ... JobState=CANCELLED Reason=None
// ..."): for "JobState", "CANCELLED"; empty where there is none.
std::string slurm_job_field(const std::string& scontrol_line, std::string_view key);
// Seconds of a Slurm duration ("1-02:03:04", "02:03:04", "03:04"); nullopt for "UNLIMITED" and others.
std::optional<double> slurm_duration_seconds(const std::string& text);

}  // namespace dtbench::cluster
