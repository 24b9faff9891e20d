#pragma once
// Per-image transforms the loader applies, as plain functions so each can be tested alone.
// Images are (C, H, W), channel planes one after another.
#include <cstdint>
#include <vector>

#include "core/data/normalization.h"
#include "core/util/rng.h"

namespace dtbench {

// A random crop of the image zero-padded by `pad` pixels on every side, then an optional
// horizontal flip: out(c, y, x) = padded(c, y + dy, x' + dx) with x' = flip ? W - 1 - x : x,
// where padded(c, py, px) = in(c, py - pad, px - pad) inside the image and 0 outside.
// dx = dy = pad and no flip is the identity.
struct CropFlip {
  int64_t dx = 0;  // 0..2 * pad
  int64_t dy = 0;  // 0..2 * pad
  bool flip = false;
};

// dy, dx uniform in 0..2*pad, flip with probability 1/2 (in that order from `rng`).
CropFlip draw_crop_flip(Rng& rng, int64_t pad);

// The loader's augmentation (dataset.augment): the image zero-padded by this many pixels.
inline constexpr int64_t kAugmentPad = 4;

// The stream the loader draws worker `rank`'s crops and flips of `epoch` from, one draw per sample
// in the epoch's order: the same for any engine given the same seed.
Rng augment_rng(uint64_t seed, int64_t epoch, int rank);

// in, out: (C, H, W) bytes, distinct.
void crop_flip(const uint8_t* in, uint8_t* out, int64_t channels, int64_t height, int64_t width,
               int64_t pad, const CropFlip& choice);

// (C, 256): table[c * 256 + v] = (v / 255 - mean[c]) / stddev[c], computed in float in that order,
// so a lookup gives exactly the formula's value at the cost of one load per pixel.
std::vector<float> normalization_table(const Normalization& norm);

// out(c, y, x) = table[c * 256 + in(c, y, x)]; in: (C, H, W) bytes, out: (C, H, W) floats.
void normalize_image(const uint8_t* in, float* out, int64_t channels, int64_t height, int64_t width,
                     const float* table);

// Bilinear resize with half-pixel centres (as OpenCV and PyTorch's align_corners=false): output
// pixel (y, x) samples the input at ((y + 0.5) * in_h / out_h - 0.5, ...) clamped to the image.
// A constant image stays exactly constant. in: (C, in_h, in_w), out: (C, out_h, out_w).
void resize_bilinear(const float* in, float* out, int64_t channels, int64_t in_height, int64_t in_width,
                     int64_t out_height, int64_t out_width);

}  // namespace dtbench
