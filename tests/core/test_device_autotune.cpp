// The device's autotune (cuDNN's algorithm search on a GPU) runs before the timed steps: a stand-in
// backend whose twins search, slowly, the first time they meet a batch size, unless autotune did
// it first. No training step may hold a search, whether the caller autotunes first (as the train
// command does, to report it apart) or leaves it to the loop; the smaller last batch is searched
// ahead too.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <thread>
#include <utility>

#include "comm/local_transport.h"
#include "core/device/device.h"
#include "core/models/models.h"
#include "core/train/trainer.h"
#include "tests/core/data_fixture.h"
#include "tests/support/wrapping_twin.h"

namespace dtbench {
namespace {

constexpr double kSearchSeconds = 0.15;  // far above a step of this MLP, even on a busy machine

// Each twin's searches, by batch size: the first pass at a batch size searches unless autotune did.
class SearchingTwin : public testing::WrappingTwin {
 public:
  SearchingTwin(std::unique_ptr<Layer> host, int& searches) : WrappingTwin(std::move(host)), searches_(searches) {}
  const Tensor& forward(const Tensor& input, Mode mode) override {
    search_once(input.dim(0));
    return WrappingTwin::forward(input, mode);
  }
  void autotune(int64_t batch) override { search_once(batch); }

 protected:
  void on_call(const std::string&) override {}

 private:
  void search_once(int64_t batch) {
    if (!searched_.insert(batch).second) return;
    ++searches_;
    std::this_thread::sleep_for(std::chrono::duration<double>(kSearchSeconds));
  }
  std::set<int64_t> searched_;
  int& searches_;
};

class SearchingBackend : public DeviceBackend {
 public:
  std::string name() const override { return "stand-in"; }
  FloatAllocator allocator() const override { return allocate_aligned; }
  std::vector<std::string> twin_kinds() const override { return {"linear"}; }
  void synchronize() override {}
  std::unique_ptr<Layer> adopt(std::unique_ptr<Layer> host) override {
    if (host->kind() != "linear") return host;
    ++twins;
    return std::make_unique<SearchingTwin>(std::move(host), searches);
  }
  int twins = 0;
  int searches = 0;
};

struct AutotunedRun {
  double autotune_seconds = 0;  // what the caller's autotune took (0 when it left it to the loop)
  std::vector<EpochResult> epochs;
};

// 44 samples in batches of 8 and a last one of 4; the test set in batches of 8.
AutotunedRun train(SearchingBackend& backend, bool autotune_first) {
  auto model = models::build("mlp", {1, 28, 28}, 10, &backend);
  model->initialize(5);
  auto data =
      data_testing::make_dataset(44, {1, 28, 28}, 10, [](int64_t i, int64_t p) { return (i * 13 + p) % 256; });
  Loader loader(data, {.batch = 8, .shuffle = false, .drop_last = false}, data_testing::unit_norm(1));
  Loader test(data, {.batch = 8, .shuffle = false}, data_testing::unit_norm(1));
  LocalTransport transport(OptimizerConfig{});
  TrainerOptions options;
  options.show_progress = false;
  Trainer trainer(*model, loader, &test, transport, options);
  AutotunedRun run;
  if (autotune_first) run.autotune_seconds = trainer.autotune();
  run.epochs = trainer.run({});
  return run;
}

void expect_no_search_in_a_step(const AutotunedRun& run) {
  ASSERT_EQ(run.epochs.size(), 1u);
  ASSERT_EQ(run.epochs[0].steps.size(), 6u);  // five of 8 and one of 4
  for (size_t i = 0; i < run.epochs[0].steps.size(); ++i) {
    EXPECT_LT(run.epochs[0].steps[i].total, kSearchSeconds) << "step " << i << " holds a search";
  }
  EXPECT_LT(run.epochs[0].train_seconds, kSearchSeconds * 6);
}

TEST(DeviceAutotune, TheSearchRunsBeforeTheFirstTimedStepAndIsReportedApart) {
  SearchingBackend backend;
  const AutotunedRun run = train(backend, /*autotune_first=*/true);
  ASSERT_GT(backend.twins, 0);
  EXPECT_EQ(backend.searches, 2 * backend.twins);  // batch 8 and batch 4, once each
  EXPECT_GE(run.autotune_seconds, 2 * backend.twins * kSearchSeconds);
  expect_no_search_in_a_step(run);
}

TEST(DeviceAutotune, TheLoopAutotunesFirstWhenTheCallerDidNot) {
  SearchingBackend backend;
  const AutotunedRun run = train(backend, /*autotune_first=*/false);
  EXPECT_EQ(backend.searches, 2 * backend.twins);
  expect_no_search_in_a_step(run);
}

}  // namespace
}  // namespace dtbench
