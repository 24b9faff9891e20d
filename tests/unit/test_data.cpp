// Data sets, synthetic writers, sharding and the prefetching loader.
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

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class DataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           fmt::format("dtbench-test-data-{}-{}-{}", info->test_suite_name(), info->name(), ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  SynthOptions synth(const std::string& format, int64_t train, int64_t test, bool gzip = false,
                     const std::string& sub = "set") const {
    SynthOptions options;
    options.format = format;
    options.path = path(sub);
    options.train_samples = train;
    options.test_samples = test;
    options.seed = 7;
    options.gzip = gzip;
    return options;
  }

  fs::path dir_;
};

// Every sample of `data` equals the generated split, through read_sample and (cached) pixels().
void expect_same_samples(const Dataset& data, const SynthSplit& split, const Shape& shape) {
  ASSERT_EQ(data.sample_shape(), shape);
  ASSERT_EQ(data.labels(), split.labels);
  const int64_t bytes = element_count(shape);
  std::vector<uint8_t> sample(static_cast<size_t>(bytes));
  for (int64_t i = 0; i < data.size(); ++i) {
    data.read_sample(i, sample.data());
    ASSERT_TRUE(std::equal(sample.begin(), sample.end(), split.pixels.begin() + i * bytes)) << "sample " << i;
  }
  if (data.cached()) {
    EXPECT_TRUE(std::ranges::equal(data.pixels(), split.pixels));
  }
}

void expect_input_error(const std::function<void()>& action, const std::vector<std::string>& fragments) {
  try {
    action();
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& error) {
    for (const std::string& fragment : fragments) {
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)
          << "'" << fragment << "' missing from: " << error.what();
    }
  }
}

// An in-memory data set whose sample i has every pixel of channel c equal to value(i, c, p).
std::shared_ptr<const Dataset> make_dataset(int64_t count, Shape shape, int64_t classes,
                                            const std::function<uint8_t(int64_t, int64_t)>& value) {
  DatasetParts parts;
  parts.name = "memory";
  parts.sample_shape = shape;
  parts.classes = classes;
  const int64_t bytes = element_count(shape);
  for (int64_t i = 0; i < count; ++i) {
    parts.labels.push_back(static_cast<int32_t>(i % classes));
    for (int64_t p = 0; p < bytes; ++p) parts.pixels.push_back(value(i, p));
  }
  return std::make_shared<const Dataset>(std::move(parts));
}

// All batches of one epoch: indices in order, and the images.
struct Epoch {
  std::vector<int64_t> indices;
  std::vector<int32_t> labels;
  std::vector<float> images;
};

Epoch read_epoch(Loader& loader, int64_t epoch) {
  Epoch result;
  loader.start_epoch(epoch);
  while (const Batch* batch = loader.next()) {
    result.indices.insert(result.indices.end(), batch->indices.begin(), batch->indices.end());
    result.labels.insert(result.labels.end(), batch->labels.begin(), batch->labels.end());
    result.images.insert(result.images.end(), batch->images.span().begin(), batch->images.span().end());
  }
  return result;
}

// ---- Round trips: synthetic writer -> reader, every format, cache on and off.

TEST_F(DataTest, RoundTripEveryFormat) {
  struct Case {
    std::string format;
    bool gzip;
    Shape shape;
    int64_t classes;
  };
  const std::vector<Case> cases = {{"idx", false, {1, 28, 28}, 10},
                                   {"idx", true, {1, 28, 28}, 10},
                                   {"cifar10", false, {3, 32, 32}, 10},
                                   {"cifar100", false, {3, 32, 32}, 100}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.format + (c.gzip ? " gz" : ""));
    const SynthOptions options = synth(c.format, 203, 57, c.gzip, c.format + (c.gzip ? "-gz" : ""));
    const std::vector<std::string> written = write_synthetic(options);
    const SynthData expected = generate_synthetic(options);
    if (c.gzip) {
      for (const std::string& file : written) {
        std::ifstream in(file, std::ios::binary);
        EXPECT_EQ(in.get(), 0x1f);
        EXPECT_EQ(in.get(), 0x8b);
      }
    }
    for (bool cache : {true, false}) {
      SCOPED_TRACE(cache ? "cached" : "from file");
      const DatasetPair pair = open_dataset({c.format, options.path, cache});
      EXPECT_EQ(pair.train->cached(), cache);
      EXPECT_EQ(pair.train->size(), 203);
      EXPECT_EQ(pair.test->size(), 57);
      EXPECT_EQ(pair.train->classes(), c.classes);
      expect_same_samples(*pair.train, expected.train, c.shape);
      expect_same_samples(*pair.test, expected.test, c.shape);
    }
  }
}

TEST_F(DataTest, CifarFilesHaveTheUsualNamesAndLayout) {
  const SynthOptions options = synth("cifar10", 12, 3);
  const std::vector<std::string> written = write_synthetic(options);
  ASSERT_EQ(written.size(), 6u);
  EXPECT_EQ(fs::path(written[0]).filename(), "data_batch_1.bin");
  EXPECT_EQ(fs::path(written[5]).filename(), "test_batch.bin");
  // 12 samples over 5 batches: 3, 3, 2, 2, 2 records of 3073 bytes.
  EXPECT_EQ(fs::file_size(written[0]), 3u * 3073u);
  EXPECT_EQ(fs::file_size(written[4]), 2u * 3073u);

  const SynthOptions options100 = synth("cifar100", 4, 2, false, "c100");
  write_synthetic(options100);
  const SynthData expected = generate_synthetic(options100);
  std::ifstream in(path("c100/train.bin"), std::ios::binary);
  const int coarse = in.get(), fine = in.get();
  EXPECT_EQ(fine, expected.train.labels[0]);
  EXPECT_EQ(coarse, expected.train.labels[0] / 5);
}

TEST_F(DataTest, SyntheticIsSeededAndLearnable) {
  SynthOptions options = synth("cifar10", 200, 50);
  const SynthData a = generate_synthetic(options), b = generate_synthetic(options);
  EXPECT_EQ(a.train.pixels, b.train.pixels);
  options.seed = 8;
  EXPECT_NE(generate_synthetic(options).train.pixels, a.train.pixels);
  // Nearest class mean (from the training set) classifies the test set far above chance.
  const int64_t bytes = element_count(a.sample_shape);
  std::vector<double> means(static_cast<size_t>(a.classes * bytes), 0.0);
  std::vector<int> counts(static_cast<size_t>(a.classes), 0);
  for (size_t i = 0; i < a.train.labels.size(); ++i) {
    ++counts[static_cast<size_t>(a.train.labels[i])];
    for (int64_t p = 0; p < bytes; ++p) means[a.train.labels[i] * bytes + p] += a.train.pixels[i * bytes + p];
  }
  int correct = 0;
  for (size_t i = 0; i < a.test.labels.size(); ++i) {
    double best = 1e300;
    int32_t guess = -1;
    for (int32_t k = 0; k < a.classes; ++k) {
      double distance = 0;
      for (int64_t p = 0; p < bytes; ++p) {
        const double d = a.test.pixels[i * bytes + p] - means[k * bytes + p] / counts[static_cast<size_t>(k)];
        distance += d * d;
      }
      if (distance < best) best = distance, guess = k;
    }
    correct += guess == a.test.labels[i];
  }
  EXPECT_GT(correct, 40);  // chance: 5 of 50
}

// ---- Corrupt and missing files.

TEST_F(DataTest, TruncatedFilesAreInputErrors) {
  for (bool gzip : {false, true}) {
    const SynthOptions options = synth("idx", 20, 5, gzip, gzip ? "gz" : "plain");
    write_synthetic(options);
    const std::string images = options.path + "/train-images-idx3-ubyte" + (gzip ? ".gz" : "");
    const std::string labels = options.path + "/train-labels-idx1-ubyte" + (gzip ? ".gz" : "");
    fs::resize_file(images, fs::file_size(images) - 30);
    for (bool cache : {true, false}) {
      SCOPED_TRACE(fmt::format("gzip {} cache {}", gzip, cache));
      expect_input_error([&] { read_idx(images, labels, 10, cache); }, {images});
      if (!gzip) expect_input_error([&] { read_idx(images, labels, 10, cache); }, {"truncated", "15680", "15650"});
    }
    fs::resize_file(images, 7);
    expect_input_error([&] { read_idx(images, labels, 10, true); }, {images});
  }
  const SynthOptions options = synth("cifar10", 10, 3, false, "cifar");
  write_synthetic(options);
  const std::string test = path("cifar/test_batch.bin");
  fs::resize_file(test, 3 * 3073 - 5);
  for (bool cache : {true, false}) {
    expect_input_error([&] { open_dataset({"cifar10", options.path, cache}); },
                       {test, "not a multiple of the record size 3073", "9214"});
  }
}

TEST_F(DataTest, WrongMagicIsAnInputError) {
  const SynthOptions options = synth("idx", 5, 5);
  write_synthetic(options);
  const std::string images = options.path + "/train-images-idx3-ubyte";
  const std::string labels = options.path + "/train-labels-idx1-ubyte";
  const std::string test_images = options.path + "/t10k-images-idx3-ubyte";
  const std::string test_labels = options.path + "/t10k-labels-idx1-ubyte";
  const auto overwrite_magic = [](const std::string& file, const char* magic) {
    std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
    stream.write(magic, 4);
  };
  overwrite_magic(images, "\x00\x00\x08\x01");  // the labels' magic
  overwrite_magic(test_labels, "\x00\x00\x08\x03");  // the images' magic
  for (bool cache : {true, false}) {
    expect_input_error([&] { read_idx(images, labels, 10, cache); }, {images, "magic", "0x00000803", "0x00000801"});
    expect_input_error([&] { read_idx(test_images, test_labels, 10, cache); },
                       {test_labels, "magic", "expected 0x00000801", "found 0x00000803"});
  }
}

TEST_F(DataTest, LabelOutOfRangeIsAnInputError) {
  write_idx_labels(path("labels"), std::vector<int32_t>{1, 2, 12}, false);
  write_idx_images(path("images"), std::vector<uint8_t>(3 * 4), 3, 2, 2, false);
  expect_input_error([&] { read_idx(path("images"), path("labels"), 10, true); },
                     {path("labels"), "label 12", "0..9"});

  std::vector<uint8_t> records(2 * 3073, 0);
  records[3073] = 10;  // second record's label
  {
    std::ofstream out(path("batch.bin"), std::ios::binary);
    out.write(reinterpret_cast<const char*>(records.data()), static_cast<std::streamsize>(records.size()));
  }
  for (bool cache : {true, false}) {
    expect_input_error([&] { read_cifar({path("batch.bin")}, CifarKind::cifar10, cache); },
                       {path("batch.bin"), "record 1", "label 10", "0..9"});
  }
  // The same bytes are 1 CIFAR-100 record of 3074 bytes with 3072 left over.
  expect_input_error([&] { read_cifar({path("batch.bin")}, CifarKind::cifar100, true); },
                     {path("batch.bin"), "3074"});
}

TEST_F(DataTest, CountMismatchIsAnInputError) {
  write_idx_labels(path("labels.gz"), std::vector<int32_t>{1, 2}, true);
  write_idx_images(path("images"), std::vector<uint8_t>(3 * 4), 3, 2, 2, false);
  expect_input_error([&] { read_idx(path("images"), path("labels.gz"), 10, true); },
                     {path("images"), path("labels.gz"), "count 3", "count 2"});
}

TEST_F(DataTest, MissingFilesAreInputErrors) {
  expect_input_error([&] { read_idx(path("nope"), path("nope2"), 10, true); }, {path("nope2")});
  expect_input_error([&] { read_cifar({path("nope.bin")}, CifarKind::cifar10, false); }, {path("nope.bin")});
  fs::create_directories(path("empty"));
  fs::create_directories(path("half"));
  expect_input_error([&] { open_dataset({"idx", path("empty")}); },
                     {path("empty"), "train-images-idx3-ubyte, train-images-idx3-ubyte.gz",
                      "t10k-labels-idx1-ubyte.gz"});
  expect_input_error([&] { open_dataset({"cifar10", path("empty")}); },
                     {path("empty"), "data_batch_1.bin", "test_batch.bin"});
  expect_input_error([&] { open_dataset({"cifar100", path("empty")}); }, {"train.bin", "test.bin"});
  expect_input_error([&] { open_dataset({"cifar10", path("absent")}); }, {path("absent")});
  expect_input_error([&] { open_dataset({"tiff", path("empty")}); }, {"tiff"});
  // Only the training set there: the test file is named as missing.
  write_idx_images(path("half/train-images-idx3-ubyte.gz"), std::vector<uint8_t>(784), 1, 28, 28, true);
  write_idx_labels(path("half/train-labels-idx1-ubyte"), std::vector<int32_t>{3}, false);
  expect_input_error([&] { open_dataset({"idx", path("half")}); },
                     {"not found: t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz]"});
  // One batch missing: named.
  const SynthOptions options = synth("cifar10", 10, 3);
  write_synthetic(options);
  fs::remove(options.path + "/data_batch_3.bin");
  expect_input_error([&] { open_dataset({"cifar10", options.path}); }, {"not found: data_batch_3.bin", "looked for data_batch_1.bin"});
}

// A path of the wrong kind is named as such, not as absent or incomplete.
TEST_F(DataTest, AFileForTheDirectoryOrADirectoryForAFileIsNamedAsSuch) {
  write_idx_labels(path("labels"), std::vector<int32_t>{1}, false);
  expect_input_error([&] { open_dataset({"idx", path("labels")}); }, {path("labels") + " is a file, not a directory"});
  fs::create_directories(path("idx/train-images-idx3-ubyte"));
  expect_input_error([&] { open_dataset({"idx", path("idx")}); },
                     {path("idx/train-images-idx3-ubyte") + " is a directory, not a data file"});
  const SynthOptions options = synth("cifar10", 10, 3);
  write_synthetic(options);
  fs::remove(options.path + "/test_batch.bin");
  fs::create_directories(options.path + "/test_batch.bin");
  expect_input_error([&] { open_dataset({"cifar10", options.path}); },
                     {options.path + "/test_batch.bin is a directory, not a data file"});
}

TEST_F(DataTest, CifarDirectoryMayBeTheParent) {
  const SynthOptions options = synth("cifar10", 10, 3, false, "root/cifar-10-batches-bin");
  write_synthetic(options);
  EXPECT_EQ(open_dataset({"cifar10", path("root")}).train->size(), 10);
}

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

Normalization unit_norm(int64_t channels) {
  return {std::vector<float>(static_cast<size_t>(channels), 0.0f), std::vector<float>(static_cast<size_t>(channels), 1.0f)};
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

// ---- The real Fashion-MNIST, where installed.

TEST(FashionMnist, ReadsTheInstalledFiles) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " is not installed";
  const DatasetPair pair = open_dataset({"idx", dir, true});
  EXPECT_EQ(pair.train->size(), 60000);
  EXPECT_EQ(pair.test->size(), 10000);
  for (const auto& data : {pair.train, pair.test}) {
    EXPECT_EQ(data->sample_shape(), (Shape{1, 28, 28}));
    EXPECT_EQ(data->classes(), 10);
    std::vector<int64_t> per_class(10, 0);
    for (int32_t label : data->labels()) {
      ASSERT_TRUE(label >= 0 && label < 10);
      ++per_class[static_cast<size_t>(label)];
    }
    for (int64_t count : per_class) EXPECT_EQ(count, data->size() / 10);  // balanced
  }
  // The test set read from an inflated temporary file matches the cached one.
  const DatasetPair streamed = open_dataset({"idx", dir, false});
  std::vector<uint8_t> sample(784);
  for (int64_t i = 0; i < 10000; i += 997) {
    streamed.test->read_sample(i, sample.data());
    EXPECT_TRUE(std::equal(sample.begin(), sample.end(), pair.test->pixels().begin() + i * 784));
  }
}

}  // namespace
}  // namespace dtbench
