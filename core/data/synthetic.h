#pragma once
// Synthetic data sets in the real formats, for `dtbench data synth`: each class has a random,
// smooth prototype image (a coarse random grid, each cell 4x4 pixels) and a sample is its class's
// prototype plus Gaussian pixel noise, so a network can learn it and accuracy rises above chance.
// The same options give the same bytes everywhere (seeded Rng).
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor/tensor.h"

namespace dtbench {

struct SynthOptions {
  std::string format;  // "idx" (1x28x28, 10 classes) | "cifar10" (3x32x32, 10) | "cifar100" (3x32x32, 100)
  std::string path;    // directory to write into; created if missing
  int64_t train_samples = 1000;
  int64_t test_samples = 200;
  uint64_t seed = 0;
  bool gzip = false;        // idx: write .gz files
  float noise_std = 48.0f;  // pixel noise, in 0..255 units
};

struct SynthSplit {
  std::vector<int32_t> labels;  // (N), balanced across classes, in random order
  std::vector<uint8_t> pixels;  // (N, C, H, W)
};

struct SynthData {
  Shape sample_shape;  // (C, H, W)
  int64_t classes = 0;
  SynthSplit train;
  SynthSplit test;
};

// The samples write_synthetic writes for these options (InputError for a bad format or count).
SynthData generate_synthetic(const SynthOptions& options);

// Writes the data set in its format with the usual file names (the names open_dataset looks
// for) and returns the paths written.
std::vector<std::string> write_synthetic(const SynthOptions& options);

}  // namespace dtbench
