#pragma once
// What the data tests share: a fresh directory per test with a synthetic-data writer, sample and
// error checks, an in-memory data set and one epoch read through a loader.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/data/loader.h"
#include "core/data/normalization.h"
#include "core/data/synthetic.h"
#include "core/util/error.h"

namespace dtbench::data_testing {

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
inline void expect_same_samples(const Dataset& data, const SynthSplit& split, const Shape& shape) {
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

inline void expect_input_error(const std::function<void()>& action, const std::vector<std::string>& fragments) {
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
inline std::shared_ptr<const Dataset> make_dataset(int64_t count, Shape shape, int64_t classes,
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

inline Epoch read_epoch(Loader& loader, int64_t epoch) {
  Epoch result;
  loader.start_epoch(epoch);
  while (const Batch* batch = loader.next()) {
    result.indices.insert(result.indices.end(), batch->indices.begin(), batch->indices.end());
    result.labels.insert(result.labels.end(), batch->labels.begin(), batch->labels.end());
    result.images.insert(result.images.end(), batch->images.span().begin(), batch->images.span().end());
  }
  return result;
}

inline Normalization unit_norm(int64_t channels) {
  return {std::vector<float>(static_cast<size_t>(channels), 0.0f), std::vector<float>(static_cast<size_t>(channels), 1.0f)};
}

}  // namespace dtbench::data_testing
