// What the training loop asks of a device backend beyond its layers, checked with stand-ins on
// the CPU: phase marks timed on the device's own clock (CUDA events on a GPU), so that a phase
// holds the work queued in it although the loop only waits for the device where the host reads
// its results; and the loss computed by the backend (the fused kernel's per-row body, run here
// over every row) in place of the host's.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/local_transport.h"
#include "core/cuda/bodies/softmax_xent.h"
#include "core/device/device.h"
#include "core/models/models.h"
#include "core/train/trainer.h"
#include "tests/core/data_fixture.h"
#include "tests/support/wrapping_twin.h"

namespace dtbench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kQueuedPerCall = std::chrono::milliseconds(4);

// A device whose work runs on a timeline of its own: each call of a linear twin adds
// kQueuedPerCall behind what is queued; a mark is reached when the work before it is done;
// synchronize() waits for all of it.
struct DeviceTimeline {
  Clock::time_point free_at = Clock::now();
  void queue(Clock::duration work) { free_at = std::max(free_at, Clock::now()) + work; }
  Clock::time_point reached() const { return std::max(free_at, Clock::now()); }
  void wait() const { std::this_thread::sleep_until(free_at); }
};

class TimelineTwin : public testing::WrappingTwin {
 public:
  TimelineTwin(std::unique_ptr<Layer> host, DeviceTimeline& timeline)
      : WrappingTwin(std::move(host)), timeline_(timeline) {}

 protected:
  void on_call(const std::string&) override { timeline_.queue(kQueuedPerCall); }

 private:
  DeviceTimeline& timeline_;
};

class TimelineMarks : public PhaseMarks {
 public:
  TimelineMarks(DeviceTimeline& timeline, int count) : timeline_(timeline), at_(static_cast<size_t>(count)) {}
  void record(int index) override { at_.at(static_cast<size_t>(index)) = timeline_.reached(); }
  std::vector<double> seconds_from_first() override {
    std::this_thread::sleep_until(at_.back());
    std::vector<double> seconds;
    for (const auto& at : at_) seconds.push_back(std::chrono::duration<double>(at - at_.front()).count());
    return seconds;
  }

 private:
  DeviceTimeline& timeline_;
  std::vector<Clock::time_point> at_;
};

// Linear layers are twins on the timeline; optionally the backend gives marks and its own loss.
class StandInBackend : public DeviceBackend {
 public:
  StandInBackend(bool marks, bool loss) : give_marks_(marks), give_loss_(loss) {}
  std::string name() const override { return "stand-in"; }
  FloatAllocator allocator() const override { return allocate_aligned; }
  std::vector<std::string> twin_kinds() const override { return {"linear"}; }
  void synchronize() override {
    ++synchronize_calls;
    timeline.wait();
  }
  std::unique_ptr<Layer> adopt(std::unique_ptr<Layer> host) override {
    if (host->kind() != "linear") return host;
    ++twins;
    return std::make_unique<TimelineTwin>(std::move(host), timeline);
  }
  void set_operator_timing(bool on) override { operator_timing.push_back(on); }
  std::unique_ptr<PhaseMarks> phase_marks(int count) override {
    return give_marks_ ? std::make_unique<TimelineMarks>(timeline, count) : nullptr;
  }
  // What the CUDA backend does, with the kernel's per-row body run on the host.
  std::optional<LossResult> softmax_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                                                  Tensor* grad_logits) override {
    if (!give_loss_) return std::nullopt;
    ++loss_calls;
    const int64_t rows = logits.dim(0), classes = logits.dim(1);
    std::vector<double> row_loss(static_cast<size_t>(rows));
    std::vector<int32_t> row_correct(static_cast<size_t>(rows));
    float* dlogits = nullptr;
    if (grad_logits != nullptr) {
      grad_.resize(logits.shape());
      *grad_logits = Tensor::view(grad_.data(), logits.shape());
      dlogits = grad_.data();
    }
    for (int64_t b = 0; b < rows; ++b) {
      cuda_bodies::softmax_xent_row(b, dlogits, logits.data(), labels.data(), 1.0f / static_cast<float>(rows),
                                    classes, row_loss.data(), row_correct.data());
    }
    LossResult result;
    for (int64_t b = 0; b < rows; ++b) {
      result.loss += row_loss[static_cast<size_t>(b)];
      result.correct += row_correct[static_cast<size_t>(b)];
    }
    result.loss /= static_cast<double>(rows);
    return result;
  }

  DeviceTimeline timeline;
  int twins = 0;
  int synchronize_calls = 0;
  int loss_calls = 0;
  std::vector<bool> operator_timing;  // each set_operator_timing, in order

 private:
  bool give_marks_, give_loss_;
  Tensor grad_;
};

struct TrainedRun {
  std::vector<EpochResult> epochs;
  std::vector<float> weights;
};

TrainedRun train_mlp(StandInBackend& backend, int64_t samples, bool time_operators = false) {
  auto model = models::build("mlp", {1, 28, 28}, 10, &backend);
  model->initialize(3);
  auto data =
      data_testing::make_dataset(samples, {1, 28, 28}, 10, [](int64_t i, int64_t p) { return (i * 31 + p) % 256; });
  Loader loader(data, {.batch = 4, .shuffle = false}, data_testing::unit_norm(1));
  Loader test(data, {.batch = 4, .shuffle = false}, data_testing::unit_norm(1));
  LocalTransport transport(OptimizerConfig{});
  TrainerOptions options;
  options.show_progress = false;
  options.time_operators = time_operators;
  Trainer trainer(*model, loader, &test, transport, options);
  TrainedRun run{trainer.run({}), {}};
  const auto values = model->arena().values();
  run.weights.assign(values.begin(), values.end());
  return run;
}

TEST(DeviceLoop, PhaseMarksPutQueuedWorkInItsPhaseWaitingOnlyWhereTheHostReads) {
  StandInBackend backend(/*marks=*/true, /*loss=*/false);
  const TrainedRun run = train_mlp(backend, 8);
  ASSERT_GT(backend.twins, 0);
  ASSERT_EQ(run.epochs.size(), 1u);
  const auto& steps = run.epochs[0].steps;
  ASSERT_EQ(steps.size(), 2u);
  const double queued = backend.twins * std::chrono::duration<double>(kQueuedPerCall).count();
  for (const StepTimes& step : steps) {
    EXPECT_GE(step[Phase::Forward], queued);
    EXPECT_GE(step[Phase::Backward], queued);
    EXPECT_LT(step[Phase::Load], queued);
    EXPECT_LT(step[Phase::Comm], queued);
  }
  // Per training step: before the host reads the logits, and before the transport starts; then
  // once per evaluation batch (2) for the logits. Without marks, every boundary waits as well.
  EXPECT_EQ(backend.synchronize_calls, 2 * 2 + 2);
  StandInBackend waiting(/*marks=*/false, /*loss=*/false);
  train_mlp(waiting, 8);
  EXPECT_GT(waiting.synchronize_calls, backend.synchronize_calls);
}

// Per-operator times on a device need each twin to wait for it (the host's clock around a layer
// holds its device work only then): the loop turns the backend's operator timing on for an
// epoch's training steps and off for its evaluation, and keeps it off when not asked.
TEST(DeviceLoop, OperatorTimingMakesTheDeviceWaitForEachTwinDuringTrainingOnly) {
  StandInBackend timed(/*marks=*/true, /*loss=*/false);
  const TrainedRun run = train_mlp(timed, 8, /*time_operators=*/true);
  EXPECT_EQ(timed.operator_timing, (std::vector<bool>{true, false}));
  EXPECT_FALSE(run.epochs.at(0).operators.empty());

  StandInBackend untimed(/*marks=*/true, /*loss=*/false);
  train_mlp(untimed, 8);
  EXPECT_EQ(untimed.operator_timing, (std::vector<bool>{false, false}));
}

TEST(DeviceLoop, TheBackendsLossIsTheOneTheLoopUsesAndTrainsAsTheHostsDoes) {
  StandInBackend host_loss(/*marks=*/false, /*loss=*/false);
  StandInBackend device_loss(/*marks=*/false, /*loss=*/true);
  const TrainedRun on_host = train_mlp(host_loss, 16);
  const TrainedRun on_device = train_mlp(device_loss, 16);
  EXPECT_EQ(host_loss.loss_calls, 0);
  EXPECT_EQ(device_loss.loss_calls, 4 + 4);  // 4 training steps, 4 evaluation batches
  const EpochResult& a = on_host.epochs.at(0);
  const EpochResult& b = on_device.epochs.at(0);
  EXPECT_NEAR(b.train.loss, a.train.loss, 1e-6 * a.train.loss);
  EXPECT_NEAR(b.test.loss, a.test.loss, 1e-6 * a.test.loss);
  EXPECT_EQ(b.test.accuracy, a.test.accuracy);
  ASSERT_EQ(on_device.weights.size(), on_host.weights.size());
  double largest = 0.0;
  for (size_t i = 0; i < on_host.weights.size(); ++i) {
    largest = std::max(largest, static_cast<double>(std::abs(on_device.weights[i] - on_host.weights[i])));
  }
  EXPECT_LT(largest, 1e-6) << "the gradients the backend's loss gave differ from the host's";
  EXPECT_NE(on_host.weights, std::vector<float>(on_host.weights.size(), 0.0f));
}

}  // namespace
}  // namespace dtbench
