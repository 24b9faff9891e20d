#pragma once
// Running the dtbench binary (or mpirun with it) from a test, and reading what it wrote.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench::testing {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line and collects its output and exit code.
inline Outcome shell(const std::string& command) {
  Outcome outcome;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) outcome.output.append(buffer, n);
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

// The environment variable `name` when set and not empty, else `built`: the tests run the programs
// built beside them unless told otherwise (the GPU kit's launchers, scripts/gpu-kit.sh, on a
// machine where the build's paths do not exist).
inline std::string chosen_or(const char* name, const char* built) {
  const char* chosen = std::getenv(name);
  return chosen != nullptr && *chosen != '\0' ? chosen : built;
}

// The dtbench binary the tests run (DTBENCH_TEST_BINARY names another).
inline std::string dtbench_binary() { return chosen_or("DTBENCH_TEST_BINARY", DTBENCH_BINARY); }

// `dtbench <arguments>`.
inline Outcome dtbench(const std::string& arguments) { return shell(dtbench_binary() + " " + arguments); }

// The start of a command line running dtbench as `ranks` MPI processes (allowed as root, more
// ranks than cores allowed); the caller sets OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) when running as root.
// DTBENCH_TEST_MPIEXEC names another mpiexec, as DTBENCH_TEST_BINARY another dtbench.
inline std::string mpirun(int ranks) {
  return chosen_or("DTBENCH_TEST_MPIEXEC", MPIEXEC) + " --allow-run-as-root --oversubscribe -np " + std::to_string(ranks) + " " + dtbench_binary();
}

inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream file(path);
  return nlohmann::json::parse(file);
}

// A command running in the background whose output is read line by line.
class Background {
 public:
  explicit Background(const std::string& command) : pipe_(popen((command + " 2>&1").c_str(), "r")) {}
  ~Background() { finish(); }
  // Reads lines until one matches; returns its first capture group.
  std::string wait_for(const std::regex& pattern) {
    char line[4096];
    while (fgets(line, sizeof(line), pipe_) != nullptr) {
      output_ += line;
      std::cmatch match;
      if (std::regex_search(line, match, pattern)) return match[1].str();
    }
    return "";
  }
  int finish() {
    if (pipe_ == nullptr) return status_;
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof(buffer), pipe_)) output_.append(buffer, n);
    const int status = pclose(pipe_);
    pipe_ = nullptr;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return status_;
  }
  const std::string& output() const { return output_; }

 private:
  FILE* pipe_;
  std::string output_;
  int status_ = -1;
};

// A whole file as text ("" if it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

inline std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);) parts.push_back(part);
  return parts;
}

// A weights.bin (save_weights): the model's values as float32.
inline std::vector<float> read_weights(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<float> values(std::filesystem::file_size(file) / sizeof(float));
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  return values;
}

// The single entry of `dir` (a run directory under an output folder), or an empty path.
inline std::filesystem::path only_child(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> found;
  if (std::filesystem::exists(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) found.push_back(entry.path());
  }
  return found.size() == 1 ? found.front() : std::filesystem::path();
}

// A fresh temporary directory per test, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("dtbench-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) +
             "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
             std::to_string(getpid()));  // two runs of one test at once do not share it
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // `dtbench data synth` into root/<name>.
  std::filesystem::path synth(const std::string& format, int train, int test, const std::string& name = "") {
    const std::filesystem::path dir = root_ / (name.empty() ? format : name);
    const Outcome r = dtbench("data synth --format " + format + " --out " + dir.string() + " --train " +
                              std::to_string(train) + " --test " + std::to_string(test) + " --seed 3");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return dir;
  }

  // A few steps of `model` by one worker (one thread, batch 16) on synthetic IDX data, into
  // `run_dir`: a measured run for the commands that read one.
  Outcome train_briefly(const std::string& model, const std::filesystem::path& run_dir, int steps) {
    const auto data = synth("idx", 64, 16);
    return dtbench("train --set model=" + model + " --set dataset.format=idx --set dataset.path=" + data.string() +
                   " --set steps=" + std::to_string(steps) + " --set batch=16 --set threads=1 --run-dir " +
                   run_dir.string());
  }

  std::filesystem::path root_;
};

// A TempDirTest whose commands start mpirun, which as root needs Open MPI's consent: the sweep's
// and the servers' own launches read it from the environment.
class MpirunTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
};

}  // namespace dtbench::testing
