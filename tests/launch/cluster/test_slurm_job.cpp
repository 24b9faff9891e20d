// Why a rank of a Slurm job was stopped (launch/cluster/slurm_job.h): the job's state as the
// controller reports it, read from `scontrol show job -o`. The cancelled job itself is in
// test_cluster_slurm.cpp (root, real Slurm).
#include <cstdlib>

#include <gtest/gtest.h>

#include "launch/cluster/slurm_job.h"

namespace dtbench::cluster {
namespace {

TEST(SlurmJob, ReadsFieldsOutOfScontrolsOneLineForm) {
  const std::string line =
      "JobId=12 JobName=ring UserId=root(0) JobState=COMPLETING Reason=None RunTime=00:00:07 TimeLimit=UNLIMITED\n";
  EXPECT_EQ(slurm_job_field(line, "JobState"), "COMPLETING");
  EXPECT_EQ(slurm_job_field(line, "JobId"), "12");
  EXPECT_EQ(slurm_job_field(line, "TimeLimit"), "UNLIMITED");
  EXPECT_EQ(slurm_job_field(line, "Id"), "");  // a whole key, not the end of one
  EXPECT_EQ(slurm_job_field("slurm_load_jobs error: Invalid job id specified", "JobState"), "");
}

TEST(SlurmJob, ReadsSlurmDurations) {
  EXPECT_EQ(slurm_duration_seconds("00:00:07"), 7.0);
  EXPECT_EQ(slurm_duration_seconds("1-02:03:04"), 93784.0);
  EXPECT_EQ(slurm_duration_seconds("10:30"), 630.0);
  EXPECT_FALSE(slurm_duration_seconds("UNLIMITED").has_value());
}

// Outside a job there is no Slurm cause; inside one whose state cannot be read (no such job, or
// no controller) the signal is named with the job.
TEST(SlurmJob, NamesTheSignalAndTheJobWhereItsStateCannotBeRead) {
  ::unsetenv("SLURM_JOB_ID");
  EXPECT_FALSE(slurm_stop_cause(15).has_value());
  ::setenv("SLURM_JOB_ID", "987654321", 1);
  ::setenv("SLURM_CONF", "/nonexistent/slurm.conf", 1);  // no controller to ask
  const std::optional<std::string> cause = slurm_stop_cause(15);
  ::unsetenv("SLURM_JOB_ID");
  ::unsetenv("SLURM_CONF");
  ASSERT_TRUE(cause.has_value());
  EXPECT_EQ(*cause, "signal 15 under Slurm job 987654321 (state unknown)");
}

}  // namespace
}  // namespace dtbench::cluster
