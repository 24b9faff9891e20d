// The arena's copies between a device and the host around a transport that works on the host:
// Transport::finish_step copies the gradients to the host before synchronize() (less what the
// transport copied itself) and what it wrote back after, times both as the d2h and h2d parts of
// comm, and leaves a model on the CPU and a transport that reduces on the device alone; start
// copies the initial weights a transport broadcast or pulled on the host to the device, stop the
// final ones to the host before the transport's checksum, and initialize its weights to the device. Checked with a stand-in backend that logs each move.
// And the training loop's phases end when the device has done what was queued in them, checked
// with a stand-in whose layers "queue" time that only synchronize() spends.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "comm/local_transport.h"
#include "comm/transport.h"
#include "core/device/device.h"
#include "core/models/models.h"
#include "core/train/trainer.h"
#include "tests/core/data_fixture.h"
#include "tests/support/wrapping_twin.h"

namespace dtbench {
namespace {

constexpr auto kMoveTime = std::chrono::milliseconds(3);

// Host memory throughout; each move is logged with the span it was given, and takes kMoveTime.
class LoggingBackend : public DeviceBackend {
 public:
  std::string name() const override { return "logging"; }
  FloatAllocator allocator() const override { return allocate_aligned; }
  std::vector<std::string> twin_kinds() const override { return {}; }
  void synchronize() override {}
  std::unique_ptr<Layer> adopt(std::unique_ptr<Layer> host) override { return host; }
  void move_to_host(std::span<float> values) override { record("to host", values); }
  void move_to_device(std::span<float> values) override { record("to device", values); }

  struct Move {
    std::string where;
    const float* data;
    size_t count;
  };
  std::vector<std::string> log;  // moves and the transport's own steps, in order
  std::vector<Move> moves;

 private:
  void record(const std::string& where, std::span<float> values) {
    std::this_thread::sleep_for(kMoveTime);
    log.push_back(where);
    moves.push_back({where, values.data(), values.size()});
  }
};

// A transport that logs its synchronize and update into the backend's log (when there is one).
class LoggingTransport : public LocalUpdateTransport {
 public:
  LoggingTransport(std::vector<std::string>* log, bool on_host, bool writes_weights, bool copies_own_reads = false)
      : LocalUpdateTransport(OptimizerConfig{}), log_(log), on_host_(on_host), writes_weights_(writes_weights),
        copies_own_reads_(copies_own_reads) {}
  std::string name() const override { return "logging"; }

 protected:
  void begin(Model&) override {
    if (log_ != nullptr) log_->push_back("begin");
  }
  void end(Model&) override {
    if (log_ != nullptr) log_->push_back("end");
  }
  void synchronize(Model&, int64_t, SyncTimes&) override {
    if (log_ != nullptr) log_->push_back("synchronize");
  }
  void update(Model&, int64_t) override {
    if (log_ != nullptr) log_->push_back("update");
  }
  bool synchronizes_on_host() const override { return on_host_; }
  std::span<float> written_by_synchronize(Model& model) override {
    return writes_weights_ ? model.arena().values() : model.arena().grads();
  }
  std::span<float> read_by_synchronize(Model& model) override {
    return copies_own_reads_ ? std::span<float>() : model.arena().grads();
  }

 private:
  std::vector<std::string>* log_;
  bool on_host_, writes_weights_, copies_own_reads_;
};

TEST(DeviceStaging, AHostTransportGetsTheGradientsOnTheHostAndSendsTheAveragedOnesBack) {
  LoggingBackend backend;
  auto model = models::build("mlp", {1, 28, 28}, 10, &backend);
  LoggingTransport transport(&backend.log, /*on_host=*/true, /*writes_weights=*/false);
  const SyncTimes times = transport.finish_step(*model, 0);

  EXPECT_EQ(backend.log, (std::vector<std::string>{"to host", "synchronize", "to device", "update"}));
  ASSERT_EQ(backend.moves.size(), 2u);
  const auto grads = model->arena().grads();
  for (const auto& move : backend.moves) {
    EXPECT_EQ(move.data, grads.data()) << move.where;
    EXPECT_EQ(move.count, grads.size()) << move.where;
  }
  const double move_seconds = std::chrono::duration<double>(kMoveTime).count();
  EXPECT_GE(times.d2h, move_seconds);
  EXPECT_GE(times.h2d, move_seconds);
  EXPECT_GE(times.comm, times.d2h + times.h2d);  // parts of comm, not beside it
}

TEST(DeviceStaging, AParameterServerSendsThePulledWeightsBack) {
  LoggingBackend backend;
  auto model = models::build("mlp", {1, 28, 28}, 10, &backend);
  LoggingTransport transport(&backend.log, /*on_host=*/true, /*writes_weights=*/true);
  transport.finish_step(*model, 0);
  ASSERT_EQ(backend.moves.size(), 2u);
  EXPECT_EQ(backend.moves[0].data, model->arena().grads().data());   // pushed from the host
  EXPECT_EQ(backend.moves[1].data, model->arena().values().data());  // pulled weights to the device
  EXPECT_EQ(backend.moves[1].count, model->arena().values().size());
}

// Initialize writes the weights on the host and copies them over; start copies what the transport's
// begin wrote on the host (a broadcast or a pull) to the device; stop brings the final weights to
// the host before the transport's end reads them. A transport on the device gets them there.
TEST(DeviceStaging, WeightsReachTheDeviceAfterInitializeAndStartAndTheHostBeforeEnd) {
  LoggingBackend backend;
  auto model = models::build("mlp", {1, 28, 28}, 10, &backend);
  model->initialize(3);
  LoggingTransport host(&backend.log, /*on_host=*/true, /*writes_weights=*/false);
  host.start(*model);
  host.stop(*model);
  EXPECT_EQ(backend.log, (std::vector<std::string>{"to device", "begin", "to device", "to host", "end"}));
  ASSERT_EQ(backend.moves.size(), 3u);
  for (const auto& move : backend.moves) {
    EXPECT_EQ(move.data, model->arena().values().data()) << move.where;
    EXPECT_EQ(move.count, model->arena().values().size()) << move.where;
  }

  backend.log.clear();
  LoggingTransport nccl_like(&backend.log, /*on_host=*/false, /*writes_weights=*/false);
  nccl_like.start(*model);
  nccl_like.stop(*model);
  EXPECT_EQ(backend.log, (std::vector<std::string>{"begin", "to host", "end"}));
}

// A transport that copied the buckets itself as backward made them (the ring with overlap) is
// given nothing more to copy before synchronize; what it wrote still goes back.
TEST(DeviceStaging, WhatATransportCopiedItselfIsNotCopiedAgain) {
  LoggingBackend backend;
  auto model = models::build("mlp", {1, 28, 28}, 10, &backend);
  LoggingTransport overlapping(&backend.log, /*on_host=*/true, /*writes_weights=*/false, /*copies_own_reads=*/true);
  const SyncTimes times = overlapping.finish_step(*model, 0);
  EXPECT_EQ(backend.log, (std::vector<std::string>{"synchronize", "to device", "update"}));
  EXPECT_EQ(times.d2h, 0.0);
  EXPECT_GT(times.h2d, 0.0);
}

TEST(DeviceStaging, ATransportOnTheDeviceAndAModelOnTheCpuMoveNothing) {
  LoggingBackend backend;
  auto on_device = models::build("mlp", {1, 28, 28}, 10, &backend);
  LoggingTransport nccl_like(&backend.log, /*on_host=*/false, /*writes_weights=*/false);
  const SyncTimes device_times = nccl_like.finish_step(*on_device, 0);
  EXPECT_EQ(backend.log, (std::vector<std::string>{"synchronize", "update"}));
  EXPECT_EQ(device_times.d2h, 0.0);
  EXPECT_EQ(device_times.h2d, 0.0);

  auto on_cpu = models::build("mlp", {1, 28, 28}, 10);
  LoggingTransport host(nullptr, /*on_host=*/true, /*writes_weights=*/false);
  const SyncTimes cpu_times = host.finish_step(*on_cpu, 0);
  EXPECT_EQ(cpu_times.d2h, 0.0);
  EXPECT_EQ(cpu_times.h2d, 0.0);

  // One worker exchanges nothing: its model updates where it is.
  backend.log.clear();
  LocalTransport local(OptimizerConfig{});
  const SyncTimes local_times = local.finish_step(*on_device, 0);
  EXPECT_TRUE(backend.log.empty());
  EXPECT_EQ(local_times.d2h + local_times.h2d, 0.0);
}

// A twin that runs its host layer at once but leaves kQueuedPerCall of "device work" queued.
class QueueingTwin : public testing::WrappingTwin {
 public:
  static constexpr auto kQueuedPerCall = std::chrono::milliseconds(4);
  QueueingTwin(std::unique_ptr<Layer> host, std::chrono::milliseconds& queued)
      : WrappingTwin(std::move(host)), queued_(queued) {}

 protected:
  void on_call(const std::string&) override { queued_ += kQueuedPerCall; }

 private:
  std::chrono::milliseconds& queued_;
};

// Its linear layers queue work; synchronize() is where the queued time passes.
class QueueingBackend : public DeviceBackend {
 public:
  std::string name() const override { return "queueing"; }
  FloatAllocator allocator() const override { return allocate_aligned; }
  std::vector<std::string> twin_kinds() const override { return {"linear"}; }
  void synchronize() override {
    std::this_thread::sleep_for(queued);
    queued = std::chrono::milliseconds(0);
  }
  std::unique_ptr<Layer> adopt(std::unique_ptr<Layer> host) override {
    if (host->kind() != "linear") return host;
    ++twins;
    return std::make_unique<QueueingTwin>(std::move(host), queued);
  }
  std::chrono::milliseconds queued{0};
  int twins = 0;
};

TEST(DeviceStaging, APhaseEndsWhenTheDeviceHasDoneWhatWasQueuedInIt) {
  QueueingBackend backend;
  auto model = models::build("mlp", {1, 28, 28}, 10, &backend);
  model->initialize(3);
  ASSERT_GT(backend.twins, 0);
  auto data = data_testing::make_dataset(8, {1, 28, 28}, 10, [](int64_t i, int64_t p) { return (i * 31 + p) % 256; });
  Loader loader(data, {.batch = 4, .shuffle = false}, data_testing::unit_norm(1));
  LocalTransport transport(OptimizerConfig{});
  TrainerOptions options;
  options.show_progress = false;
  Trainer trainer(*model, loader, nullptr, transport, options);
  const auto results = trainer.run({});

  ASSERT_EQ(results.size(), 1u);
  ASSERT_EQ(results[0].steps.size(), 2u);
  // Each linear layer queued kQueuedPerCall in forward and again in backward; those phases, not
  // a later one, hold that time.
  const double queued = backend.twins * std::chrono::duration<double>(QueueingTwin::kQueuedPerCall).count();
  for (const StepTimes& step : results[0].steps) {
    EXPECT_GE(step[Phase::Forward], queued);
    EXPECT_GE(step[Phase::Backward], queued);
    EXPECT_LT(step[Phase::Comm], queued);
  }
}

}  // namespace
}  // namespace dtbench
