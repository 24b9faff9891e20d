// The shard's update in one pass (update_pass.h) against the whole-shard computation it replaced,
// done here independently: the gradients summed in worker order from zero and scaled, then core's
// optimizer stepping the whole span. Bit for bit, on one thread and on several, for a shard that
// no block or range size divides; the old values untouched; the first problem of the shard named,
// an average that is not finite before a value, whichever range either falls in.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/optim/optimizer.h"
#include "paramserver/for_each_shard.h"
#include "paramserver/update_pass.h"

namespace dtbench {
namespace {

constexpr size_t kFloats = 3 * 4096 + 123;  // blocks of 4096 and ranges of whole blocks: a ragged end

std::vector<float> wave(size_t n, float frequency, float amplitude) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = amplitude * std::sin(frequency * static_cast<float>(i) + 0.3f);
  return v;
}

bool bit_identical(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Case {
  std::vector<std::vector<float>> gradients;
  std::vector<float> values;
  GradientAverage average;
};

// Three workers (sync) or one (async, scaled by 1/3).
Case make_case(bool sync) {
  Case c;
  c.values = wave(kFloats, 0.0007f, 2.0f);
  for (int w = 0; w < (sync ? 3 : 1); ++w) c.gradients.push_back(wave(kFloats, 0.001f * (w + 1), 0.1f + w));
  for (const auto& g : c.gradients) c.average.gradients.push_back(g.data());
  c.average.sum_from_zero = sync;
  c.average.scaled = true;
  c.average.scale = 1.0f / 3.0f;
  return c;
}

// The average as the updater computed it in whole-shard passes.
std::vector<float> whole_average(const Case& c) {
  std::vector<float> average(kFloats, 0.0f);
  for (size_t i = 0; i < kFloats; ++i) {
    if (c.average.sum_from_zero) {
      for (const auto& g : c.gradients) average[i] += g[i];
    } else {
      average[i] = c.gradients[0][i];
    }
    average[i] *= c.average.scale;
  }
  return average;
}

TEST(UpdatePass, OnePassIsTheWholeShardComputationBitForBit) {
  const OptimizerConfig adam{.name = "adam", .learning_rate = 0.01f, .weight_decay = 0.001f};
  const OptimizerConfig momentum{.name = "sgd", .learning_rate = 0.1f, .momentum = 0.9f};
  for (const bool sync : {true, false}) {
    for (const OptimizerConfig& config : {adam, momentum}) {
      for (const int threads : {1, 3}) {
        const Case c = make_case(sync);
        ShardThreads pool(static_cast<size_t>(threads));
        auto reference = make_optimizer(config, kFloats);
        auto optimizer = make_optimizer(config, kFloats);
        std::vector<float> expected = c.values, current = c.values, next(kFloats);
        for (int step = 0; step < 3; ++step) {  // optimizer state carried from step to step
          reference->step(expected, whole_average(c));
          optimizer->begin_step();
          const UpdatePassResult result =
              run_update_pass(*optimizer, c.average, current, next, threads > 1 ? &pool : nullptr);
          ASSERT_EQ(result.problem, "");
          EXPECT_GE(result.averaging_seconds, 0.0);
          std::swap(current, next);
        }
        EXPECT_TRUE(bit_identical(current, expected)) << config.name << (sync ? " sync" : " async") << threads;
        EXPECT_TRUE(bit_identical(optimizer->state(), reference->state())) << config.name << threads;
      }
    }
  }
}

TEST(UpdatePass, LeavesTheOldValuesAsTheyWere) {
  const Case c = make_case(true);
  auto optimizer = make_optimizer({.name = "sgd", .learning_rate = 0.5f}, kFloats);
  const std::vector<float> before = c.values;
  std::vector<float> next(kFloats);
  ShardThreads pool(2);
  optimizer->begin_step();
  ASSERT_EQ(run_update_pass(*optimizer, c.average, c.values, next, &pool).problem, "");
  EXPECT_TRUE(bit_identical(c.values, before));
  EXPECT_FALSE(bit_identical(next, before));
}

// The first problem of the shard, whichever thread's range it falls in; an average that is not
// finite is named before a value, even one earlier in the shard (the average was checked first).
TEST(UpdatePass, NamesTheShardsFirstProblemAverageBeforeValue) {
  constexpr float kHuge = std::numeric_limits<float>::max();
  for (const int threads : {1, 2, 3}) {
    ShardThreads pool(static_cast<size_t>(threads));
    ShardThreads* runner = threads > 1 ? &pool : nullptr;
    auto optimizer = make_optimizer({.name = "sgd", .learning_rate = 4.0f}, kFloats);
    Case c = make_case(true);
    c.average.scaled = false;
    // A finite gradient whose step overflows at float 100, averages that overflow at 9000 and 12000.
    c.gradients[0][100] = kHuge;
    c.gradients[0][9000] = kHuge;
    c.gradients[1][9000] = kHuge;
    c.gradients[2][12000] = -kHuge;
    c.gradients[1][12000] = -kHuge;
    std::vector<float> next(kFloats);
    optimizer->begin_step();
    EXPECT_EQ(run_update_pass(*optimizer, c.average, c.values, next, runner).problem,
              "is not finite (float 9000 of the shard: inf)")
        << threads;
    c.gradients[0][9000] = c.gradients[1][9000] = c.gradients[2][12000] = c.gradients[1][12000] = 0.0f;
    optimizer->begin_step();
    EXPECT_EQ(run_update_pass(*optimizer, c.average, c.values, next, runner).problem,
              "would make value 100 of the shard not finite")
        << threads;
  }
}

TEST(UpdatePass, ThreadsOnlyForLargeShards) {
  EXPECT_EQ(update_thread_count(64 * 1024), 1);
  EXPECT_EQ(update_thread_count(kFloatsPerUpdateThread), 1);
  EXPECT_GE(update_thread_count(16 * kFloatsPerUpdateThread), 1);
  EXPECT_LE(update_thread_count(16 * kFloatsPerUpdateThread), 4);
}

}  // namespace
}  // namespace dtbench
