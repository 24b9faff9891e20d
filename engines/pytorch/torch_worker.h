#pragma once
// The dtbench side of the PyTorch engine (`engine: pytorch`): a worker trained by a Python process
// (pytorch/worker.py; its contract is pytorch/README.md) in place of the Trainer. dtbench writes
// what the worker needs — config.json, the model's parameter list and initial weights, this rank's
// sample order for every epoch, the data's normalisation — starts it, hands it each epoch's "go",
// and turns the steps and epochs it reports into the EpochResults the Trainer would have made, so
// that run directories, reports and sweeps are the same for both engines.
#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/data/dataset.h"
#include "core/data/normalization.h"
#include "core/models/model.h"
#include "core/profile/trace_writer.h"
#include "core/train/trainer.h"

namespace dtbench {

struct TorchWorkerSetup {
  nlohmann::json config;                // config.json's keys (pytorch/README.md) but the data's normalisation
  std::filesystem::path input_dir;      // written here: config, parameters, weights, orders, crops
  std::filesystem::path worker_script;  // pytorch/worker.py
  std::string python = "/usr/bin/python3";
  const Model* model = nullptr;         // its parameter list and initial weights
  const Dataset* train = nullptr;       // its size and normalisation
  int rank = 0, world = 1;
  uint64_t seed = 1;
  int64_t epochs = 1;
  bool augment = false;                 // dataset.augment: write each epoch's crops and flips
};

// The interpreter with Debian's python3-torch: $DTBENCH_PYTHON, else /usr/bin/python3 (another
// python3 first on PATH, a pyenv one, may lack it).
std::string torch_python();
// Where pytorch/worker.py is: $DTBENCH_PYTORCH_DIR, else the source tree dtbench was built from.
std::filesystem::path torch_worker_script();

class TorchWorker {
 public:
  // Writes the input, starts the worker and waits for its ready event (set-up: torch, the data,
  // the process group). IoError / InputError with the worker's own message when it fails.
  explicit TorchWorker(const TorchWorkerSetup& setup);
  ~TorchWorker();  // a worker still running is killed
  TorchWorker(const TorchWorker&) = delete;
  TorchWorker& operator=(const TorchWorker&) = delete;

  pid_t pid() const { return pid_; }          // the worker process, while it runs
  int64_t epochs() const { return epochs_; }  // that will run (steps may end the run early)
  const nlohmann::json& ready() const { return ready_; }
  // One epoch: "go", then the worker's steps until its epoch event. `clock` is the run's; the steps
  // go into `trace` too when given.
  EpochResult run_epoch(const RunClock& clock, TraceWriter* trace = nullptr);
  // After the last epoch: the done event and a zero exit. Returns the final weights' checksum. The
  // input folder goes too (its weights and orders can be large; a failed run leaves it to look at).
  std::string finish();

 private:
  nlohmann::json next_event();
  [[noreturn]] void fail(const nlohmann::json& error);
  int wait_exit();
  // The exit status, or nothing when the worker had not exited within `seconds` and was killed.
  std::optional<int> wait_exit_within(double seconds);
  static constexpr double kExitGraceSeconds = 10;

  std::filesystem::path input_dir_;
  pid_t pid_ = -1;
  FILE* events_ = nullptr;  // the worker's events, a JSON object a line
  int go_fd_ = -1;          // its stdin
  int64_t epochs_ = 0;
  nlohmann::json ready_;
};

}  // namespace dtbench
