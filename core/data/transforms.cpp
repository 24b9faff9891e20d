#include "core/data/transforms.h"

#include <algorithm>

namespace dtbench {

CropFlip draw_crop_flip(Rng& rng, int64_t pad) {
  CropFlip choice;
  const auto positions = static_cast<uint64_t>(2 * pad + 1);
  choice.dy = static_cast<int64_t>(rng.below(positions));
  choice.dx = static_cast<int64_t>(rng.below(positions));
  choice.flip = rng.below(2) == 1;
  return choice;
}

Rng augment_rng(uint64_t seed, int64_t epoch, int rank) {
  constexpr uint64_t kAugmentStream = 0x41554753;  // "AUGS"
  return Rng::derive(seed ^ kAugmentStream, static_cast<uint64_t>(epoch), static_cast<uint64_t>(rank));
}

void crop_flip(const uint8_t* in, uint8_t* out, int64_t channels, int64_t height, int64_t width,
               int64_t pad, const CropFlip& choice) {
  for (int64_t c = 0; c < channels; ++c) {
    const uint8_t* plane = in + c * height * width;
    for (int64_t y = 0; y < height; ++y) {
      const int64_t source_y = y + choice.dy - pad;
      uint8_t* row = out + (c * height + y) * width;
      if (source_y < 0 || source_y >= height) {
        std::fill_n(row, width, uint8_t{0});
        continue;
      }
      for (int64_t x = 0; x < width; ++x) {
        const int64_t source_x = (choice.flip ? width - 1 - x : x) + choice.dx - pad;
        row[x] = source_x >= 0 && source_x < width ? plane[source_y * width + source_x] : uint8_t{0};
      }
    }
  }
}

std::vector<float> normalization_table(const Normalization& norm) {
  std::vector<float> table(norm.mean.size() * 256);
  for (size_t c = 0; c < norm.mean.size(); ++c) {
    for (int v = 0; v < 256; ++v) table[c * 256 + static_cast<size_t>(v)] = (static_cast<float>(v) / 255.0f - norm.mean[c]) / norm.stddev[c];
  }
  return table;
}

void normalize_image(const uint8_t* in, float* out, int64_t channels, int64_t height, int64_t width,
                     const float* table) {
  const int64_t plane = height * width;
  for (int64_t c = 0; c < channels; ++c) {
    const float* lookup = table + c * 256;
    for (int64_t p = 0; p < plane; ++p) out[c * plane + p] = lookup[in[c * plane + p]];
  }
}

namespace {

// Where output coordinate `o` samples the input: the lower neighbour and the weight of the upper.
struct Tap {
  int64_t low;
  int64_t high;
  float weight;
};

Tap tap(int64_t o, int64_t in_size, int64_t out_size) {
  const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
  const float source = std::clamp((static_cast<float>(o) + 0.5f) * scale - 0.5f, 0.0f,
                                  static_cast<float>(in_size - 1));
  const auto low = static_cast<int64_t>(source);
  return {low, std::min(low + 1, in_size - 1), source - static_cast<float>(low)};
}

}  // namespace

void resize_bilinear(const float* in, float* out, int64_t channels, int64_t in_height, int64_t in_width,
                     int64_t out_height, int64_t out_width) {
  for (int64_t c = 0; c < channels; ++c) {
    const float* plane = in + c * in_height * in_width;
    for (int64_t y = 0; y < out_height; ++y) {
      const Tap ty = tap(y, in_height, out_height);
      const float* upper = plane + ty.low * in_width;
      const float* lower = plane + ty.high * in_width;
      float* row = out + (c * out_height + y) * out_width;
      for (int64_t x = 0; x < out_width; ++x) {
        const Tap tx = tap(x, in_width, out_width);
        // a + w * (b - a) rather than (1 - w) * a + w * b: equal inputs give exactly that value.
        const float top = upper[tx.low] + tx.weight * (upper[tx.high] - upper[tx.low]);
        const float bottom = lower[tx.low] + tx.weight * (lower[tx.high] - lower[tx.low]);
        row[x] = top + ty.weight * (bottom - top);
      }
    }
  }
}

}  // namespace dtbench
