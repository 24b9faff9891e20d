// `dtbench ps` as a real process, for truth: it serves workers, stops by itself once they are all
// done (leaving server-<shard>.json and a checkpoint to restore from), ends at once, failed, when a
// worker's training fails, and a server killed with SIGKILL fails the worker's next push with an
// IoError naming it, in bounded time.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "paramserver/checkpoint.h"
#include "ps_fixture.h"
#include "raw_client.h"

extern char** environ;

namespace dtbench::pstest {
namespace {

namespace fs = std::filesystem;

class PsCommand : public PsTest {
 protected:
  void SetUp() override {
    PsTest::SetUp();
    dir_ = fs::temp_directory_path() /
           ("dtbench-ps-cli-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::string synth = std::string(DTBENCH_BINARY) + " data synth --format idx --train 64 --test 16 --seed 1 --out " +
                              (dir_ / "data").string() + " > /dev/null 2>&1";
    ASSERT_EQ(std::system(synth.c_str()), 0);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  // Starts `dtbench ps` on a free port; returns the address it printed.
  std::string start(std::vector<std::string> extra) {
    std::vector<std::string> args = {DTBENCH_BINARY, "ps", "--listen", "127.0.0.1:0", "--workers", "1",
                                     "--set", "model=mlp", "--set", "dataset.path=" + (dir_ / "data").string(),
                                     "--set", "ps.key_kb=16", "--run-id", "test-run", "--output",
                                     (dir_ / "out").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    // Output to a file (a closed pipe would end the server with SIGPIPE when it next logs).
    const std::string log = (dir_ / fmt::format("server-{}.log", ++starts_)).string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT_EQ(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(20.0 * kTimeScale);
    std::string address;
    while (address.empty() && std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(log);
      for (std::string text; std::getline(in, text);) {
        const auto at = text.find("listening on ");
        if (at != std::string::npos) address = text.substr(at + 13);
      }
      if (address.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return address;
  }

  // The exit code, or -1 when it did not exit within `seconds`.
  int wait_exit(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  // A worker of the server at `address`, with the token the server wrote into its output directory.
  PsTransportOptions worker(const std::string& address, PsMode mode = PsMode::Sync) const {
    PsTransportOptions options;
    options.security.auth_token = read_token_file((dir_ / "out" / "ps.token").string());
    options.mode = mode;
    options.servers = {address};
    options.run_id = "test-run";
    options.key_float_count = kKeyFloats;
    options.timeout_seconds = 5.0 * kTimeScale;
    options.retries = 3;
    options.backoff_seconds = 0.05;
    return options;
  }

  fs::path dir_;
  pid_t pid_ = -1;
  int starts_ = 0;
};

TEST_F(PsCommand, StopsWhenItsWorkersAreDoneAndRestoresFromItsCheckpoint) {
  const std::string address = start({"--mode", "sync"});
  ASSERT_FALSE(address.empty()) << "dtbench ps did not say where it listens";
  auto model = small_model();
  {
    PsTransport transport(worker(address));
    transport.start(*model);
    for (int step = 0; step < 2; ++step) {
      compute_gradients(*model, make_batch(step, 4));
      transport.finish_step(*model, step);
    }
    transport.stop(*model);  // goodbye: the only worker is done
  }
  EXPECT_EQ(wait_exit(10.0 * kTimeScale), 0);
  std::ifstream stats_file(dir_ / "out" / "server-0.json");
  ASSERT_TRUE(stats_file.good());
  const auto stats = nlohmann::json::parse(stats_file);
  EXPECT_EQ(stats["updates"]["updates_applied"], 2);
  EXPECT_EQ(stats["run_id"], "test-run");
  const fs::path checkpoint = dir_ / "out" / "server-0.ckpt";
  ASSERT_TRUE(fs::exists(checkpoint));
  EXPECT_EQ(read_checkpoint(checkpoint.string()).second.version, 2);

  const fs::path saved = dir_ / "saved.ckpt";
  fs::copy_file(checkpoint, saved);
  const std::string again = start({"--mode", "sync", "--restore", saved.string()});
  auto resumed = small_model(77);
  PsTransport transport(worker(again));
  transport.start(*resumed);
  EXPECT_EQ(transport.versions(), std::vector<int64_t>{2});
  EXPECT_EQ(values_of(*resumed), values_of(*model));
}

TEST_F(PsCommand, AKilledServerFailsTheNextPushWithItsAddress) {
  const std::string address = start({"--mode", "async"});
  ASSERT_FALSE(address.empty());
  auto model = small_model();
  PsTransport transport(worker(address, PsMode::Async));
  transport.start(*model);
  compute_gradients(*model, make_batch(1, 4));
  transport.finish_step(*model, 0);

  kill(pid_, SIGKILL);
  EXPECT_EQ(wait_exit(5.0), 128 + SIGKILL);
  compute_gradients(*model, make_batch(2, 4));
  const auto start_time = std::chrono::steady_clock::now();
  try {
    transport.finish_step(*model, 1);
    FAIL() << "a push to a killed server succeeded";
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find(address), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("UNAVAILABLE"), std::string::npos) << error.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count(), 5.0 * kTimeScale);
}

// A worker that fails after its server died still ends promptly: telling the server is one call
// that a closed port refuses at once, bounded by its 1 s deadline whatever the network does.
TEST_F(PsCommand, AFailureReportToAServerThatIsGoneEndsPromptly) {
  const std::string address = start({"--mode", "async"});
  ASSERT_FALSE(address.empty());
  auto model = small_model();
  PsTransport transport(worker(address, PsMode::Async));
  transport.start(*model);
  kill(pid_, SIGKILL);
  EXPECT_EQ(wait_exit(5.0), 128 + SIGKILL);
  const auto start_time = std::chrono::steady_clock::now();
  transport.abandon("diverged: loss is NaN at step 3");  // noexcept: a throw would end the test
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count(), 2.0 * kTimeScale);
}

TEST_F(PsCommand, EndsWithAnErrorWhenNoWorkerComesWithinTheIdleTimeout) {
  const std::string address = start({"--mode", "async", "--idle-timeout-s", "1"});
  ASSERT_FALSE(address.empty()) << "dtbench ps did not start";
  const int code = wait_exit(10.0 * kTimeScale);
  EXPECT_NE(code, -1) << "an idle server went on serving";
  EXPECT_NE(code, 0);
  std::ifstream stats_file(dir_ / "out" / "server-0.json");
  ASSERT_TRUE(stats_file.good());
  const auto stats = nlohmann::json::parse(stats_file);
  EXPECT_EQ(stats["status"], "failed");
  EXPECT_NE(stats.value("error", "").find("no worker has been heard from for 1 s"), std::string::npos) << stats.dump();
}

TEST_F(PsCommand, EndsAtOnceWhenAWorkersTrainingFailsSayingWhy) {
  // The servers own the optimizer: a learning rate no model survives makes the worker's loss NaN.
  const std::string address = start({"--mode", "sync", "--set", "optimizer.lr=1e30", "--no-checkpoint"});
  ASSERT_FALSE(address.empty()) << "dtbench ps did not start";
  const auto start_time = std::chrono::steady_clock::now();
  const std::string train =
      fmt::format("{} train --set model=mlp --set dataset.path={} --set ps.key_kb=16 --set ps.run_id=test-run "
                  "--set transport=ps-sync --set ps.servers={} --set ps.auth_token_file={} --set epochs=2 --set optimizer.lr=1e30 "
                  "--set output={} --rank 0 --world 1 > {} 2>&1",
                  DTBENCH_BINARY, (dir_ / "data").string(), address, (dir_ / "out" / "ps.token").string(),
                  (dir_ / "runs").string(), (dir_ / "worker.log").string());
  EXPECT_NE(std::system(train.c_str()), 0) << "the worker trained on with a NaN loss";
  // The idle timeout is 300 s: the server must have been told, not have waited.
  const int code = wait_exit(10.0 * kTimeScale);
  EXPECT_NE(code, -1) << "the server went on serving a run whose only worker failed";
  EXPECT_NE(code, 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count(), 60.0);
  std::ifstream stats_file(dir_ / "out" / "server-0.json");
  ASSERT_TRUE(stats_file.good());
  const auto stats = nlohmann::json::parse(stats_file);
  EXPECT_EQ(stats["status"], "failed");
  EXPECT_NE(stats.value("error", "").find("worker 0 failed: diverged: loss is"), std::string::npos) << stats.dump();
}

TEST_F(PsCommand, WritesAPrivateTokenFileAndRequiresTheToken) {
  const std::string address = start({"--mode", "sync"});
  ASSERT_FALSE(address.empty());
  const fs::path token_file = dir_ / "out" / "ps.token";
  ASSERT_TRUE(fs::exists(token_file)) << "no token file beside the server's report";
  EXPECT_EQ(fs::status(token_file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  const std::string token = read_token_file(token_file.string());
  EXPECT_EQ(token.size(), 64u);
  EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos) << token;
  RawClient raw(address);
  EXPECT_EQ(raw.register_worker("", 0).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(raw.shutdown("", -1).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(raw.register_worker(token, 0).ok());
}

TEST_F(PsCommand, ATokenOnTheCommandLineWorksWithAWarning) {
  const std::string address = start({"--mode", "sync", "--auth-token", "on-the-command-line"});
  ASSERT_FALSE(address.empty());
  EXPECT_TRUE(RawClient(address).register_worker("on-the-command-line", 0).ok());
  std::ifstream log(dir_ / fmt::format("server-{}.log", starts_));
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("--auth-token puts the token on the command line"), std::string::npos) << text;
}

TEST_F(PsCommand, InsecureServesWithoutAToken) {
  const std::string address = start({"--mode", "sync", "--insecure"});
  ASSERT_FALSE(address.empty());
  EXPECT_FALSE(fs::exists(dir_ / "out" / "ps.token"));
  EXPECT_TRUE(RawClient(address).register_worker("", 0).ok());
}

}  // namespace
}  // namespace dtbench::pstest
