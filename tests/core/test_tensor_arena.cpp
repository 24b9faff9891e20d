#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/tensor/param_arena.h"
#include "core/tensor/tensor.h"

namespace dtbench {
namespace {

TEST(Tensor, StorageIs64ByteAlignedAndZeroed) {
  for (int64_t n : {1, 3, 17, 1000}) {
    Tensor t({n, 3});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
    for (float x : t.span()) EXPECT_EQ(x, 0.0f);
  }
}

TEST(Tensor, ResizeReallocatesOnlyToGrow) {
  Tensor t({4, 8});
  const float* before = t.data();
  t.resize({2, 8});
  EXPECT_EQ(t.data(), before);
  EXPECT_EQ(t.numel(), 16);
  t.resize({8, 8});
  EXPECT_EQ(t.numel(), 64);
}

TEST(Tensor, ViewsAndReshapesShareData) {
  Tensor t({2, 6});
  Tensor v = t.reshaped({3, 4});
  v.data()[5] = 7.0f;
  EXPECT_EQ(t.data()[5], 7.0f);
  Tensor w = Tensor::view(t.data() + 6, {6});
  EXPECT_EQ(w.numel(), 6);
  EXPECT_THROW(t.reshaped({5}), std::logic_error);
  EXPECT_THROW(w.resize({7}), std::logic_error);
}

std::vector<Param> make_params() {
  std::vector<Param> params(3);
  params[0] = {.name = "a.weight", .shape = {5, 3}, .init = Init::KaimingNormal, .fan_in = 3, .fan_out = 5};
  params[1] = {.name = "a.bias", .shape = {5}, .init = Init::Zeros};
  params[2] = {.name = "b.weight", .shape = {2, 5}, .init = Init::XavierUniform, .fan_in = 5, .fan_out = 2};
  return params;
}

TEST(ParamArena, LaysParamsOutContiguouslyInOrder) {
  auto params = make_params();
  ParamArena arena;
  arena.bind({&params[0], &params[1], &params[2]});
  EXPECT_EQ(params[0].value, arena.values().data());
  EXPECT_EQ(params[0].grad, arena.grads().data());
  EXPECT_LT(params[0].offset, params[1].offset);
  EXPECT_LT(params[1].offset, params[2].offset);
  EXPECT_GE(params[1].offset, params[0].numel());
  EXPECT_LE(params[2].offset + params[2].numel(), arena.count());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(params[2].value) % 64, 0u);
}

TEST(ParamArena, SameSeedGivesBitIdenticalWeightsAndInitsFollowPolicy) {
  auto p1 = make_params(), p2 = make_params(), p3 = make_params();
  ParamArena a1, a2, a3;
  a1.bind({&p1[0], &p1[1], &p1[2]});
  a2.bind({&p2[0], &p2[1], &p2[2]});
  a3.bind({&p3[0], &p3[1], &p3[2]});
  a1.initialize(42);
  a2.initialize(42);
  a3.initialize(43);
  EXPECT_EQ(std::memcmp(a1.values().data(), a2.values().data(), a1.count() * sizeof(float)), 0);
  EXPECT_NE(std::memcmp(a1.values().data(), a3.values().data(), a1.count() * sizeof(float)), 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(p1[1].value[i], 0.0f);
  const float bound = std::sqrt(6.0f / 7.0f);
  for (int i = 0; i < 10; ++i) EXPECT_LE(std::abs(p1[2].value[i]), bound);
}

TEST(ParamArena, KaimingHasTheRightSpread) {
  Param big{.name = "w", .shape = {256, 400}, .init = Init::KaimingNormal, .fan_in = 400, .fan_out = 256};
  ParamArena arena;
  arena.bind({&big});
  arena.initialize(5);
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < big.numel(); ++i) {
    sum += big.value[i];
    sum_sq += double(big.value[i]) * big.value[i];
  }
  const double n = double(big.numel());
  EXPECT_NEAR(sum / n, 0.0, 0.003);
  EXPECT_NEAR(std::sqrt(sum_sq / n), std::sqrt(2.0 / 400), 0.002);
}

TEST(ParamArena, BucketsCoverTheArenaInReverseOrderWithoutSplittingParams) {
  auto params = make_params();
  ParamArena arena;
  arena.bind({&params[0], &params[1], &params[2]});
  const auto buckets = arena.buckets(16 * sizeof(float));
  ASSERT_FALSE(buckets.empty());
  int64_t end = arena.count();
  for (const auto& bucket : buckets) {
    EXPECT_EQ(bucket.offset + bucket.count, end);
    bool starts_at_param = false;
    for (const auto& p : params) starts_at_param |= p.offset == bucket.offset;
    EXPECT_TRUE(starts_at_param);
    end = bucket.offset;
  }
  EXPECT_EQ(end, 0);
  EXPECT_EQ(arena.buckets(int64_t{1} << 30).size(), 1u);
}

}  // namespace
}  // namespace dtbench
