#include "core/data/synthetic.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/data/cifar_format.h"
#include "core/data/idx_format.h"
#include "core/util/error.h"
#include "core/util/rng.h"

namespace dtbench {

namespace {

constexpr int64_t kCellPixels = 4;  // prototype smoothness: one random value per 4x4 cell

// (classes, C, H, W) prototypes, each cell of 4x4 pixels one uniform value in 32..223.
std::vector<float> make_prototypes(const Shape& shape, int64_t classes, Rng& rng) {
  const int64_t channels = shape[0], height = shape[1], width = shape[2];
  const int64_t cells_y = (height + kCellPixels - 1) / kCellPixels;
  const int64_t cells_x = (width + kCellPixels - 1) / kCellPixels;
  std::vector<float> prototypes(static_cast<size_t>(classes * element_count(shape)));
  std::vector<float> cells(static_cast<size_t>(cells_y * cells_x));
  float* out = prototypes.data();
  for (int64_t plane = 0; plane < classes * channels; ++plane) {
    for (float& cell : cells) cell = rng.uniform(32.0f, 224.0f);
    for (int64_t y = 0; y < height; ++y) {
      for (int64_t x = 0; x < width; ++x) *out++ = cells[static_cast<size_t>(y / kCellPixels * cells_x + x / kCellPixels)];
    }
  }
  return prototypes;
}

SynthSplit make_split(int64_t count, int64_t classes, const std::vector<float>& prototypes,
                      int64_t sample_bytes, float noise_std, Rng rng) {
  SynthSplit split;
  split.labels.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) split.labels[static_cast<size_t>(i)] = static_cast<int32_t>(i % classes);
  for (int64_t i = count - 1; i > 0; --i) {
    std::swap(split.labels[static_cast<size_t>(i)], split.labels[rng.below(static_cast<uint64_t>(i + 1))]);
  }
  split.pixels.resize(static_cast<size_t>(count * sample_bytes));
  uint8_t* out = split.pixels.data();
  for (int32_t label : split.labels) {
    const float* prototype = prototypes.data() + label * sample_bytes;
    for (int64_t p = 0; p < sample_bytes; ++p) {
      const float value = std::nearbyint(prototype[p] + noise_std * rng.normal());
      *out++ = static_cast<uint8_t>(std::clamp(value, 0.0f, 255.0f));
    }
  }
  return split;
}

std::string join_path(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

// Writes `split` as CIFAR files named `names`, dividing the samples between them as evenly as
// possible (the first files take the remainder).
void write_cifar_split(const SynthOptions& options, CifarKind kind, const SynthSplit& split,
                       const std::vector<std::string>& names, std::vector<std::string>& written) {
  const int64_t count = static_cast<int64_t>(split.labels.size());
  const int64_t files = static_cast<int64_t>(names.size());
  int64_t first = 0;
  for (int64_t f = 0; f < files; ++f) {
    const int64_t take = count / files + (f < count % files ? 1 : 0);
    const std::string path = join_path(options.path, names[static_cast<size_t>(f)]);
    write_cifar(path, kind,
                std::span<const uint8_t>(split.pixels).subspan(static_cast<size_t>(first * kCifarPixelBytes),
                                                                static_cast<size_t>(take * kCifarPixelBytes)),
                std::span<const int32_t>(split.labels).subspan(static_cast<size_t>(first), static_cast<size_t>(take)));
    written.push_back(path);
    first += take;
  }
}

void write_idx_split(const SynthOptions& options, const SynthData& data, const SynthSplit& split,
                     const std::string& prefix, std::vector<std::string>& written) {
  const std::string suffix = options.gzip ? ".gz" : "";
  const std::string images = join_path(options.path, prefix + "-images-idx3-ubyte" + suffix);
  const std::string labels = join_path(options.path, prefix + "-labels-idx1-ubyte" + suffix);
  write_idx_images(images, split.pixels, static_cast<int64_t>(split.labels.size()), data.sample_shape[1],
                   data.sample_shape[2], options.gzip);
  write_idx_labels(labels, split.labels, options.gzip);
  written.push_back(images);
  written.push_back(labels);
}

}  // namespace

SynthData generate_synthetic(const SynthOptions& options) {
  SynthData data;
  if (options.format == "idx") {
    data.sample_shape = {1, 28, 28};
    data.classes = 10;
  } else if (options.format == "cifar10" || options.format == "cifar100") {
    data.sample_shape = {3, kCifarSide, kCifarSide};
    data.classes = options.format == "cifar10" ? 10 : 100;
  } else {
    fail_input("unknown synthetic data format '{}': expected idx, cifar10 or cifar100", options.format);
  }
  if (options.train_samples < 0 || options.test_samples < 0) {
    fail_input("synthetic sample counts must not be negative: train {}, test {}", options.train_samples,
               options.test_samples);
  }
  if (options.gzip && options.format != "idx") fail_input("gzip output is only for the idx format, not {}", options.format);
  Rng prototype_rng = Rng::derive(options.seed, 1);
  const std::vector<float> prototypes = make_prototypes(data.sample_shape, data.classes, prototype_rng);
  const int64_t sample_bytes = element_count(data.sample_shape);
  data.train = make_split(options.train_samples, data.classes, prototypes, sample_bytes, options.noise_std,
                          Rng::derive(options.seed, 2));
  data.test = make_split(options.test_samples, data.classes, prototypes, sample_bytes, options.noise_std,
                         Rng::derive(options.seed, 3));
  return data;
}

std::vector<std::string> write_synthetic(const SynthOptions& options) {
  const SynthData data = generate_synthetic(options);
  std::error_code error;
  std::filesystem::create_directories(options.path, error);
  if (error) throw IoError(fmt::format("cannot create directory {}: {}", options.path, error.message()));
  std::vector<std::string> written;
  if (options.format == "idx") {
    write_idx_split(options, data, data.train, "train", written);
    write_idx_split(options, data, data.test, "t10k", written);
  } else if (options.format == "cifar10") {
    std::vector<std::string> batches;
    for (int batch = 1; batch <= 5; ++batch) batches.push_back(fmt::format("data_batch_{}.bin", batch));
    write_cifar_split(options, CifarKind::cifar10, data.train, batches, written);
    write_cifar_split(options, CifarKind::cifar10, data.test, {"test_batch.bin"}, written);
  } else {
    write_cifar_split(options, CifarKind::cifar100, data.train, {"train.bin"}, written);
    write_cifar_split(options, CifarKind::cifar100, data.test, {"test.bin"}, written);
  }
  return written;
}

}  // namespace dtbench
