#include "core/data/normalization.h"

#include <cmath>

#include "core/data/dataset.h"
#include "core/util/error.h"

namespace dtbench {

Normalization compute_normalization(const Dataset& train) {
  const int64_t channels = train.sample_shape()[0];
  const int64_t plane = train.sample_shape()[1] * train.sample_shape()[2];
  if (train.size() == 0) fail_input("cannot compute normalisation statistics of the empty data set {}", train.name());
  // Exact integer sums, so the statistics do not depend on summation order.
  std::vector<uint64_t> sum(static_cast<size_t>(channels), 0), sum_squares(static_cast<size_t>(channels), 0);
  std::vector<uint8_t> sample(static_cast<size_t>(train.sample_bytes()));
  for (int64_t index = 0; index < train.size(); ++index) {
    const uint8_t* pixels = sample.data();
    if (train.cached()) {
      pixels = train.pixels().data() + index * train.sample_bytes();
    } else {
      train.read_sample(index, sample.data());
    }
    for (int64_t c = 0; c < channels; ++c) {
      uint64_t s = 0, q = 0;
      for (int64_t p = 0; p < plane; ++p) {
        const uint64_t value = pixels[c * plane + p];
        s += value;
        q += value * value;
      }
      sum[static_cast<size_t>(c)] += s;
      sum_squares[static_cast<size_t>(c)] += q;
    }
  }
  Normalization norm;
  const double count = static_cast<double>(train.size() * plane);
  for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
    const double mean = static_cast<double>(sum[c]) / count;
    const double variance = std::max(0.0, static_cast<double>(sum_squares[c]) / count - mean * mean);
    const double stddev = std::sqrt(variance);
    norm.mean.push_back(static_cast<float>(mean / 255.0));
    norm.stddev.push_back(stddev > 1e-9 ? static_cast<float>(stddev / 255.0) : 1.0f);
  }
  return norm;
}

}  // namespace dtbench
