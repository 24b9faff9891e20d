#include "engines/pytorch/torch_worker.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/data/shard.h"
#include "core/data/transforms.h"
#include "core/profile/comm_timings.h"
#include "core/profile/profiler.h"
#include "core/util/error.h"
#include "core/util/files.h"

extern char** environ;

namespace dtbench {

namespace {

constexpr int kEventsFd = 3;  // the worker's --events-fd

void write_binary(const std::filesystem::path& path, const void* data, size_t bytes) {
  write_file_atomically(path, std::string(static_cast<const char*>(data), bytes));
}

// The loader's crop and flip of each of the epoch's samples, in the epoch's order, as three bytes:
// dy, dx (0 .. 2 * kAugmentPad) and flip (0 or 1) — drawn from the loader's own stream, so that both
// engines train on the same augmented images.
void write_crop_flips(const std::filesystem::path& path, const TorchWorkerSetup& s, int64_t epoch, size_t samples) {
  Rng rng = augment_rng(s.seed, epoch, s.rank);
  std::string bytes;
  bytes.reserve(3 * samples);
  for (size_t i = 0; i < samples; ++i) {
    const CropFlip choice = draw_crop_flip(rng, kAugmentPad);
    bytes += static_cast<char>(choice.dy);
    bytes += static_cast<char>(choice.dx);
    bytes += static_cast<char>(choice.flip ? 1 : 0);
  }
  write_file_atomically(path, bytes);
}

// config.json, parameters.json, init-weights.bin, order-<epoch>.bin and, where the data is
// augmented, augment-<epoch>.bin, as pytorch/README.md says.
void write_input(const TorchWorkerSetup& s) {
  std::filesystem::create_directories(s.input_dir);
  nlohmann::json config = s.config;
  const Normalization norm = compute_normalization(*s.train);
  config["data"]["normalization"] = {{"mean", norm.mean}, {"std", norm.stddev}};
  write_file_atomically(s.input_dir / "config.json", config.dump(2) + "\n");
  nlohmann::json parameters = nlohmann::json::array();
  for (const Param* p : s.model->arena().params()) {
    parameters.push_back({{"name", p->name}, {"shape", p->shape}, {"offset", p->offset}, {"count", p->numel()}});
  }
  write_file_atomically(s.input_dir / "parameters.json", parameters.dump(1) + "\n");
  const auto values = s.model->arena().values();
  write_binary(s.input_dir / "init-weights.bin", values.data(), values.size_bytes());
  for (int64_t epoch = 1; epoch <= s.epochs; ++epoch) {
    const std::vector<int64_t> order = shard_indices(s.train->size(), s.rank, s.world, s.seed, epoch);
    write_binary(s.input_dir / fmt::format("order-{}.bin", epoch), order.data(), order.size() * sizeof(int64_t));
    if (s.augment) write_crop_flips(s.input_dir / fmt::format("augment-{}.bin", epoch), s, epoch, order.size());
  }
}

double number(const nlohmann::json& event, const char* key) { return event.at(key).get<double>(); }

// The step on the run's steady clock, from the worker's wall-clock start and its phases in the
// order it took them: the gap after the previous step (other), load, forward, backward, then the
// exposed comm and the update.
TraceStep trace_step(const nlohmann::json& event, const StepTimes& step, const RunClock& clock) {
  using Seconds = std::chrono::duration<double>;
  const auto at = [&](double seconds) {
    return clock.start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(Seconds(seconds));
  };
  const double start = number(event, "start_unix_s") - clock.start_unix_seconds;
  TraceStep t;
  t.load_start = at(start + step[Phase::Other]);
  t.forward_start = at(start + step[Phase::Other] + step[Phase::Load]);
  t.backward_start = at(start + step[Phase::Other] + step[Phase::Load] + step[Phase::Forward]);
  t.sync_start = at(start + step[Phase::Other] + step[Phase::Load] + step[Phase::Forward] + step[Phase::Backward]);
  t.step_end = at(start + step.total);
  t.comm_seconds = step[Phase::Comm];
  t.update_seconds = step[Phase::Update];
  return t;
}

// The step's buckets as the worker timed them (`bucket_spans`: [ready, start, end, bytes], seconds
// from backward's start), on the run's steady clock from `backward_start`. Absent: none.
void read_bucket_spans(const nlohmann::json& event, std::chrono::steady_clock::time_point backward_start,
                       std::vector<CommSpan>& spans) {
  spans.clear();
  const auto found = event.find("bucket_spans");
  if (found == event.end()) return;
  const auto at = [&](const nlohmann::json& seconds) {
    return backward_start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(seconds.get<double>()));
  };
  for (const auto& bucket : *found) {
    spans.push_back({.what = "allreduce bucket",
                     .index = static_cast<int>(spans.size()),
                     .bytes = bucket.at(3).get<int64_t>(),
                     .ready = at(bucket.at(0)),
                     .start = at(bucket.at(1)),
                     .end = at(bucket.at(2))});
  }
}

}  // namespace

std::string torch_python() {
  const char* python = std::getenv("DTBENCH_PYTHON");
  return python != nullptr && *python != '\0' ? python : "/usr/bin/python3";
}

std::filesystem::path torch_worker_script() {
  if (const char* dir = std::getenv("DTBENCH_PYTORCH_DIR"); dir != nullptr && *dir != '\0') {
    return std::filesystem::path(dir) / "worker.py";
  }
  return std::filesystem::path(DTBENCH_SOURCE_DIR) / "pytorch" / "worker.py";
}

TorchWorker::TorchWorker(const TorchWorkerSetup& setup) {
  if (!std::filesystem::exists(setup.worker_script)) {
    throw IoError(fmt::format("engine pytorch: the worker {} is not there (set DTBENCH_PYTORCH_DIR to the folder "
                              "that holds worker.py)",
                              setup.worker_script.string()));
  }
  if (access(setup.python.c_str(), X_OK) != 0) {
    fail_input("engine pytorch needs {} with PyTorch: install the Debian package python3-torch "
               "(apt-get install python3-torch; scripts/install-deps.sh does)",
               setup.python);
  }
  write_input(setup);
  input_dir_ = setup.input_dir;
  int events[2], go[2];
  if (pipe2(events, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) {
    throw IoError(fmt::format("engine pytorch: pipe: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, go[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, events[1], kEventsFd);  // dup2 clears close-on-exec
  const std::vector<std::string> args = {setup.python, setup.worker_script.string(), "--input",
                                         setup.input_dir.string(), "--events-fd", std::to_string(kEventsFd)};
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const int spawned = posix_spawn(&pid_, setup.python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(go[0]);
  close(events[1]);
  if (spawned != 0) {
    close(go[1]);
    close(events[0]);
    pid_ = -1;
    throw IoError(fmt::format("engine pytorch: starting {}: {}", setup.python, std::strerror(spawned)));
  }
  go_fd_ = go[1];
  events_ = fdopen(events[0], "r");
  ready_ = next_event();
  if (ready_.value("event", "") != "ready") fail(ready_);
  epochs_ = ready_.value("epochs", int64_t{0});
}

TorchWorker::~TorchWorker() {
  if (go_fd_ >= 0) close(go_fd_);
  if (events_ != nullptr) fclose(events_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

namespace {

// A waitpid status as a shell reports it: the exit code, or 128 + the signal.
int exit_status(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

std::optional<int> TorchWorker::wait_exit_within(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  for (;;) {
    const pid_t ended = waitpid(pid_, &status, WNOHANG);
    if (ended == pid_) break;
    if (ended < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= until) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  return exit_status(status);
}

int TorchWorker::wait_exit() {
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return exit_status(status);
}

nlohmann::json TorchWorker::next_event() {
  char* line = nullptr;
  size_t capacity = 0;
  const ssize_t length = getline(&line, &capacity, events_);
  const std::string text = length > 0 ? std::string(line, static_cast<size_t>(length)) : std::string();
  free(line);
  if (length <= 0) {
    const int status = wait_exit();
    throw IoError(fmt::format("engine pytorch: the worker ended (exit status {}) without saying why; its own output "
                              "above says more",
                              status));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw IoError(fmt::format("engine pytorch: the worker sent a line that is not JSON ({}): {}", error.what(), text));
  }
}

void TorchWorker::fail(const nlohmann::json& event) {
  if (event.value("event", "") != "error") {
    throw IoError(fmt::format("engine pytorch: the worker sent '{}' where it was not expected", event.dump()));
  }
  std::string message = "engine pytorch: " + event.value("message", std::string("(no message)"));
  const std::string kind = event.value("kind", "");
  const int status = wait_exit();
  // No torch where the worker runs is an installation to make, as a bad key is an edit.
  if (kind == "environment" && message.find("python3-torch") == std::string::npos) {
    message += " (install the Debian package python3-torch: scripts/install-deps.sh does)";
  }
  if (kind == "input" || kind == "environment" || status == 2) throw InputError(message);
  throw IoError(message);
}

EpochResult TorchWorker::run_epoch(const RunClock& clock, TraceWriter* trace) {
  if (write(go_fd_, "go\n", 3) != 3) throw IoError(fmt::format("engine pytorch: the worker's stdin: {}", std::strerror(errno)));
  EpochResult result;
  double loss_sum = 0.0;
  int64_t correct = 0;
  CommTimings comm_timings;
  std::vector<CommSpan> spans;
  for (;;) {
    const nlohmann::json event = next_event();
    const std::string kind = event.value("event", "");
    if (kind == "step") {
      StepTimes step;
      step[Phase::Load] = number(event, "load");
      step[Phase::Forward] = number(event, "forward");
      step[Phase::Backward] = number(event, "backward");
      step[Phase::Comm] = number(event, "comm");
      step[Phase::Update] = number(event, "update");
      step[Phase::Other] = number(event, "other");
      step.total = number(event, "total");
      TraceStep timeline = trace_step(event, step, clock);
      read_bucket_spans(event, timeline.backward_start, spans);
      comm_timings.record(timeline.backward_start, spans);
      if (trace != nullptr) {
        const auto in_epoch = static_cast<int64_t>(result.steps.size());
        if (trace->traces(in_epoch)) {
          timeline.comm_spans = spans;
          trace->record_step(event.at("epoch").get<int64_t>(), in_epoch, event.at("step").get<int64_t>(), timeline);
        }
      }
      result.steps.push_back(step);
      result.sync_total.comm += step[Phase::Comm];
      result.sync_total.comm_total += number(event, "comm_total");
      result.sync_total.update += step[Phase::Update];
      const int64_t images = event.at("images").get<int64_t>();
      result.images += images;
      loss_sum += number(event, "loss") * static_cast<double>(images);
      correct += event.at("correct").get<int64_t>();
      continue;
    }
    if (kind != "epoch") fail(event);
    result.epoch = event.at("epoch").get<int64_t>();
    result.phases = summarize_steps(result.steps);
    result.comm_timings = comm_timings.means();
    result.phases.epoch = result.epoch;
    result.sync_total.hidden = result.sync_total.comm_total - result.sync_total.comm;
    result.sync_total.transfer = result.sync_total.comm_total;
    for (const StepTimes& step : result.steps) result.train_seconds += step.total;
    result.images_per_second = result.train_seconds > 0 ? static_cast<double>(result.images) / result.train_seconds : 0;
    if (result.images > 0) {
      result.train = {loss_sum / static_cast<double>(result.images),
                      static_cast<double>(correct) / static_cast<double>(result.images), result.images};
    }
    result.test = {number(event, "test_loss"), number(event, "test_accuracy"), event.at("test_samples").get<int64_t>()};
    result.start_unix_seconds = number(event, "start_unix_s");
    result.steps_end_unix_seconds = number(event, "steps_end_unix_s");
    result.end_unix_seconds = number(event, "end_unix_s");
    result.span_seconds = result.end_unix_seconds - result.start_unix_seconds;
    result.evaluation_seconds = result.end_unix_seconds - result.steps_end_unix_seconds;
    result.between_seconds = std::max(0.0, result.span_seconds - result.train_seconds - result.evaluation_seconds);
    result.wall_seconds = result.end_unix_seconds - clock.start_unix_seconds;
    return result;
  }
}

std::string TorchWorker::finish() {
  close(go_fd_);
  go_fd_ = -1;
  const nlohmann::json done = next_event();
  if (done.value("event", "") != "done") fail(done);
  // Everything is said once "done" came: a worker that does not go within the grace period is stuck
  // in its interpreter's teardown (torch's threads), not in training, and is ended without failing
  // the run it finished.
  const std::optional<int> status = wait_exit_within(kExitGraceSeconds);
  if (!status) {
    spdlog::warn("engine pytorch: the worker was done but had not exited {} s later; ended it", kExitGraceSeconds);
  } else if (*status != 0) {
    throw IoError(fmt::format("engine pytorch: the worker exited with status {} after it was done", *status));
  }
  std::error_code ignored;
  std::filesystem::remove_all(input_dir_, ignored);
  return done.value("weights_checksum", std::string());
}

}  // namespace dtbench
