// Run-directory files are written through a temporary and a rename: a write that fails (a full
// disk) leaves neither a half file nor the temporary behind.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "core/util/error.h"
#include "launch/blueprint/blueprint.h"
#include "launch/blueprint/run_name.h"
#include "launch/run_directory.h"
#include "support/cli_helpers.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;

class RunDirectoryTest : public testing::TempDirTest {};

// A file-size limit makes the write fail part way with EFBIG, as a full disk fails it with ENOSPC
// (SIGXFSZ, which would end the process, is ignored for the test).
TEST_F(RunDirectoryTest, AFailedWriteRemovesItsTemporaryAndKeepsThePreviousFile) {
  const fs::path file = root_ / "weights.bin";
  write_file_atomically(file, "old");
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  try {
    write_file_atomically(file, std::string(1 << 20, 'x'));
  } catch (const IoError& e) {
    error = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);
  EXPECT_NE(error.find("cannot write " + file.string()), std::string::npos) << error;
  EXPECT_EQ(testing::read_text(file), "old");
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(root_)) left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"weights.bin"});
}

// A run is named after what ran, whatever blueprint file it came from and whatever it was renamed.
TEST(RunName, SaysWhatRanNotWhichFileItCameFrom) {
  const auto name_of = [](const std::vector<std::string>& overrides) {
    return run_name(parse_blueprint(std::string(default_blueprint_text()), "built-in", overrides));
  };
  EXPECT_EQ(name_of({}), "lenet5-fashion-mnist-none");
  EXPECT_EQ(name_of({"model=resnet18", "dataset.format=cifar10", "dataset.path=data/c10", "transport=ring"}),
            "resnet18-cifar10-ring");
  EXPECT_EQ(name_of({"name=my-study", "model=mlp", "dataset.path=/srv/MNIST/"}), "mlp-mnist-none");
  EXPECT_EQ(name_of({"dataset.path=/tmp/synthetic"}), "lenet5-idx-none");
  EXPECT_EQ(name_of({"engine=pytorch", "transport=ddp", "dataset.format=cifar100"}), "lenet5-cifar100-pytorch-ddp");
  EXPECT_EQ(name_of({"device=cuda"}), "lenet5-fashion-mnist-none-cuda");
}

TEST_F(RunDirectoryTest, TakesTheNameAndATimeAndNeverReusesADirectory) {
  const RunDirectory first = RunDirectory::create(root_, "mlp-mnist-ring");
  const RunDirectory second = RunDirectory::create(root_, "mlp-mnist-ring");
  EXPECT_EQ(first.id().rfind("mlp-mnist-ring-", 0), 0u) << first.id();
  EXPECT_NE(first.path(), second.path());
  EXPECT_TRUE(fs::is_directory(second.path()));
}

}  // namespace
}  // namespace dtbench
