// The CPU quota a process runs under, read as the kernel writes it: cgroup v1's quota and period,
// v2's cpu.max, the least of a cgroup and its parents, and the quota an emulated host is told.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/util/cpu_quota.h"
#include "core/util/error.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;

class CpuQuota : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("dtbench-cpu-quota-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "pod" / "rank");
  }
  void TearDown() override { fs::remove_all(root_); }
  static void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }
  fs::path root_;
};

TEST_F(CpuQuota, V1IsTheQuotaOverThePeriodAndMinusOneIsNone) {
  write(root_ / "cpu.cfs_quota_us", "50000\n");
  write(root_ / "cpu.cfs_period_us", "100000\n");
  EXPECT_DOUBLE_EQ(v1_quota_cores(root_), 0.5);
  write(root_ / "cpu.cfs_quota_us", "15000\n");
  write(root_ / "cpu.cfs_period_us", "10000\n");
  EXPECT_DOUBLE_EQ(v1_quota_cores(root_), 1.5);
  write(root_ / "cpu.cfs_quota_us", "-1\n");
  EXPECT_DOUBLE_EQ(v1_quota_cores(root_), 0.0);
  EXPECT_DOUBLE_EQ(v1_quota_cores(root_ / "pod"), 0.0) << "no files: no quota";
}

TEST_F(CpuQuota, V2IsCpuMaxsQuotaOverItsPeriodAndMaxIsNone) {
  write(root_ / "cpu.max", "25000 100000\n");
  EXPECT_DOUBLE_EQ(v2_quota_cores(root_), 0.25);
  write(root_ / "cpu.max", "max 100000\n");
  EXPECT_DOUBLE_EQ(v2_quota_cores(root_), 0.0);
  EXPECT_DOUBLE_EQ(v2_quota_cores(root_ / "pod"), 0.0);
}

// A limit set on a parent (a container's, a pod's) binds the cgroups beneath it.
TEST_F(CpuQuota, TheLeastQuotaOfACgroupAndItsParentsBinds) {
  const fs::path mount = root_;
  write(mount / "pod" / "cpu.max", "50000 100000\n");
  write(mount / "pod" / "rank" / "cpu.max", "200000 100000\n");
  EXPECT_DOUBLE_EQ(least_quota_cores(mount, mount / "pod" / "rank", /*unified=*/true), 0.5);
  write(mount / "pod" / "cpu.max", "max 100000\n");
  EXPECT_DOUBLE_EQ(least_quota_cores(mount, mount / "pod" / "rank", /*unified=*/true), 2.0);
  write(mount / "pod" / "rank" / "cpu.max", "max 100000\n");
  EXPECT_DOUBLE_EQ(least_quota_cores(mount, mount / "pod" / "rank", /*unified=*/true), 0.0);
  write(mount / "pod" / "cpu.cfs_quota_us", "30000\n");
  write(mount / "pod" / "cpu.cfs_period_us", "100000\n");
  EXPECT_DOUBLE_EQ(least_quota_cores(mount, mount / "pod" / "rank", /*unified=*/false), 0.3);
}

TEST(CpuQuotaTold, TheVariableIsAPositiveNumberOfCoresOrAnErrorNamingIt) {
  unsetenv("DTBENCH_CPU_QUOTA_CORES");
  EXPECT_FALSE(told_cpu_quota_cores().has_value());
  setenv("DTBENCH_CPU_QUOTA_CORES", "0.5", 1);
  EXPECT_DOUBLE_EQ(told_cpu_quota_cores().value(), 0.5);
  for (const char* bad : {"half", "0", "-1", "0.5x", ""}) {
    setenv("DTBENCH_CPU_QUOTA_CORES", bad, 1);
    try {
      told_cpu_quota_cores();
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("DTBENCH_CPU_QUOTA_CORES is '" + std::string(bad) + "'"), std::string::npos)
          << e.what();
    }
  }
  unsetenv("DTBENCH_CPU_QUOTA_CORES");
}

}  // namespace
}  // namespace dtbench
