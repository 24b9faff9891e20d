// Data sets and synthetic writers: every format read back, corrupt and missing files, the real
// Fashion-MNIST where installed. The loader has its own file (test_loader.cpp).
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

namespace dtbench {
namespace {

using namespace data_testing;
namespace fs = std::filesystem;

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
