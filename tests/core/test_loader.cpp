// The loader: sharding and shuffling, batches, caching and normalisation, augmentation and
// resizing, and the prefetch thread (its steady state allocates nothing).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "core/data/cifar_format.h"
#include "core/data/idx_format.h"
#include "core/data/loader.h"
#include "core/data/normalization.h"
#include "core/data/open_dataset.h"
#include "core/data/shard.h"
#include "core/data/synthetic.h"
#include "core/data/transforms.h"
#include "core/util/error.h"
#include "data_fixture.h"

// Counts heap allocations in this test program, to check the loader's steady state makes none.
namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace

// GCC 12 flags free() in a replaced operator delete as mismatched with new; the pair is malloc/free.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t bytes) {
  ++g_allocations;
  if (void* memory = std::malloc(bytes == 0 ? 1 : bytes)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, size_t) noexcept { std::free(memory); }
#pragma GCC diagnostic pop

namespace dtbench {
namespace {

using namespace data_testing;
namespace fs = std::filesystem;

// ---- Sharding and shuffling.

TEST(Shard, DisjointCoveringDeterministic) {
  const int64_t size = 103;
  const int world = 4;
  std::set<int64_t> seen;
  for (int rank = 0; rank < world; ++rank) {
    const std::vector<int64_t> shard = shard_indices(size, rank, world, 42);
    EXPECT_EQ(shard.size(), 25u);
    for (int64_t index : shard) {
      EXPECT_TRUE(index >= 0 && index < size);
      EXPECT_TRUE(seen.insert(index).second) << "sample " << index << " in two shards";
    }
    EXPECT_EQ(shard, shard_indices(size, rank, world, 42));
  }
  EXPECT_EQ(seen.size(), 100u);  // 3 dropped
  EXPECT_NE(shard_indices(size, 0, world, 42), shard_indices(size, 0, world, 43));
  // One worker sees everything.
  std::vector<int64_t> all = shard_indices(size, 0, 1, 42);
  std::sort(all.begin(), all.end());
  for (int64_t i = 0; i < size; ++i) EXPECT_EQ(all[static_cast<size_t>(i)], i);
}

TEST(Shard, BadWorldOrRankIsAnInputError) {
  expect_input_error([] { shard_indices(10, 0, 0, 1); }, {"world size 0"});
  expect_input_error([] { shard_indices(10, 4, 4, 1); }, {"rank 4", "world size 4"});
  expect_input_error([] { shard_indices(10, -1, 4, 1); }, {"rank -1"});
  expect_input_error([] { shard_indices(3, 0, 4, 1); }, {"world size 4", "3 samples"});
}


TEST(Loader, ShardsThroughTheLoaderAndShufflesEachEpoch) {
  auto data = make_dataset(50, {1, 2, 2}, 10, [](int64_t i, int64_t) { return static_cast<uint8_t>(i); });
  for (int64_t epoch : {0, 1}) {
    std::set<int64_t> union_of_shards;
    for (int rank = 0; rank < 3; ++rank) {
      Loader loader(data, {.batch = 4, .rank = rank, .world = 3, .seed = 9}, unit_norm(1));
      EXPECT_EQ(loader.shard_size(), 16);
      EXPECT_EQ(loader.batches_per_epoch(), 4);  // 16 / 4
      const Epoch e = read_epoch(loader, epoch), next = read_epoch(loader, epoch + 1),
                  again = read_epoch(loader, epoch);
      EXPECT_EQ(e.indices.size(), 16u);
      EXPECT_NE(e.indices, next.indices) << "the order should change between epochs";
      EXPECT_EQ(e.indices, again.indices) << "an epoch's order is a function of the seed";
      std::vector<int64_t> sorted = e.indices;
      std::sort(sorted.begin(), sorted.end());
      read_epoch(loader, epoch);
      EXPECT_EQ(sorted, loader.shard());
      for (size_t i = 0; i < e.indices.size(); ++i) {
        EXPECT_EQ(e.labels[i], data->labels()[static_cast<size_t>(e.indices[i])]);
        EXPECT_EQ(e.images[i * 4], static_cast<float>(e.indices[i]) / 255.0f);
      }
      for (int64_t index : sorted) EXPECT_TRUE(union_of_shards.insert(index).second);
    }
    EXPECT_EQ(union_of_shards.size(), 48u) << "epoch " << epoch;
  }
}

TEST(Loader, RanksTogetherSeeTheBatchesOfOneLargerWorker) {
  // Batch b of ranks 0..3 at batch 4 holds the samples of batch b of one worker at batch 16:
  // what makes data-parallel training compute one worker's gradients.
  auto data = make_dataset(70, {1, 1, 1}, 2, [](int64_t i, int64_t) { return static_cast<uint8_t>(i); });
  Loader single(data, {.batch = 16, .seed = 5}, unit_norm(1));
  const Epoch whole = read_epoch(single, 3);
  std::vector<Epoch> parts;
  for (int rank = 0; rank < 4; ++rank) {
    Loader loader(data, {.batch = 4, .rank = rank, .world = 4, .seed = 5}, unit_norm(1));
    EXPECT_EQ(loader.batches_per_epoch(), single.batches_per_epoch());
    parts.push_back(read_epoch(loader, 3));
  }
  for (int64_t b = 0; b < single.batches_per_epoch(); ++b) {
    std::multiset<int64_t> expected(whole.indices.begin() + 16 * b, whole.indices.begin() + 16 * (b + 1));
    std::multiset<int64_t> got;
    for (const Epoch& part : parts) got.insert(part.indices.begin() + 4 * b, part.indices.begin() + 4 * (b + 1));
    EXPECT_EQ(got, expected) << "batch " << b;
  }
}

TEST(Loader, NoShuffleAndPartialLastBatch) {
  auto data = make_dataset(10, {1, 1, 1}, 2, [](int64_t i, int64_t) { return static_cast<uint8_t>(i); });
  Loader loader(data, {.batch = 4, .shuffle = false, .drop_last = false}, unit_norm(1));
  EXPECT_EQ(loader.batches_per_epoch(), 3);
  loader.start_epoch(0);
  std::vector<int64_t> sizes;
  std::vector<int64_t> indices;
  while (const Batch* batch = loader.next()) {
    sizes.push_back(batch->images.dim(0));
    EXPECT_EQ(batch->labels.size(), static_cast<size_t>(batch->images.dim(0)));
    indices.insert(indices.end(), batch->indices.begin(), batch->indices.end());
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_EQ(indices, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(loader.next(), nullptr);
  Loader dropping(data, {.batch = 4}, unit_norm(1));
  EXPECT_EQ(dropping.batches_per_epoch(), 2);
}

TEST(Loader, ReusesTwoBuffers) {
  auto data = make_dataset(64, {3, 4, 4}, 10, [](int64_t i, int64_t p) { return static_cast<uint8_t>(i + p); });
  Loader loader(data, {.batch = 8, .augment = true}, unit_norm(3));
  std::set<const Batch*> batches;
  std::set<const float*> storage;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    loader.start_epoch(epoch);
    while (const Batch* batch = loader.next()) {
      batches.insert(batch);
      storage.insert(batch->images.data());
    }
  }
  EXPECT_EQ(batches.size(), 2u);
  EXPECT_EQ(storage.size(), 2u);
}

TEST_F(DataTest, NoHeapAllocationPerBatch) {
  const SynthOptions options = synth("cifar10", 100, 10);
  write_synthetic(options);
  for (bool cache : {true, false}) {
    const DatasetPair pair = open_dataset({"cifar10", options.path, cache});
    Loader loader(pair.train, {.batch = 8, .augment = true, .resize = 40, .drop_last = false},
                  compute_normalization(*pair.train));
    loader.start_epoch(0);
    while (loader.next() != nullptr) {
    }
    const int64_t before = g_allocations.load();
    int64_t batches = 0;
    for (int64_t epoch = 1; epoch < 4; ++epoch) {
      loader.start_epoch(epoch);
      while (loader.next() != nullptr) ++batches;
    }
    EXPECT_EQ(g_allocations.load() - before, 0) << (cache ? "cached" : "from file");
    EXPECT_EQ(batches, 3 * 13);
  }
}

TEST(Loader, BadOptionsAreInputErrors) {
  auto data = make_dataset(10, {1, 2, 2}, 2, [](int64_t, int64_t) { return uint8_t{0}; });
  expect_input_error([&] { Loader(data, {.batch = 2, .world = 0}, unit_norm(1)); }, {"world size 0"});
  expect_input_error([&] { Loader(data, {.batch = 2, .rank = 3, .world = 3}, unit_norm(1)); }, {"rank 3", "3"});
  expect_input_error([&] { Loader(data, {.batch = 1, .rank = 0, .world = 11}, unit_norm(1)); },
                     {"world size 11", "10 samples"});
  expect_input_error([&] { Loader(data, {.batch = 4, .rank = 1, .world = 3}, unit_norm(1)); },
                     {"batch size 4", "rank 1", "3 of the 10"});
  expect_input_error([&] { Loader(data, {.batch = 0}, unit_norm(1)); }, {"batch size 0"});
  expect_input_error([&] { Loader(data, {.batch = 2}, unit_norm(3)); }, {"3 channels"});
}

// ---- Cache on and off, normalisation.

TEST_F(DataTest, CachedAndUncachedGiveIdenticalBatches) {
  for (const auto& [format, gzip] : std::vector<std::pair<std::string, bool>>{{"cifar10", false}, {"idx", true}}) {
    SCOPED_TRACE(format);
    const SynthOptions options = synth(format, 150, 20, gzip, format);
    write_synthetic(options);
    const DatasetPair cached = open_dataset({format, options.path, true});
    const DatasetPair streamed = open_dataset({format, options.path, false});
    ASSERT_TRUE(cached.train->cached());
    ASSERT_FALSE(streamed.train->cached());
    const Normalization norm = compute_normalization(*cached.train);
    const Normalization norm_streamed = compute_normalization(*streamed.train);
    EXPECT_EQ(norm.mean, norm_streamed.mean);
    EXPECT_EQ(norm.stddev, norm_streamed.stddev);
    const LoaderOptions loader_options{.batch = 16, .rank = 1, .world = 2, .seed = 3, .augment = true, .resize = 40};
    Loader a(cached.train, loader_options, norm), b(streamed.train, loader_options, norm);
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      const Epoch ea = read_epoch(a, epoch), eb = read_epoch(b, epoch);
      EXPECT_EQ(ea.indices, eb.indices);
      EXPECT_EQ(ea.labels, eb.labels);
      EXPECT_EQ(ea.images, eb.images);
      EXPECT_EQ(ea.images.size(), 4u * 16 * element_count(a.sample_shape()));
    }
  }
}

TEST(Normalization, StatisticsMatchADirectComputation) {
  auto data = make_dataset(30, {2, 3, 3}, 3, [](int64_t i, int64_t p) {
    return static_cast<uint8_t>(p < 9 ? (i * 37 + p * 11) % 256 : 200);  // channel 1 is constant
  });
  const Normalization norm = compute_normalization(*data);
  ASSERT_EQ(norm.mean.size(), 2u);
  double sum = 0, sum_squares = 0;
  for (int64_t i = 0; i < 30; ++i) {
    for (int64_t p = 0; p < 9; ++p) {
      const double x = static_cast<double>((i * 37 + p * 11) % 256) / 255.0;
      sum += x;
      sum_squares += x * x;
    }
  }
  const double mean = sum / 270, stddev = std::sqrt(sum_squares / 270 - mean * mean);
  EXPECT_NEAR(norm.mean[0], mean, 1e-6);
  EXPECT_NEAR(norm.stddev[0], stddev, 1e-6);
  EXPECT_NEAR(norm.mean[1], 200.0 / 255.0, 1e-6);
  EXPECT_EQ(norm.stddev[1], 1.0f);  // constant channel: no division by zero

  // Normalised with its own statistics, an epoch has mean 0 and standard deviation 1 in channel 0.
  Loader loader(data, {.batch = 10, .shuffle = false}, norm);
  const Epoch epoch = read_epoch(loader, 0);
  double s = 0, q = 0;
  for (int64_t i = 0; i < 30; ++i) {
    for (int64_t p = 0; p < 9; ++p) {
      const double v = epoch.images[static_cast<size_t>(i * 18 + p)];
      s += v;
      q += v * v;
    }
    EXPECT_FLOAT_EQ(epoch.images[static_cast<size_t>(i * 18 + 9)], 0.0f);
  }
  EXPECT_NEAR(s / 270, 0.0, 1e-5);
  EXPECT_NEAR(q / 270, 1.0, 1e-4);
}

TEST_F(DataTest, TestSetUsesTheTrainingStatistics) {
  const SynthOptions options = synth("cifar10", 40, 20);
  write_synthetic(options);
  const DatasetPair pair = open_dataset({"cifar10", options.path});
  const Normalization train_norm = compute_normalization(*pair.train);
  Loader test(pair.test, {.batch = 20, .shuffle = false}, train_norm);
  const Batch* batch = (test.start_epoch(0), test.next());
  ASSERT_NE(batch, nullptr);
  std::vector<uint8_t> raw(3072);
  pair.test->read_sample(batch->indices[0], raw.data());
  for (int64_t c = 0; c < 3; ++c) {
    const float expected = (static_cast<float>(raw[static_cast<size_t>(c * 1024 + 5)]) / 255.0f - train_norm.mean[static_cast<size_t>(c)]) /
                           train_norm.stddev[static_cast<size_t>(c)];
    EXPECT_NEAR(batch->images.data()[c * 1024 + 5], expected, 1e-5);
  }
}

// ---- Augmentation and resizing.

TEST(Transforms, CropFlipAgainstAnIndependentComputation) {
  const int64_t c = 2, h = 5, w = 6, pad = 4;
  std::vector<uint8_t> image(static_cast<size_t>(c * h * w));
  std::iota(image.begin(), image.end(), uint8_t{1});
  std::vector<uint8_t> out(image.size());
  crop_flip(image.data(), out.data(), c, h, w, pad, {pad, pad, false});
  EXPECT_EQ(out, image);
  crop_flip(image.data(), out.data(), c, h, w, pad, {pad, pad, true});
  for (int64_t k = 0; k < c; ++k) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) EXPECT_EQ(out[(k * h + y) * w + x], image[(k * h + y) * w + (w - 1 - x)]);
    }
  }
  // Offset (dx, dy) = (pad + 1, pad - 2): out(y, x) = in(y - 2, x + 1), zero outside.
  crop_flip(image.data(), out.data(), c, h, w, pad, {pad + 1, pad - 2, false});
  for (int64_t k = 0; k < c; ++k) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        const int64_t sy = y - 2, sx = x + 1;
        const uint8_t expected = sy >= 0 && sy < h && sx < w ? image[(k * h + sy) * w + sx] : 0;
        EXPECT_EQ(out[(k * h + y) * w + x], expected);
      }
    }
  }
  Rng rng(5);
  std::set<std::tuple<int64_t, int64_t, bool>> choices;
  for (int i = 0; i < 2000; ++i) {
    const CropFlip choice = draw_crop_flip(rng, pad);
    EXPECT_TRUE(choice.dx >= 0 && choice.dx <= 2 * pad && choice.dy >= 0 && choice.dy <= 2 * pad);
    choices.insert({choice.dx, choice.dy, choice.flip});
  }
  EXPECT_EQ(choices.size(), 162u);  // every crop, flipped and not
}

TEST(Loader, AugmentKeepsTheShapeAndGivesACropOrFlipOfTheSample) {
  auto data = make_dataset(32, {3, 8, 8}, 4, [](int64_t i, int64_t p) { return static_cast<uint8_t>(1 + (i * 7 + p * 13) % 250); });
  Loader loader(data, {.batch = 8, .seed = 1, .augment = true}, unit_norm(3));
  EXPECT_EQ(loader.sample_shape(), (Shape{3, 8, 8}));
  loader.start_epoch(0);
  int flipped = 0, shifted = 0;
  while (const Batch* batch = loader.next()) {
    EXPECT_EQ(batch->images.shape(), (Shape{8, 3, 8, 8}));
    for (int64_t b = 0; b < 8; ++b) {
      std::vector<uint8_t> raw(192);
      data->read_sample(batch->indices[static_cast<size_t>(b)], raw.data());
      const float* image = batch->images.data() + b * 192;
      // Independently: which padded crop (dy, dx) and flip reproduce the output?
      bool found = false;
      for (int dy = 0; dy <= 8 && !found; ++dy) {
        for (int dx = 0; dx <= 8 && !found; ++dx) {
          for (bool flip : {false, true}) {
            bool match = true;
            for (int64_t k = 0; k < 3 && match; ++k) {
              for (int64_t y = 0; y < 8 && match; ++y) {
                for (int64_t x = 0; x < 8 && match; ++x) {
                  const int64_t sy = y + dy - 4, sx = (flip ? 7 - x : x) + dx - 4;
                  const int value = sy >= 0 && sy < 8 && sx >= 0 && sx < 8 ? raw[(k * 8 + sy) * 8 + sx] : 0;
                  match = image[(k * 8 + y) * 8 + x] == static_cast<float>(value) / 255.0f;
                }
              }
            }
            if (match) {
              found = true;
              flipped += flip;
              shifted += dx != 4 || dy != 4;
              break;
            }
          }
        }
      }
      EXPECT_TRUE(found) << "batch sample " << b;
    }
  }
  EXPECT_GT(flipped, 0);
  EXPECT_GT(shifted, 0);
}

TEST(Transforms, ResizeBilinear) {
  // Half-pixel centres: 2 -> 4 samples the input at -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
  const std::vector<float> in = {0.0f, 4.0f, 8.0f, 12.0f};  // (1, 2, 2)
  std::vector<float> out(16);
  resize_bilinear(in.data(), out.data(), 1, 2, 2, 4, 4);
  EXPECT_FLOAT_EQ(out[0], 0.0f);
  EXPECT_FLOAT_EQ(out[1], 1.0f);
  EXPECT_FLOAT_EQ(out[2], 3.0f);
  EXPECT_FLOAT_EQ(out[3], 4.0f);
  EXPECT_FLOAT_EQ(out[4], 2.0f);
  EXPECT_FLOAT_EQ(out[5], 3.0f);
  EXPECT_FLOAT_EQ(out[15], 12.0f);
  std::vector<float> same(4);
  resize_bilinear(in.data(), same.data(), 1, 2, 2, 2, 2);
  EXPECT_EQ(same, in);
}

TEST(Loader, ResizeGivesTheShapeAndKeepsAConstantImage) {
  auto data = make_dataset(12, {3, 32, 32}, 3, [](int64_t i, int64_t p) { return static_cast<uint8_t>(10 * i + p / 1024); });
  Loader loader(data, {.batch = 4, .shuffle = false, .resize = 64}, unit_norm(3));
  EXPECT_EQ(loader.sample_shape(), (Shape{3, 64, 64}));
  loader.start_epoch(0);
  while (const Batch* batch = loader.next()) {
    ASSERT_EQ(batch->images.shape(), (Shape{4, 3, 64, 64}));
    for (int64_t b = 0; b < 4; ++b) {
      for (int64_t k = 0; k < 3; ++k) {
        const float expected = static_cast<float>(10 * batch->indices[static_cast<size_t>(b)] + k) / 255.0f;
        const float* plane = batch->images.data() + (b * 3 + k) * 4096;
        for (int64_t p = 0; p < 4096; ++p) ASSERT_EQ(plane[p], expected);
      }
    }
  }
}

// ---- The prefetch thread.

TEST(Loader, ShutsDownCleanlyMidEpoch) {
  auto data = make_dataset(200, {3, 16, 16}, 10, [](int64_t i, int64_t p) { return static_cast<uint8_t>(i ^ p); });
  for (int round = 0; round < 50; ++round) {
    Loader loader(data, {.batch = 8, .seed = static_cast<uint64_t>(round), .augment = true}, unit_norm(3));
    if (round % 3 == 0) continue;  // never started
    loader.start_epoch(0);
    for (int step = 0; step < round % 5; ++step) ASSERT_NE(loader.next(), nullptr);
    if (round % 2 == 0) {
      loader.start_epoch(1);  // restarting mid-epoch gives a whole new epoch
      int64_t batches = 0;
      while (loader.next() != nullptr) ++batches;
      EXPECT_EQ(batches, loader.batches_per_epoch());
    }
  }
}

TEST_F(DataTest, AnExceptionInThePrefetchThreadReachesNext) {
  const SynthOptions options = synth("idx", 64, 8);
  write_synthetic(options);
  const DatasetPair pair = open_dataset({"idx", options.path, /*cache=*/false});
  fs::resize_file(options.path + "/train-images-idx3-ubyte", 16 + 784);  // the file shrinks under us
  Loader loader(pair.train, {.batch = 16, .shuffle = false}, unit_norm(1));
  loader.start_epoch(0);
  EXPECT_THROW(
      {
        while (loader.next() != nullptr) {
        }
      },
      IoError);
  EXPECT_THROW(loader.next(), IoError);
}

}  // namespace
}  // namespace dtbench
