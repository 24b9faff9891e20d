// KeyPlacement: the same on every call (every worker and server computes it alone), every
// parameter covered exactly once, balanced shards within one key of equal.
#include <map>

#include "paramserver/wire_format.h"
#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

std::vector<std::tuple<int64_t, int64_t, int>> signature(const KeyPlacement& placement) {
  std::vector<std::tuple<int64_t, int64_t, int>> keys;
  for (const Key& key : placement.keys()) keys.emplace_back(key.arena_offset, key.float_count, key.shard);
  return keys;
}

TEST(KeyPlacement, IsIdenticalAcrossCallsAndModels) {
  for (PlacementPolicy policy : {PlacementPolicy::Balanced, PlacementPolicy::Hash}) {
    auto a = small_model(1), b = small_model(2);
    const KeyPlacement first(a->arena(), {3, 1000, policy});
    const KeyPlacement second(b->arena(), {3, 1000, policy});
    EXPECT_EQ(signature(first), signature(second));
  }
}

TEST(KeyPlacement, CoversEveryParameterExactlyOnce) {
  auto model = small_model();
  const ParamArena& arena = model->arena();
  for (PlacementPolicy policy : {PlacementPolicy::Balanced, PlacementPolicy::Hash}) {
    for (int shards : {1, 2, 3, 7}) {
      for (int64_t key_floats : {1000, 4096, 1 << 20}) {
        const KeyPlacement placement(arena, {shards, key_floats, policy});
        std::vector<int> covered(static_cast<size_t>(arena.count()), 0);
        int64_t total = 0;
        for (const Key& key : placement.keys()) {
          EXPECT_LE(key.float_count, key_floats);
          EXPECT_GT(key.float_count, 0);
          EXPECT_GE(key.shard, 0);
          EXPECT_LT(key.shard, shards);
          for (int64_t i = 0; i < key.float_count; ++i) ++covered[static_cast<size_t>(key.arena_offset + i)];
          total += key.float_count;
        }
        for (const Param* param : arena.params()) {
          for (int64_t i = 0; i < param->numel(); ++i) ASSERT_EQ(covered[static_cast<size_t>(param->offset + i)], 1);
        }
        EXPECT_EQ(total, model->parameter_count());
        int64_t shard_total = 0;
        for (int shard = 0; shard < shards; ++shard) {
          shard_total += placement.float_count_of(shard);
          // The shard's block: its keys back to back in key order.
          int64_t offset = 0;
          for (int64_t id : placement.keys_of(shard)) {
            EXPECT_EQ(placement.keys()[static_cast<size_t>(id)].shard_offset, offset);
            offset += placement.keys()[static_cast<size_t>(id)].float_count;
          }
        }
        EXPECT_EQ(shard_total, total);
      }
    }
  }
}

TEST(KeyPlacement, BalancedShardsAreContiguousAndWithinOneKeyOfEqual) {
  auto model = small_model();
  for (int shards : {2, 3, 4}) {
    const int64_t key_floats = 4096;
    const KeyPlacement placement(model->arena(), {shards, key_floats, PlacementPolicy::Balanced});
    const double ideal = static_cast<double>(placement.total_float_count()) / shards;
    for (int shard = 0; shard < shards; ++shard) {
      EXPECT_NEAR(static_cast<double>(placement.float_count_of(shard)), ideal, static_cast<double>(key_floats))
          << "shard " << shard << " of " << shards;
    }
    int previous = 0;
    for (const Key& key : placement.keys()) {
      EXPECT_GE(key.shard, previous);  // monotone: one contiguous run per shard
      previous = key.shard;
    }
  }
}

TEST(KeyPlacement, HashSpreadsKeysAndMoreShardsThanKeysLeavesSomeEmpty) {
  auto model = small_model();
  const KeyPlacement hashed(model->arena(), {4, 1024, PlacementPolicy::Hash});
  for (int shard = 0; shard < 4; ++shard) EXPECT_FALSE(hashed.keys_of(shard).empty());
  const KeyPlacement sparse(model->arena(), {64, 1 << 20, PlacementPolicy::Balanced});
  EXPECT_EQ(sparse.keys().size(), 6u);  // 3 weights + 3 biases
  int empty = 0;
  for (int shard = 0; shard < 64; ++shard) empty += sparse.keys_of(shard).empty() ? 1 : 0;
  EXPECT_GE(empty, 64 - 6) << "six keys fill at most six shards";
}

TEST(KeyPlacement, RejectsNonsense) {
  auto model = small_model();
  EXPECT_THROW(KeyPlacement(model->arena(), {0, 1000, PlacementPolicy::Balanced}), InputError);
  EXPECT_THROW(KeyPlacement(model->arena(), {2, 0, PlacementPolicy::Balanced}), InputError);
  EXPECT_THROW(parse_placement("random"), InputError);
}

TEST(WireFormat, SlicesRoundTripThroughSmallMessages) {
  auto model = small_model();
  const KeyPlacement placement(model->arena(), {2, 3000, PlacementPolicy::Balanced});
  for (int shard = 0; shard < 2; ++shard) {
    const KeyIndex from = KeyIndex::in_arena(placement, shard);
    const KeyIndex to = KeyIndex::in_shard(placement, shard);
    std::vector<float> block(static_cast<size_t>(to.float_count), -1.0f);
    SliceWriter writer(from, model->arena().values().data(), 5000);
    SliceAssembler assembler(to, block.data(), true);
    int messages = 0;
    while (!writer.done()) {
      ps::PushChunk chunk;
      writer.fill(chunk.mutable_slices());
      EXPECT_LE(chunk.ByteSizeLong(), 5000u + 64u * static_cast<size_t>(chunk.slices_size()));
      for (const auto& slice : chunk.slices()) ASSERT_EQ(assembler.absorb(slice), "");
      ++messages;
    }
    EXPECT_GT(messages, 10);
    EXPECT_EQ(assembler.incomplete(), "");
    for (int64_t id : placement.keys_of(shard)) {
      const Key& key = placement.keys()[static_cast<size_t>(id)];
      for (int64_t i = 0; i < key.float_count; ++i) {
        ASSERT_EQ(block[static_cast<size_t>(key.shard_offset + i)], model->arena().values()[static_cast<size_t>(key.arena_offset + i)]);
      }
    }
  }
}

}  // namespace
}  // namespace dtbench::pstest
