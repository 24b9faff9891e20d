#pragma once
// Per-channel normalisation of pixels: x' = (x / 255 - mean[c]) / stddev[c]. The statistics come
// from the training set and are used unchanged for the test set.
#include <vector>

namespace dtbench {

class Dataset;

struct Normalization {
  std::vector<float> mean;    // (C), in units of x / 255
  std::vector<float> stddev;  // (C), > 0
};

// Mean and (population) standard deviation of every pixel of each channel of `train`. A channel
// whose pixels are all equal gets stddev 1, so it maps to 0 instead of dividing by zero.
Normalization compute_normalization(const Dataset& train);

}  // namespace dtbench
